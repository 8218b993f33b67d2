"""The CMake project of a generated robot's C library: CMakeLists.txt, the package's
configuration file and the pkg-config file (both as CMake templates), rendered from
templates/cmake/ for NAME_kernels.c and NAME_kernels.h in the same directory.

Text only, as every emitter: codegen.build.export writes it beside the C. The project
builds a static and a shared library (C99, -ffp-contract=fast, KK_TARGET_CLONES as the
checkout's own CMakeLists.txt does for Krang), installs them with the header, an
exported package (find_package(NAME_kernels): the imported targets
NAME_kernels::NAME_kernels and NAME_kernels::NAME_kernels_static, a version file)
and a relocatable NAME_kernels.pc (its prefix relative to ${pcfiledir}).
Deterministic: the same name and generator version give the same bytes.
"""
from __future__ import annotations

import re

from ..support.templates import template_dir

_STEM = re.compile(r"[A-Za-z][A-Za-z0-9_]*_kernels")
# template -> the file it becomes ({stem}: NAME_kernels)
TEMPLATES = {"CMakeLists.txt.j2": "CMakeLists.txt", "Config.cmake.in.j2": "{stem}Config.cmake.in",
             "pc.in.j2": "{stem}.pc.in"}


def project_version(version: str) -> str:
    """CMake's VERSION (numbers only) of a generator version: "0.2.0.dev0" -> "0.2.0"."""
    m = re.match(r"\d+(\.\d+){0,3}", version)
    if not m:
        raise ValueError(f"generator version {version!r} does not start with a number")
    return ".".join(m.group(0).split(".")[:3])


def project_files(stem: str) -> list:
    """The names of the files render_cmake_project writes for `stem` (NAME_kernels)."""
    return [out.format(stem=stem) for out in TEMPLATES.values()]


def render_cmake_project(stem: str, generator_version: str) -> dict:
    """File name -> text of the CMake project around `stem`.c and `stem`.h (stem:
    NAME_kernels), versioned as the generator (`generator_version`, e.g. codegen.__version__)."""
    if not _STEM.fullmatch(stem):
        raise ValueError(f"{stem!r} is not a generated library's name (NAME_kernels)")
    import jinja2  # here: codegen.import_urdf's cache hit imports this module, and no template engine

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir("cmake"))),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    P = stem.upper()
    ctx = dict(stem=stem, name=stem[:-len("_kernels")], P=P, symbol_prefix="${%s_SYMBOL_PREFIX}" % P,
               version=project_version(generator_version), generator_version=generator_version)
    return {out.format(stem=stem): env.get_template(t).render(**ctx) for t, out in TEMPLATES.items()}

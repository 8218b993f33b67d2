"""Builds the Cython extension from the committed generated sources:
generated/krang_kernels.c and krang_kernels/_kernels.pyx, which `make
generate` renders from templates/python/module.pyx.j2 (no SymPy needed to
install). Everything else (metadata, packages, package data) is in
pyproject.toml; why setuptools rather than scikit-build-core or meson-python
is said there."""
import importlib.util
import json
import os
import platform
import shutil
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

def _flags():
    """codegen/build/flags.py, the one place of the modules' compiler flags, loaded by
    its path: an isolated build runs this file without the project importable."""
    spec = importlib.util.spec_from_file_location("_krang_flags", Path(__file__).resolve().parent / "codegen" /
                                                  "build" / "flags.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLAGS_MODULE = _flags()
# Portable by default: the compiler's baseline target (any x86-64 / aarch64)
# with target_clones (-DKK_TARGET_CLONES in FLAGS), so AVX2 and FMA are used
# where the CPU has them. KRANG_NATIVE=1 tunes for the building machine
# instead (the wheel then runs only on CPUs like it); KRANG_PORTABLE is
# accepted and is the default.
NATIVE = FLAGS_MODULE.NATIVE if os.environ.get("KRANG_NATIVE") and not os.environ.get("KRANG_PORTABLE") else []
FLAGS, X86_FLAGS = FLAGS_MODULE.FLAGS, FLAGS_MODULE.X86_FLAGS

# The C library for C users, shipped inside the package:
# krang_kernels/include/krang_kernels.h (krang_kernels.get_include()) and
# krang_kernels/src/krang_kernels.c (krang_kernels.get_sources()).
C_FILES = {"include": "generated/krang_kernels.h", "src": "generated/krang_kernels.c"}


class BuildPyWithC(build_py):
    """build_py that also copies the generated C header and source into the package."""

    def run(self):
        super().run()
        for sub, src in C_FILES.items():
            dest = Path(self.build_lib) / "krang_kernels" / sub
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / Path(src).name)

    def get_outputs(self, include_bytecode=True):
        extra = [str(Path(self.build_lib) / "krang_kernels" / sub / Path(src).name) for sub, src in C_FILES.items()]
        return super().get_outputs(include_bytecode) + extra


KERNELS_C = Path("generated/krang_kernels.c")
PARTS = Path("krang_kernels/_kernels_parts.json")  # written by the generator with the module's source
PARTS_DIR = Path("build/krang_parts")


def kernel_parts(c_file=KERNELS_C, directory=PARTS_DIR, parts=PARTS) -> list:
    """The generated C as its parts (one translation unit each, -DKKPART=k by a
    `#define` in a two-line file that includes it), in the order of the
    generator's parts file: the heaviest first, so that the longest compiles
    start first. One part per CPU at a time: the module builds in about half
    the wall time on two cores (codegen/build/compiler.py does the same for the
    modules of URDF robots)."""
    listed = json.loads(parts.read_text(encoding="utf-8"))
    if listed["c_source"] != c_file.name:
        raise ValueError(f"{parts} lists the parts of {listed['c_source']}, not of {c_file.name}")
    if len(listed["parts"]) <= 1:  # no parts: the file as one translation unit
        return [str(c_file)]
    directory.mkdir(parents=True, exist_ok=True)
    sources = []
    for k, _ in listed["parts"]:
        path = directory / f"krang_kernels_part{int(k)}.c"
        body = f"/* part {int(k)} of krang_kernels.c (setup.py) */\n#define KKPART {int(k)}\n#include \"krang_kernels.c\"\n"
        if not path.is_file() or path.read_text(encoding="ascii") != body:
            path.write_text(body, encoding="ascii")
        sources.append(str(path))
    return sources


VALUE_FLAGS, VALUE_FLAG_PREFIXES = FLAGS_MODULE.VALUE_FLAGS, FLAGS_MODULE.VALUE_FLAG_PREFIXES
without_value_flags = FLAGS_MODULE.without_value_flags


class BuildExtConcurrent(build_ext):
    """build_ext compiling an extension's sources concurrently, in the order
    given (setuptools compiles them one after the other), without the
    environment's value-changing flags. Not codegen.build.compiler.BuildExt:
    an isolated build (pip's default) runs this file without the project on
    sys.path, so codegen is not importable."""

    def build_extensions(self):
        removed = []
        for attr in getattr(self.compiler, "executables", {}):
            command = getattr(self.compiler, attr, None)
            if isinstance(command, list):
                kept, gone = without_value_flags(command)
                setattr(self.compiler, attr, kept)
                removed += gone
        if removed:
            warnings.warn("ignoring floating-point flags from the build environment that would change "
                          f"krang_kernels' results: {' '.join(dict.fromkeys(removed))}", stacklevel=1)
        serial = self.compiler.compile
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

        def compile(sources, *args, **kwargs):
            with ThreadPoolExecutor(max(1, min(jobs, len(sources)))) as pool:
                return [obj for objs in pool.map(lambda s: serial([s], *args, **kwargs), sources) for obj in objs]

        self.compiler.compile = compile
        super().build_extensions()


def export_only_init(directory=PARTS_DIR) -> list:
    """The link flags that export PyInit__kernels alone (ELF: a version script):
    GCC exports target_clones kernels whatever -fvisibility says. As
    codegen.build.module.export_only_init."""
    if not sys.platform.startswith(("linux", "freebsd")):
        return []
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "exports.map"
    script.write_text(FLAGS_MODULE.export_map("PyInit__kernels"), encoding="ascii")
    return ["-Xlinker", f"--version-script={script.resolve()}"]


# Run as a script (pip, build, `setup.py build_ext`); tests load the helpers above with runpy.
if __name__ == "__main__":
    extension = Extension(
        "krang_kernels._kernels",
        sources=[*kernel_parts(), "krang_kernels/_kernels.pyx"],
        include_dirs=["generated", numpy.get_include()],  # "generated": the parts include krang_kernels.c
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else []) + NATIVE,
        extra_link_args=export_only_init(),
    )

    setup(ext_modules=cythonize([extension], language_level=3),
          cmdclass={"build_py": BuildPyWithC, "build_ext": BuildExtConcurrent})

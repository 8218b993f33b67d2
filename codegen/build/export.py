"""A generated robot's C library as a self-contained CMake project in a directory of
one's own: NAME_kernels.c and NAME_kernels.h copied, CMakeLists.txt, the package's
configuration file and the pkg-config file rendered beside them
(codegen/emit/cmake_project.py).

    import codegen
    arm = codegen.import_urdf("arm.urdf", end_effectors=["tool"])
    codegen.export(arm, "arm_c")   # or import_urdf(..., out="arm_c")

    cmake -S arm_c -B build && cmake --build build && cmake --install build --prefix PREFIX

then find_package(arm_kernels) (the targets arm_kernels::arm_kernels, shared, and
arm_kernels::arm_kernels_static) or `pkg-config --cflags --libs arm_kernels`. The source is a
module built by codegen.import_urdf (its cache entry holds the C: each file is read from a
descriptor hashed against the entry's manifest, as the extension is) or a directory that
`python -m codegen --out` wrote; `python -m codegen --cmake` writes the same project in place.
The files are committed all or nothing (codegen/build/commit.py).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from .. import __version__
from ..emit.cmake_project import render_cmake_project
from .cache import MANIFEST, open_verified
from .commit import write_atomically

_KEY = re.compile(r"[0-9a-f]{64}")  # a cache entry's directory name (codegen.build.cache.entry_key)
MAX_SOURCE_BYTES = 1 << 30  # the largest generated C is tens of MB


def cmake_files(stem: str) -> dict:
    """File name -> text of the CMake project of `stem` (NAME_kernels), for this generator."""
    return render_cmake_project(stem, __version__)


def _source_dir(source) -> tuple:
    """(directory, NAME_kernels or None) of a module or a directory."""
    if isinstance(source, (str, os.PathLike)):
        return Path(source), None
    file = getattr(source, "__file__", None)
    name = getattr(source, "__name__", None)
    if not file:
        raise TypeError(f"export: expected a module built by codegen.import_urdf or a directory, got {source!r}")
    return Path(file).parent, name


def _stem(directory: Path, name) -> str:
    """NAME_kernels: the module's name, else the one NAME_kernels.h with its .c in the directory."""
    if name is not None and (directory / f"{name}.h").is_file():
        return name
    stems = sorted(p.name[:-2] for p in directory.glob("*_kernels.h") if (directory / f"{p.name[:-2]}.c").is_file())
    if len(stems) != 1:
        what = "no NAME_kernels.h with its NAME_kernels.c" if not stems else f"several libraries ({', '.join(stems)})"
        gone = " (a module built with cache=False or without a usable cache keeps no sources: build it " \
               "with import_urdf(..., out=DIR))" if not stems and name is not None else ""
        raise ValueError(f"export: {directory} holds {what}{gone}")
    return stems[0]


def _read(directory: Path, name: str) -> str:
    """A file's text; from a cache entry, the bytes its manifest vouches for."""
    if _KEY.fullmatch(directory.name) and (directory / MANIFEST).is_file():
        fd = open_verified(directory, directory.name, name)
        with open(fd, "rb") as f:
            f.seek(0)  # the descriptor was read to its end for the hash
            data = f.read(MAX_SOURCE_BYTES + 1)
    else:
        with open(directory / name, "rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"export: {directory / name} is larger than {MAX_SOURCE_BYTES} bytes")
    return data.decode("utf-8")


def export(source, out_dir) -> list:
    """Write the C library of `source` as a CMake project into out_dir (created if missing):
    NAME_kernels.c, NAME_kernels.h, CMakeLists.txt, NAME_kernelsConfig.cmake.in and
    NAME_kernels.pc.in, replaced together or not at all; returns the written paths.
    `source`: a module codegen.import_urdf returned (NAME_kernels), or a directory holding one
    NAME_kernels.c and NAME_kernels.h (python -m codegen --out DIR). ValueError if there is
    no such pair (a module built with cache=False keeps none: use import_urdf(..., out=DIR))."""
    directory, name = _source_dir(source)
    if not directory.is_dir():
        raise ValueError(f"export: {directory} is not a directory (a module built with cache=False or without a "
                         "usable cache keeps no sources: build it with import_urdf(..., out=DIR))")
    stem = _stem(directory, name)
    files = {f"{stem}.{ext}": _read(directory, f"{stem}.{ext}") for ext in ("c", "h")}
    files.update(cmake_files(stem))
    return write_atomically(Path(out_dir), files)

"""Builds the Cython extension from the committed generated sources:
generated/krang_kernels.c and krang_kernels/_kernels.pyx, which `make
generate` renders from codegen/emit/templates/module.pyx.j2 (no SymPy needed to
install). Everything else (metadata, packages, package data) is in
pyproject.toml; why setuptools rather than scikit-build-core or meson-python
is said there."""
import os
import platform
import shutil
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

# Portable by default: the compiler's baseline target (any x86-64 / aarch64);
# on x86-64 with GCC and glibc the generated kernels carry target_clones
# (-DKK_TARGET_CLONES in FLAGS), so AVX2 and FMA are used where the CPU has them
# (measured 0.96-1.03x the time of -march=native, `make bench`).
# KRANG_NATIVE=1 tunes for the building machine instead (the wheel then runs
# only on CPUs like it); KRANG_PORTABLE is accepted and is the default.
NATIVE = ["-march=native"] if os.environ.get("KRANG_NATIVE") and not os.environ.get("KRANG_PORTABLE") else []
# Fused multiply-add contraction (GCC's default outside ISO mode): the
# generated code is sums of products, ~2x faster with FMA. The same flags as
# codegen.emit.python_module.FLAGS (tests/test_pybuild.py checks it).
FLAGS = ["-O3", "-std=c99", "-ffp-contract=fast", "-DKK_TARGET_CLONES"]
# x86-64: the AVX-512 copy of the target_clones keeps 256-bit vectors (faster
# here; see KKCLONES in the generated C). codegen.emit.python_module.X86_FLAGS too.
X86_FLAGS = ["-mprefer-vector-width=256"]

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


extension = Extension(
    "krang_kernels._kernels",
    sources=["krang_kernels/_kernels.pyx", "generated/krang_kernels.c"],
    include_dirs=["generated", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else []) + NATIVE,
)

setup(ext_modules=cythonize([extension], language_level=3), cmdclass={"build_py": BuildPyWithC})

"""Builds the Cython extension from the committed generated sources:
generated/krang_kernels.c and krang_kernels/_kernels.pyx, which `make
generate` renders from templates/module.pyx.j2 (no SymPy needed to install)."""
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

# Tuned for the machine that builds it (AVX, FMA): the kernels run where they
# are compiled. KRANG_PORTABLE=1 builds for any x86-64 / aarch64.
NATIVE = [] if os.environ.get("KRANG_PORTABLE") else ["-march=native"]
# Fused multiply-add contraction (GCC's default outside ISO mode): the
# generated code is sums of products, ~2x faster with FMA. The same flags as
# codegen.pybuild.FLAGS (tests/test_pybuild.py checks it).
FLAGS = ["-O3", "-std=c99", "-ffp-contract=fast"]

extension = Extension(
    "krang_kernels._kernels",
    sources=["krang_kernels/_kernels.pyx", "generated/krang_kernels.c"],
    include_dirs=["generated", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=FLAGS + NATIVE,
)

setup(ext_modules=cythonize([extension], language_level=3))

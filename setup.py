"""Builds the Cython extension from the committed generated C sources
(no SymPy needed to install)."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extension = Extension(
    "krang_kernels._kernels",
    sources=["krang_kernels/_kernels.pyx", "generated/krang_kernels.c"],
    include_dirs=["generated", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-O2", "-std=c99"],
)

setup(ext_modules=cythonize([extension], language_level=3))

"""krang-kernels generator: model file -> symbolic dynamics -> C sources."""
# The version of the distribution krang-kernels, defined here only:
# pyproject.toml reads it (setuptools dynamic version), krang_kernels
# re-exports it, generated files carry it in their banner.
__version__ = "0.2.0.dev0"

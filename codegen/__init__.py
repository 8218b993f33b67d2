"""krang-kernels generator: model file -> symbolic dynamics -> C sources."""
__version__ = "0.1.0"

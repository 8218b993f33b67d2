"""krang-kernels generator: model file -> symbolic dynamics -> C sources."""
# The version of the distribution krang-kernels, defined here only:
# pyproject.toml reads it (setuptools dynamic version), krang_kernels
# re-exports it, generated files carry it in their banner.
__version__ = "0.2.0.dev0"


def __getattr__(name):
    """codegen.import_urdf (codegen/urdf_import.py), imported on first use so that
    `import codegen` stays light (krang_kernels reads __version__ from here)."""
    if name == "import_urdf":
        from .urdf_import import import_urdf
        return import_urdf
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")

"""krang-kernels generator: model file -> symbolic dynamics -> C sources."""
# The version of the distribution krang-kernels, defined here only:
# pyproject.toml reads it (setuptools dynamic version), krang_kernels
# re-exports it, generated files carry it in their banner.
__version__ = "0.2.0.dev0"

import os as _os

# SymPy's expression cache size, read once, when SymPy is first imported: the
# default 1000 entries thrash on large robots; 100,000 measured faster for
# little memory, same output (docs/design-notes.md#sympy-cache-size). Set
# here, before any codegen module imports SymPy, so that the command line,
# codegen.import_urdf and generate() all get it; a user's own setting wins.
_os.environ.setdefault("SYMPY_CACHE_SIZE", "100000")


def __getattr__(name):
    """codegen.import_urdf and codegen.export (codegen/urdf.py; export: a built robot's C
    library as a CMake project, codegen/build/export.py), imported on first use so that
    `import codegen` stays light (krang_kernels reads __version__ from here)."""
    if name == "import_urdf":
        from .urdf import import_urdf
        return import_urdf
    if name == "export":
        from .urdf import export
        return export
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")

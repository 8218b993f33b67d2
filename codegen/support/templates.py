"""Where the templates are: one resolver for every renderer and the generator digest.

The templates live in the repository's top-level templates/ folder, grouped by
target language (c/, python/, cmake/). pyproject.toml maps that folder into the installed
package as codegen/templates, so a wheel carries it; a checkout and an editable
install read it in place. Files are named by their logical path
(templates/c/kernels.c.j2) wherever they are, so that the generator digest, and
with it every generated banner, is the same from a checkout, an editable install
and an installed wheel.
"""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # the codegen package
LANGUAGES = ("c", "python", "cmake")


def template_root() -> Path:
    """templates/: inside the installed package, else beside the package in a checkout."""
    for root in (_PACKAGE / "templates", _PACKAGE.parent / "templates"):
        if (root / "c" / "kernels.c.j2").is_file():
            return root
    raise FileNotFoundError(f"the templates are missing (looked in {_PACKAGE / 'templates'} and "
                            f"{_PACKAGE.parent / 'templates'}): reinstall krang-kernels")


def template_dir(language: str) -> Path:
    """The templates of one target language: "c", "python" or "cmake" (a robot's CMake project)."""
    if language not in LANGUAGES:
        raise ValueError(f"no templates for {language!r}")
    return template_root() / language


def template_files() -> list:
    """(logical path, file) of every template and runtime file, in logical-path order."""
    root = template_root()
    files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted((("templates/" + p.relative_to(root).as_posix()), p) for p in files)

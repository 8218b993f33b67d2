"""The generator's own digest: SHA-256 over codegen's Python sources and C
templates (path and content of each, in path order).

Generated banners carry it, and the module cache (codegen.build_cache) keys
entries with it, so any change to the generator makes a new entry. Imports
nothing of the pipeline: a cache hit must not import SymPy.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the directory holding the codegen package
TEMPLATES = ROOT / "codegen" / "emit" / "templates"


def source_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(list((ROOT / "codegen").rglob("*.py")) + list(TEMPLATES.glob("*.j2"))):
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()

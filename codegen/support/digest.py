"""The generator's own digest: SHA-256 over codegen's Python sources and every
template and runtime file (logical path and content of each, in path order).

Generated banners carry it, and the module cache (codegen.build.cache) keys
entries with it, so any change to the generator, a template or the runtime
checks (checks.pxi) makes a new entry. Paths are logical (codegen/...,
templates/...), so a checkout, an editable install and a wheel agree. Imports
nothing of the pipeline: a cache hit must not import SymPy.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .templates import template_files

PACKAGE = Path(__file__).resolve().parent.parent  # the codegen package


def source_digest() -> str:
    h = hashlib.sha256()
    sources = [(p.relative_to(PACKAGE.parent).as_posix(), p) for p in PACKAGE.rglob("*.py")]
    for logical, path in sorted(sources + template_files()):
        h.update(logical.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()

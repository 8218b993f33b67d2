"""Reading an untrusted input file: the runtime's reader
(krang_kernels.input_files: regular files only, bounded, never blocking) with
the generator's error type, so that each bad file is one ModelError.

    read_input(path, what, limit) -> bytes
"""
from __future__ import annotations

from krang_kernels import input_files

from .expr import ModelError

__all__ = ["read_input", "read_input_text"]


def read_input(path, what: str, limit: int) -> bytes:
    """krang_kernels.input_files.read_input raising ModelError. For a cache keyed by a
    URDF's content: read it once with read_input(path, "URDF",
    codegen.read.urdf_parse.MAX_BYTES), hash those bytes, and build from the same bytes."""
    return input_files.read_input(path, what, limit, ModelError)


def read_input_text(path, what: str, limit: int) -> str:
    """read_input decoded as UTF-8 (no newline translation: a model's hash is of its file)."""
    return input_files.read_input_text(path, what, limit, ModelError)

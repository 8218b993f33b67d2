"""The tool's one error type and its kinds.

Catch CodegenError for anything the generator refuses or fails at on purpose
(the command line turns each into one line `error: ...`): ModelError, an input
that cannot describe a robot (exit status 2), and BuildError, a module that did
not compile. ModelError stays a ValueError and BuildError a RuntimeError for
callers that caught those before.
"""
from __future__ import annotations


class CodegenError(Exception):
    """Anything krang-kernels' generator refuses or fails at on purpose."""


class ModelError(CodegenError, ValueError):
    """A model or parameter file that cannot describe a robot."""


class BuildError(CodegenError, RuntimeError):
    """A Python module that did not compile; str(): the first compiler errors."""

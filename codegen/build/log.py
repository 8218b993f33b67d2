"""The compiler's output of a Python module build, kept off the terminal.

Cython writes its diagnostics to sys.stderr, setuptools runs the C compiler
as a child process that inherits file descriptors 1 and 2: `captured()`
sends all of them to one temporary file for the duration of the build. A
successful build then prints nothing (no gcc warnings, no progress lines); a
failed one raises BuildError, one message carrying the compiler's first
error lines (the command line prints it on one line, exit status 1: a
generated file that does not compile is the generator's fault, not the
input's).
"""
from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from contextlib import contextmanager

# gcc/clang: "file:line:col: error: ..." (and "fatal error:"); Cython: "file.pyx:line:col: message"
_CC_ERROR = re.compile(r":\d+(?::\d+)?: (?:fatal )?error: ")
_CYTHON_ERROR = re.compile(r"\S+\.(?:pyx|pxd|pxi):\d+:\d+: ")
_PATH = re.compile(r"^\S*/(?=[^/\s]+:\d+)")  # the directory of a diagnostic's file
MAX_LINES = 3
MAX_CHARS = 300  # per quoted line


class BuildError(RuntimeError):
    """A Python module that did not compile; str(): the first compiler errors."""


class Captured:
    """What a build wrote (set when the `captured` block is left)."""
    text = ""


@contextmanager
def captured():
    """File descriptors 1 and 2 and sys.stdout/sys.stderr into one temporary
    file while the block runs; all restored on the way out, whatever happens."""
    out = Captured()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    with tempfile.TemporaryFile() as log:
        saved = []
        for fd in (1, 2):
            try:
                saved.append(os.dup(fd))
            except OSError:  # closed: closed again afterwards
                saved.append(None)
        text = io.TextIOWrapper(os.fdopen(os.dup(log.fileno()), "wb"), encoding="utf-8", errors="replace",
                                write_through=True)
        streams = sys.stdout, sys.stderr
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            sys.stdout = sys.stderr = text
            yield out
        finally:
            sys.stdout, sys.stderr = streams
            text.close()
            for fd, old in zip((1, 2), saved):
                if old is None:
                    os.close(fd)
                else:
                    os.dup2(old, fd)
                    os.close(old)
            log.seek(0)
            out.text = log.read().decode("utf-8", "replace")


def first_errors(text: str, n: int = MAX_LINES) -> list:
    """The first n error lines of a compiler's output (directories dropped):
    gcc/clang errors, else Cython's, else any line naming an error, else the
    last lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pick in (lambda ln: _CC_ERROR.search(ln), lambda ln: _CYTHON_ERROR.match(ln),
                 lambda ln: re.search(r"\berror\b", ln, re.I)):
        found = [ln for ln in lines if pick(ln)]
        if found:
            break
    else:
        found = lines[-n:]
    return [_shorten(_PATH.sub("", ln)) for ln in found[:n]]


def _shorten(line: str) -> str:
    return line if len(line) <= MAX_CHARS else line[:MAX_CHARS - 3] + "..."


def failure(module: str, text: str, exc: BaseException) -> BuildError:
    """The BuildError of a failed build of `module`: its first error lines
    (or the exception's own message when the compiler said nothing)."""
    errors = first_errors(text) or [f"{type(exc).__name__}: {exc}"]
    return BuildError(f"the Python module {module} did not compile: " + " | ".join(errors))

"""The compiler's output of a Python module build, kept off the terminal.

Cython and setuptools write to sys.stdout/sys.stderr, the C compiler and the
linker run as child processes: `captured()` sends all of it to one temporary
file for the duration of the build. A successful build then prints nothing
(no gcc warnings, no progress lines); a failed one raises BuildError, one
message carrying the compiler's first error lines (the command line prints it
on one line, exit status 1: a generated file that does not compile is the
generator's fault, not the input's).

The host process keeps its output: file descriptors 1 and 2 are never
redirected (other threads, a logging handler holding the real sys.stderr, C
code writing to fd 2 would all vanish into the build's log), and sys.stdout /
sys.stderr become a router that sends only the build's writes to the log: the
thread that runs the build and the threads started during it (the compiler
pool); every thread that existed before the build writes where it did. Child
processes started by the build get the log as stdout and stderr when they were
given none (subprocess.Popen is wrapped for the duration: a child inherits fds
1 and 2 otherwise). One build at a time per process (workdirs.BUILD_LOCK).
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager

from ..support.errors import BuildError  # noqa: F401 - re-exported: the build's error
from ..support.workdirs import BUILD_LOCK
from ..support import progress

# gcc/clang: "file:line:col: error: ..." (and "fatal error:"); Cython: "file.pyx:line:col: message"
_CC_ERROR = re.compile(r":\d+(?::\d+)?: (?:fatal )?error: ")

_CYTHON_ERROR = re.compile(r"\S+\.(?:pyx|pxd|pxi):\d+:\d+: ")
_PATH = re.compile(r"^\S*/(?=[^/\s]+:\d+)")  # the directory of a diagnostic's file
MAX_LINES = 3
MAX_CHARS = 300  # per quoted line


class Captured:
    """What a build wrote (set when the `captured` block is left)."""
    text = ""


class _Capture:
    def __init__(self, log, text):
        self.log, self.text = log, text
        # the host's threads: everything alive now but the builder
        self.host = set(threading.enumerate()) - {threading.current_thread()}


_active: list = []  # the capture in progress (a stack: a nested capture of the same thread)


def _capture():
    """The capture the calling thread writes into, or None (a host thread, no build)."""
    if _active and threading.current_thread() not in _active[-1].host:
        return _active[-1]
    return None


class _Router:
    """sys.stdout / sys.stderr while a build runs: the build's threads write to its
    log, the others to the stream this replaced (kept afterwards if something still
    holds the router: it then always writes to that stream)."""

    def __init__(self, real):
        self._real = real

    def _target(self):
        cap = _capture()
        return cap.text if cap is not None else self._real

    def write(self, s):
        cap = _capture()
        if cap is not None:
            n = cap.text.write(s)
            cap.text.flush()  # in order with the children's output, which goes to the file directly
            return n
        return self._real.write(s) if self._real is not None else len(s)

    def flush(self):
        target = self._target()
        if target is not None:
            target.flush()

    def writable(self):
        return True

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def isatty(self):
        target = self._target()
        return bool(target is not None and target.isatty())

    def fileno(self):
        target = self._target()
        if target is None:
            raise io.UnsupportedOperation("no stream")
        return target.fileno()

    def __getattr__(self, name):  # encoding, errors, buffer ... of the stream written to
        return getattr(self._target(), name)


_POPEN_INIT = subprocess.Popen.__init__


def _popen_init(self, *args, **kwargs):
    """subprocess.Popen.__init__ during a build: a child the build starts without
    stdout/stderr writes them to the log (args[4], args[5]: given positionally)."""
    cap = _capture()
    if cap is not None:
        if len(args) < 5 and kwargs.get("stdout") is None:
            kwargs["stdout"] = cap.log.fileno()
        if len(args) < 6 and kwargs.get("stderr") is None:
            kwargs["stderr"] = cap.log.fileno()
    _POPEN_INIT(self, *args, **kwargs)


@contextmanager
def captured():
    """The build's output (this thread's and its children's, see the module
    docstring) into one temporary file while the block runs; sys.stdout,
    sys.stderr and subprocess.Popen restored on the way out, whatever happens."""
    out = Captured()
    with BUILD_LOCK, tempfile.TemporaryFile() as log:
        text = io.TextIOWrapper(os.fdopen(os.dup(log.fileno()), "wb"), encoding="utf-8", errors="replace",
                                write_through=True)
        cap = _Capture(log, text)
        names = ("stdout", "stderr")
        routers = {}
        for name in names:
            stream = getattr(sys, name)
            if not isinstance(stream, _Router):
                routers[name] = _Router(stream)
                setattr(sys, name, routers[name])
        patched = subprocess.Popen.__init__ is _POPEN_INIT
        if patched:
            subprocess.Popen.__init__ = _popen_init
        _active.append(cap)
        err = sys.stderr._real if isinstance(sys.stderr, _Router) else sys.stderr
        try:
            with progress.writing_to(err):  # the compiled parts' lines reach the user, not the log
                yield out
        finally:
            _active.remove(cap)
            if patched and not _active and subprocess.Popen.__init__ is _popen_init:
                subprocess.Popen.__init__ = _POPEN_INIT
            for name, router in routers.items():
                if getattr(sys, name) is router:  # not replaced meanwhile by someone else
                    setattr(sys, name, router._real)
            text.close()
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

"""Progress lines for long generation runs: one line per stage on stderr.

    with stage("derive C"):
        ...

prints `[codegen] derive C: 12.3 s` when the stage took at least
THRESHOLD seconds, or always when the environment variable
KRANG_CODEGEN_VERBOSE is set to anything but "" or "0". Only stderr: the
generated files never depend on timing. A stage that raises prints nothing
(its error is reported by the caller).

Lines that depend on the machine's speed are off where KRANG_CODEGEN_PROGRESS
is "0" (the test suite sets it, so that output checks do not depend on load)
and inside `silenced()` (import_urdf(quiet=True)); verbose still prints them.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

THRESHOLD = 2.0  # seconds; shorter stages stay quiet unless verbose
# silenced() depth: process-wide, not a context variable, so that the compiler's worker threads
# (codegen/build/compiler.py) see it too; one build at a time per process (codegen.urdf)
_silenced = 0
# where the lines go while a build captures sys.stderr (codegen/build/log.py): the stream it replaced
_streams: list = []


def verbose() -> bool:
    return os.environ.get("KRANG_CODEGEN_VERBOSE", "") not in ("", "0")


def enabled() -> bool:
    """Whether lines that depend on timing may print (verbose aside)."""
    return _silenced == 0 and os.environ.get("KRANG_CODEGEN_PROGRESS", "") != "0"


@contextmanager
def writing_to(stream):
    """Progress lines to `stream` inside (a build's output capture keeps them on the real stderr)."""
    _streams.append(stream)
    try:
        yield
    finally:
        _streams.remove(stream)


@contextmanager
def silenced(on: bool = True):
    """No progress lines inside (unless verbose) when `on`."""
    global _silenced
    _silenced += bool(on)
    try:
        yield
    finally:
        _silenced -= bool(on)


def report(name: str, t0: float, always: bool = False) -> None:
    """Print the line for a stage that started at time.perf_counter() == t0 (`always`:
    whatever its duration, e.g. each compiled part of a module build)."""
    dt = time.perf_counter() - t0
    if verbose() or (enabled() and (always or dt >= THRESHOLD)):
        try:
            print(f"[codegen] {name}: {dt:.1f} s", file=_streams[-1] if _streams else sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr gone (a closed pipe, a full disk): progress is optional
            pass


@contextmanager
def stage(name: str):
    t0 = time.perf_counter()
    yield
    report(name, t0)

"""Progress lines for long generation runs: one line per stage on stderr.

    with stage("derive C"):
        ...

prints `[codegen] derive C: 12.3 s` when the stage took at least
THRESHOLD seconds, or always when the environment variable
KRANG_CODEGEN_VERBOSE is set to anything but "" or "0". Only stderr: the
generated files never depend on timing. A stage that raises prints nothing
(its error is reported by the caller).
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager

THRESHOLD = 2.0  # seconds; shorter stages stay quiet unless verbose


def verbose() -> bool:
    return os.environ.get("KRANG_CODEGEN_VERBOSE", "") not in ("", "0")


def report(name: str, t0: float) -> None:
    """Print the line for a stage that started at time.perf_counter() == t0."""
    dt = time.perf_counter() - t0
    if dt >= THRESHOLD or verbose():
        try:
            print(f"[codegen] {name}: {dt:.1f} s", file=sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr gone (a closed pipe, a full disk): progress is optional
            pass


@contextmanager
def stage(name: str):
    t0 = time.perf_counter()
    yield
    report(name, t0)

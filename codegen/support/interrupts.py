"""Stopping signals that a run cannot lose: SIGINT, SIGTERM and SIGHUP.

    with handled():   # the command line, around one run
        ...
        check()       # where the run decides: before a commit's journal, after each emitted kernel

While `handled` is active, SIGINT raises KeyboardInterrupt and SIGTERM/SIGHUP
raise Terminated where the run is, so that every `finally` removes its staging
and build directories. Python loses such an exception when the signal lands
inside a finalizer (a weakref callback or a __del__: multiprocessing closes a
finished child's pipes in one): it prints "Exception ignored" and the run goes
on, to commit its files and exit 0. So each handler also records its signal;
`check()` raises it again, and the report of the lost one is not printed (the
user sees one line, as for any interrupt). Outside `handled` (the Python API in
someone else's process), nothing is installed and `check()` does nothing.
"""
from __future__ import annotations

import contextlib
import signal
import sys


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the run is (a BaseException, as
    KeyboardInterrupt is: no `except Exception` of the run swallows it)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


_pending = None  # the first stopping signal of the active run, or None


def _exception(signum) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _on_signal(signum, frame):
    global _pending
    if _pending is None:
        _pending = signum
    raise _exception(signum)


def check():
    """Raise the stopping signal this run received, if any (again: the first
    raise may have been lost in a finalizer)."""
    if _pending is not None:
        raise _exception(_pending)


def _unraisable(previous):
    def hook(unraisable):
        if _pending is not None and issubclass(unraisable.exc_type, (KeyboardInterrupt, Terminated)):
            return  # recorded; check() raises it where the run decides
        previous(unraisable)
    return hook


@contextlib.contextmanager
def handled():
    """Install the handlers for one run (main thread only; elsewhere nothing
    changes), restore the previous ones on exit. A SIGINT that the process
    ignores (`cmd &` in a shell) stays ignored."""
    global _pending
    _pending = None
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None or (sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler):
            continue
        try:
            previous[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    old_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable(old_hook)
    try:
        yield
    finally:
        sys.unraisablehook = old_hook
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError, TypeError):
                pass
        _pending = None

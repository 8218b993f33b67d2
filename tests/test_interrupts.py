"""codegen/support/interrupts.py: a stopping signal that Python loses in a finalizer
is raised again where the run decides, and nothing is committed."""
from __future__ import annotations

import gc
import signal
import threading

import pytest

from codegen.build import commit
from codegen.support import interrupts

pytestmark = pytest.mark.unit


class _SignalsWhenCollected:
    """Raises `sig` in this process from __del__: Python reports the exception as
    unraisable and goes on (what multiprocessing's pipe finalizers run into)."""

    def __init__(self, sig):
        self.sig = sig

    def __del__(self):
        signal.raise_signal(self.sig)  # the handler runs, and raises, before this returns


def _lose_in_finalizer(sig):
    obj = _SignalsWhenCollected(sig)
    del obj
    gc.collect()


@pytest.mark.parametrize("sig,exc", [(signal.SIGTERM, interrupts.Terminated),
                                     (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_lost_in_a_finalizer_is_raised_by_check_and_not_reported(sig, exc, capsys):
    if sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler:
        pytest.skip("SIGINT is ignored in this process (started in the background)")
    with interrupts.handled():
        _lose_in_finalizer(sig)  # went on: the exception was lost
        with pytest.raises(exc) as raised:
            interrupts.check()
        if sig == signal.SIGTERM:
            assert raised.value.signum == signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err
    interrupts.check()  # the record ends with the run


def test_handlers_are_restored_and_check_does_nothing_outside_a_run():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with interrupts.handled():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
    interrupts.check()


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.handled():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_nothing_is_installed():
    seen = []

    def run():
        with interrupts.handled():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [before]


def test_a_lost_stop_before_the_commit_commits_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("old")
    with interrupts.handled():
        with pytest.raises(interrupts.Terminated):
            commit.write_atomically(out, {"a.txt": "new", "b.txt": "new"},
                                    build=lambda stage: _lose_in_finalizer(signal.SIGTERM))
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]
    assert (out / "a.txt").read_text() == "old"

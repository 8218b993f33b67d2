"""Emitting a robot's kernels on every CPU this process may use, each as soon
as the derivation has its outputs.

    with Emission(emit_one) as emission:
        d = derive(model, ..., ready=lambda d: emission.offer(specs_ready_in(d), d))
        kernels = emission.finish(all_specs, d)

gives [emit_one(s, d) for s in all_specs], computed by forked child processes.

Why: emission (CSE, then printing C) is most of a big robot's generation time
and each kernel's is independent of the others' (measured:
docs/design-notes.md#parallel-emission). A child forked at a checkpoint of the
derivation inherits everything derived so far instead of receiving SymPy
graphs through pickling, and sends back only its kernel's text (statements,
writes, counts): the SymPy matrices a kernel was emitted from are dropped
first. While the derivation goes on in this process, one CPU fewer emits;
after it, all (offer(..., parent_busy=False)). Ready kernels start largest
first, so that the CPUs of a small machine finish together.

The output does not depend on the number of processes nor on when a kernel
starts: each kernel is emitted by the same code from statements the
derivation never changes once written, whichever process runs it (the tests
compare a parallel and a serial generation byte for byte).

KRANG_GENERATE_JOBS=N sets the number of processes emitting at once (1: no
child processes, everything in this process after the derivation). Without
`fork` (Windows, and macOS where forking a process that has used system
frameworks is unsafe) generation stays serial, and so it does while the caller
runs other Python threads: fork copies only the calling thread, and a lock
another thread holds (stderr's, logging's) stays locked in the child, which
prints and writes files.

Other threads beside this one are no such hazard when they never hold a lock
the child takes: JAX's thread pools (C++ threads, started with its first
computation) or OpenBLAS's. The child runs Python only (glibc's malloc locks
are held across fork, the GIL is reset in the child), so generation forks
beside them, without the warnings of JAX's at-fork hook and of Python 3.12 for
a process with more than one thread (meant for a child that goes on computing
with JAX, and for threads of any kind).
"""
from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import sys
import threading
import warnings

from ..support import interrupts
from ..support import workdirs as build_dir
from .pair_loops import pair_form_key


def jobs(n_kernels: int) -> int:
    """Processes emitting at once for n_kernels kernels: KRANG_GENERATE_JOBS, else
    the CPUs this process may use; 1 where fork is not available or not safe (other
    Python threads running: the module's docstring)."""
    env = os.environ.get("KRANG_GENERATE_JOBS", "").strip()
    if env.isdigit() and int(env) > 0:
        n = int(env)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        n = 1
    if threading.active_count() > 1:
        n = 1
    return max(1, min(n, n_kernels))


def text_only(kernel):
    """The emitted kernel without the SymPy matrices it was emitted from (what the
    later stages read is text), its helpers and straight form likewise."""
    if kernel is None:
        return None
    return dataclasses.replace(kernel, outputs={}, straight=text_only(kernel.straight),
                               helpers=[(sig, text_only(h)) for sig, h in kernel.helpers])


def weight(spec, derivation) -> int:
    """A kernel's expected emission cost, for the order of start: the number of
    program statements it needs; the dynamics derivatives (pair forms) first."""
    if pair_form_key(spec) is not None:
        return sys.maxsize
    exprs = [e for m in spec.outputs.values() if m is not None for e in m]
    return len(derivation.program.needed(exprs))


def _child_signals():
    """A child ends quietly when stopped (SIGTERM; the command line's handler,
    inherited through fork, would raise in it), leaves Ctrl-C to the parent,
    which stops its children, and ends with the parent, should that be killed
    (Linux prctl PR_SET_PDEATHSIG = 1)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _child(path, emit_one, spec, derivation):
    _child_signals()
    try:
        result = ("ok", text_only(emit_one(spec, derivation)))
    except BaseException as exc:  # noqa: BLE001 - raised again in the parent
        result = ("error", exc)
    try:
        data = pickle.dumps(result)
    except Exception:  # noqa: BLE001 - an exception that does not pickle
        data = pickle.dumps(("error", RuntimeError(f"emitting {spec.name}: {result[1]!r}")))
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError:
        # the parent was interrupted between this child's fork and its registration, and
        # removed the directory: nobody is left to read a result or a traceback
        os._exit(1)


class Emission:
    """Kernels emitted by forked children, started as they are offered (see the
    module's docstring); a context manager that stops its children on exit."""

    def __init__(self, emit_one, n_kernels: int = 1 << 20):
        self.emit_one, self.n = emit_one, jobs(n_kernels)
        self.waiting, self.running, self.done, self.specs = [], {}, {}, {}
        self.tmp, self.started = None, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.running.values():
            if proc.pid is not None:  # registered before start(), which an interrupt may have cut short
                proc.kill()
                proc.join()
        self.running.clear()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return False

    def offer(self, specs, derivation, parent_busy=True):
        """Start what CPUs allow of `specs` (and of those offered before), the
        largest first; one CPU fewer while this process goes on deriving."""
        new = [s for s in specs if s.name not in self.specs]
        self.specs.update((s.name, s) for s in new)
        if self.n == 1:
            return
        self.waiting += [(weight(s, derivation), s) for s in new]
        self.waiting.sort(key=lambda ws: -ws[0])
        self._collect(block=False)
        while self.waiting and len(self.running) < self.n - parent_busy:
            self._start(self.waiting.pop(0)[1], derivation)

    def finish(self, specs, derivation) -> list:
        """[emit_one(s, derivation) for s in specs]: the offered ones as emitted,
        the rest emitted now."""
        for s in specs:
            old = self.specs.get(s.name)
            if old is not None and (old.doc, old.args, old.sources) != (s.doc, s.args, s.sources):
                raise AssertionError(f"kernel {s.name} changed after it was offered")
        if self.n == 1:
            return [self.emit_one(s, derivation) for s in specs]
        self.offer(specs, derivation, parent_busy=False)
        while self.running:
            self._collect(block=True)
            while self.waiting and len(self.running) < self.n:
                self._start(self.waiting.pop(0)[1], derivation)
        return [self.done[s.name] for s in specs]

    def _start(self, spec, derivation):
        if self.tmp is None:  # named like a module build's: the next run removes it if this one is killed
            self.tmp = build_dir.fresh_directory("emit_")
        self.started += 1
        path = os.path.join(self.tmp, f"{self.started}.pickle")
        proc = multiprocessing.get_context("fork").Process(
            target=_child, args=(path, self.emit_one, spec, derivation), daemon=True)
        proc.path = path
        self.running[spec.name] = proc
        with warnings.catch_warnings():  # no Python thread but this one here (jobs): the docstring
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
            warnings.filterwarnings("ignore", message=r"This process .* is multi-threaded", category=DeprecationWarning)
            proc.start()

    def _collect(self, block: bool):
        """Take the results of the children that ended (waiting for one if `block`);
        a child's error is raised here."""
        if block and self.running:
            multiprocessing.connection.wait([p.sentinel for p in self.running.values()])
        for name, proc in list(self.running.items()):
            if proc.is_alive():
                continue
            proc.join()
            del self.running[name]
            try:
                with open(proc.path, "rb") as f:
                    status, value = pickle.load(f)
            except (OSError, EOFError, pickle.UnpicklingError):
                raise RuntimeError(f"emitting kernel {name}: the process ended with code {proc.exitcode} "
                                   "and no result") from None
            if status != "ok":
                raise value
            self.done[name] = value
        # a Ctrl-C that landed in the finalizer of a child's pipes (run when `proc` goes) was lost
        interrupts.check()


def emit_all(specs, emit_one, derivation) -> list:
    """[emit_one(s, derivation) for s in specs], over jobs() forked processes."""
    with Emission(emit_one, len(specs)) as emission:
        return emission.finish(specs, derivation)

"""Emitting a robot's kernels on every CPU this process may use.

    emit_all(specs, emit_one, derivation): the kernels emit_one(spec) gives, in
    the order of specs, computed by forked worker processes.

Why: emission (CSE, then printing C) is most of a big robot's generation time
and each kernel's is independent of the others' (TIAGo, 48 DOF: 150 of 215 s
CPU; the derivation before it ~55 s). The workers are forked after the
derivation, so they inherit it instead of receiving SymPy graphs through
pickling; each sends back only its kernel's text (statements, writes, counts):
the SymPy matrices a kernel was emitted from are dropped first. Kernels are
handed out largest first, one at a time, so that the two CPUs of a small
machine finish together.

The output does not depend on the number of workers: each kernel is emitted
by the same code from the same derivation, whichever process runs it (the
tests compare a parallel and a serial generation byte for byte).

KRANG_GENERATE_JOBS=N sets the number of workers (1: no worker processes,
everything in this process). Without `fork` (Windows, and macOS where forking
a process that has used system frameworks is unsafe) generation stays serial.
"""
from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys

from .emit.pair_loops import pair_form_key

# set in the parent just before the pool forks; the workers read their copy
_WORK: tuple | None = None


def jobs(n_kernels: int) -> int:
    """Worker processes for n_kernels kernels: KRANG_GENERATE_JOBS, else the CPUs
    this process may use; 1 where fork is not available or not safe."""
    env = os.environ.get("KRANG_GENERATE_JOBS", "").strip()
    if env.isdigit() and int(env) > 0:
        n = int(env)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
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
    """A kernel's expected emission cost, for the order of hand-out: the number of
    program statements it needs; the dynamics derivatives (pair forms) first."""
    if pair_form_key(spec) is not None:
        return sys.maxsize
    exprs = [e for m in spec.outputs.values() if m is not None for e in m]
    return len(derivation["program"].needed(exprs))


def _worker_signals():
    """A worker ends quietly when the pool stops it (SIGTERM; the command line's
    handler, inherited through fork, would raise in it) and leaves Ctrl-C to
    the parent, which stops the pool."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # and ends with the parent, should that be killed (Linux prctl PR_SET_PDEATHSIG = 1)
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _run(i):
    specs, emit_one = _WORK
    return i, text_only(emit_one(specs[i]))


def emit_all(specs, emit_one, derivation) -> list:
    """[emit_one(s) for s in specs], with the work spread over jobs() forked processes."""
    global _WORK
    n = jobs(len(specs))
    if n == 1:
        return [emit_one(s) for s in specs]
    order = sorted(range(len(specs)), key=lambda i: -weight(specs[i], derivation))
    _WORK = (specs, emit_one)
    try:
        with multiprocessing.get_context("fork").Pool(n, initializer=_worker_signals) as pool:
            done = dict(pool.imap_unordered(_run, order, chunksize=1))
    finally:
        _WORK = None
    return [done[i] for i in range(len(specs))]

"""Where the emitter puts output writes, the input guard and the code prefetch
(codegen/emit/layout.py: place_writes, guard_inputs, add_code_prefetch), on small
hand-made kernels, and what they mean for the compiled Krang kernels: the
same results with the code prefetch compiled out (-DKK_NO_CODE_PREFETCH), and
outputs that overlap inputs still right through the copy helper."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codegen.emit.cse import WHOLE_CLEAR, ZERO_RUN, Argument, Kernel, zero_runs
from codegen.emit.layout import PREFETCH_MIN_OPS, add_code_prefetch, guard_inputs, place_writes
from codegen.read.model import load_model
from reference.abi_ctypes import Library, compile_shared

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
KRANG = load_model(ROOT / "models" / "krang.toml")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def _kernel():
    k = Kernel("f", "doc", [Argument("q", 3, False), Argument("p", 2, False), Argument("A", 4, True)], {},
               {"A": "A"})
    k.body = [("const double t1", "2*q[0]"), ("const double t2", "t1 + p[1]"), ("const double t3", "t2*q[2]")]
    k.writes = [("A[0]", "t1"), ("A[1]", "t3"), ("A[2]", "0.0"), ("A[3]", "t2")]
    k.reads = {"q", "p"}
    return k


def test_each_write_follows_its_last_dependency():
    k = _kernel()
    place_writes(k)
    assert k.write_at == [0, 2, -1, 1]
    lhs = [lhs for lhs, _ in k.lines]
    assert lhs == ["A[2]", "const double t1", "A[0]", "const double t2", "A[3]", "const double t3", "A[1]"]


def test_runs_of_structural_zeros_become_one_memset():
    writes = ([(f"Y[{i}]", "0.0") for i in range(6)] + [("Y[6]", "x1")]  # a run of 6
              + [(f"Y[{i}]", "0.0") for i in range(7, 7 + ZERO_RUN - 1)]  # too short
              + [("Y[12]", "0.0"), ("Y[13]", "0.0"), ("Y[15]", "0.0"), ("Y[16]", "0.0")]  # a gap
              + [(f"J[{i}]", "0.0") for i in range(2)] + [(f"Y[{i}]", "0.0") for i in range(17, 19)]  # two arrays
              + [(f"J[{i}]", "0.0") for i in range(5, 10)])
    out = zero_runs(writes)
    assert out[0] == ("", "memset(Y + 0, 0, 6 * sizeof Y[0])")
    assert out[1] == ("Y[6]", "x1")
    assert out[2:-1] == writes[7:-5]  # short runs, gaps and array changes stay single writes
    assert out[-1] == ("", "memset(J + 5, 0, 5 * sizeof J[0])")
    k = _kernel()
    k.writes = writes
    place_writes(k)
    assert sum(rhs.startswith("memset(") for _, rhs in k.lines) == 2


def test_a_large_mostly_zero_output_is_cleared_whole_first():
    n = WHOLE_CLEAR
    nonzero = {3: "x1", 10: "x2", n - 1: "x3"}
    writes = [(f"Y[{i}]", nonzero.get(i, "0.0")) for i in range(n)] + [(f"J[{i}]", "0.0") for i in range(8)]
    out = zero_runs(writes, {"Y": n, "J": 8})
    # Y: one memset of all of it before anything else, its zero writes gone, its other writes kept in order
    assert out[0] == ("", f"memset(Y, 0, {n} * sizeof Y[0])")
    assert [w for w in out if w[0].startswith("Y[")] == [(f"Y[{i}]", v) for i, v in sorted(nonzero.items())]
    assert out[-1] == ("", "memset(J + 0, 0, 8 * sizeof J[0])")  # small: its run as before
    # the thresholds: one entry fewer keeps the runs; exactly half zeros clears whole
    small = [(f"Y[{i}]", nonzero.get(i, "0.0")) for i in range(n - 1)]
    assert not any(rhs.startswith("memset(Y, ") for _, rhs in zero_runs(small, {"Y": n - 1}))
    half = [(f"Y[{i}]", "0.0" if i % 2 else "x") for i in range(n)]
    assert zero_runs(half, {"Y": n})[0] == ("", f"memset(Y, 0, {n} * sizeof Y[0])")
    assert sum(rhs == "0.0" for _, rhs in zero_runs(half, {"Y": n})) == 0
    fewer = [(f"Y[{i}]", "0.0" if i % 3 == 0 else "x") for i in range(n)]
    assert all(not rhs.startswith("memset(") for _, rhs in zero_runs(fewer, {"Y": n}))
    k = Kernel("f", "doc", [Argument("q", 1, False), Argument("Y", n, True)], {})  # a kernel's lines: its lengths
    k.writes = writes[:n]
    place_writes(k)
    assert k.lines[0] == ("", f"memset(Y, 0, {n} * sizeof Y[0])") and len(k.lines) == 1 + len(nonzero)


def test_guard_copies_inputs_read_after_the_first_write():
    k = _kernel()
    place_writes(k)
    guard_inputs(k, "pfx_f")
    test = k.setup[0]
    # q and p are read after A[2] = 0.0 (the first line): both are tested against A
    assert "kk_overlap(q, 3, A, 4)" in test and "kk_overlap(p, 2, A, 4)" in test
    (signature, helper), = k.helpers
    assert helper.cold and signature.startswith("kk_copy_pfx_f(")
    assert helper.body == [("", "pfx_f(memcpy(in_q, q, sizeof in_q), memcpy(in_p, p, sizeof in_p), A)")]


def test_no_guard_for_inputs_read_before_any_write():
    k = _kernel()
    k.writes = [("A[0]", "t3")]  # written after every read
    place_writes(k)
    guard_inputs(k, "pfx_f")
    assert k.setup == [] and k.helpers == []


def test_a_call_that_writes_blocks_of_an_output_counts_as_a_write():
    k = _kernel()
    k.writes = [("A[0]", "t3")]
    k.body.insert(0, ("", "pfx_f_part0(p, o0, A + 2)"))  # a routine writing a block of A, reading p
    place_writes(k)
    guard_inputs(k, "pfx_f")
    assert "kk_overlap(p, 2, A, 4)" in k.setup[0] and "kk_overlap(q, 3, A, 4)" in k.setup[0]


def test_prefetch_only_in_large_kernels_and_routines_on_their_first_call():
    k = _kernel()
    routine = Kernel("pfx_f_part0", "r", [], {})
    k.helpers = [("pfx_f_part0(const double *sq, double *out)", routine)]
    k.body += [("", "pfx_f_part0(sq, o0)"), ("", "pfx_f_part0(sq + 3, o1)")]
    k.ops = PREFETCH_MIN_OPS - 1
    add_code_prefetch(k)
    assert k.prefetch == "" and routine.prefetch == ""
    k.ops = PREFETCH_MIN_OPS
    add_code_prefetch(k)
    assert k.prefetch == "1" and routine.prefetch == "prefetch"
    assert k.helpers[0][0] == "pfx_f_part0(const double *sq, double *out, int prefetch)"
    assert k.body[-2:] == [("", "pfx_f_part0(sq, o0, 1)"), ("", "pfx_f_part0(sq + 3, o1, 0)")]


@pytest.mark.parametrize("sources, tick", [({"A": "A"}, True), ({"A": "A", "C": "C", "Q": "Q", "J_x": "J_x_world"}, True),
                                           ({"tau": "tau"}, False), ({"ddq": "ddq"}, False), ({"Y": "Y"}, False),
                                           ({"dtau_dq": "dtau_dq", "dtau_dv": "dtau_dv"}, False)])
def test_prefetch_only_in_control_tick_kernels(sources, tick):
    """Kernels run in loops (dynamics, regressor, derivatives) never prefetch their code, however large."""
    k = _kernel()
    k.sources = sources
    k.ops = 10 * PREFETCH_MIN_OPS
    add_code_prefetch(k)
    assert (k.prefetch == "1") == tick


@pytest.fixture(scope="module")
def krang_libs(tmp_path_factory):
    """generated/krang_kernels.c with and without the code prefetch."""
    d = tmp_path_factory.mktemp("krang")
    src = ROOT / "generated" / "krang_kernels.c"
    on = compile_shared(src, d / "on.so", ["-O2", *STRICT])
    off = compile_shared(src, d / "off.so", ["-O2", *STRICT, "-DKK_NO_CODE_PREFETCH"])
    return Library(KRANG, on), Library(KRANG, off)


def _state(rng):
    return rng.uniform(-np.pi, np.pi, KRANG.ndof), rng.uniform(-3, 3, KRANG.ndof)


@pytest.mark.robots
def test_code_prefetch_changes_no_result(krang_libs):
    on, off = krang_libs
    p = on.default_params()
    rng = np.random.default_rng(5)
    for _ in range(20):
        q, dq = _state(rng)
        for a, b in zip(on.compute_all(q, dq, p), off.compute_all(q, dq, p)):
            assert np.array_equal(a, b)
        assert np.array_equal(on.compute_A(q, p), off.compute_A(q, p))
        assert np.array_equal(on.compute_C(q, dq, p), off.compute_C(q, dq, p))


@pytest.mark.robots
def test_outputs_overlapping_inputs_through_the_copy_helper(krang_libs):
    """compute_all writes its outputs while it reads dq and p: with Q on top
    of dq, or A on top of p, it must still give the results of separate arrays."""
    import ctypes
    lib, _ = krang_libs
    n, p = KRANG.ndof, lib.default_params()
    rng = np.random.default_rng(6)
    f = lib.lib.krang_compute_all
    ptr = lambda a, k=0: a[k:].ctypes.data_as(ctypes.POINTER(ctypes.c_double))  # noqa: E731
    for _ in range(5):
        q, dq = _state(rng)
        ref = lib.compute_all(q, dq, p)
        A, C, J1, J2 = (np.zeros(s) for s in (n * n, n * n, 6 * n, 6 * n))
        dq_and_Q = dq.copy()  # Q overwrites dq
        f(ptr(q), ptr(dq_and_Q), ptr(p), ptr(A), ptr(C), ptr(dq_and_Q), ptr(J1), ptr(J2))
        assert np.array_equal(dq_and_Q, ref[2]) and np.array_equal(A, ref[0].ravel())
        assert np.array_equal(C, ref[1].ravel()) and np.array_equal(J1, ref[3].ravel())
        big = np.concatenate([p, np.zeros(n * n)])  # A starts inside p
        Q = np.zeros(n)
        f(ptr(q), ptr(dq), ptr(big), ptr(big, 5), ptr(C), ptr(Q), ptr(J1), ptr(J2))
        assert np.array_equal(big[5:5 + n * n], ref[0].ravel()) and np.array_equal(Q, ref[2])

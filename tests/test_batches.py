"""Batches of states (krang_kernels; every generated module has the same
template): q of shape (N, N_DOF) -> outputs (N, ...), row i the single call
on state i: bit for bit where the module loops over the scalar kernel, to
rounding where it calls a SIMD batch kernel (compute_A, compute_C,
inverse_dynamics, bias, forward_dynamics and both dynamics derivatives: 4 or 8 states per instruction,
multiply-adds fused in other places); the parameter vector shared by the
batch, the same input checks per row, and the GIL
released while the C code runs.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")

N, NP = kk.N_DOF, kk.N_PARAMS
B = 9


def _states(n=B, seed=3):
    rng = np.random.default_rng(seed)
    return {"q": rng.uniform(-3, 3, (n, N)), "dq": rng.uniform(-2, 2, (n, N)),
            "ddq": rng.uniform(-4, 4, (n, N)), "tau": rng.uniform(-30, 30, (n, N)),
            "fext": rng.uniform(-10, 10, (n, 6 * kk.N_BODIES))}


P = kk.default_params() * np.random.default_rng(7).uniform(0.9, 1.1, NP)

# name -> call(states or one state, params, out): every kernel of the module
KERNELS = {
    "compute_A": lambda s, p, out=None: kk.compute_A(s["q"], p, out=out),
    "compute_C": lambda s, p, out=None: kk.compute_C(s["q"], s["dq"], p, out=out),
    "compute_Q": lambda s, p, out=None: kk.compute_Q(s["q"], p, out=out),
    "friction": lambda s, p, out=None: kk.friction(s["dq"], p, out=out),
    "inverse_dynamics": lambda s, p, out=None: kk.inverse_dynamics(s["q"], s["dq"], s["ddq"], p, out=out),
    "bias": lambda s, p, out=None: kk.bias(s["q"], s["dq"], p, out=out),
    "forward_dynamics": lambda s, p, out=None: kk.forward_dynamics(s["q"], s["dq"], s["tau"], p, out=out),
    "regressor": lambda s, p, out=None: kk.regressor(s["q"], s["dq"], s["ddq"], p, out=out),
    "base_regressor": lambda s, p, out=None: kk.base_regressor(s["q"], s["dq"], s["ddq"], p, out=out),
    "com": lambda s, p, out=None: kk.com(s["q"], p, out=out),
    "com_jacobian": lambda s, p, out=None: kk.com_jacobian(s["q"], p, out=out),
    "centroidal_map": lambda s, p, out=None: kk.centroidal_map(s["q"], p, out=out),
    "integrate": lambda s, p, out=None: kk.integrate(s["q"], s["dq"], 0.01, out=out),
    # several outputs: a tuple of arrays, out= a tuple too
    "inverse_dynamics_derivatives": lambda s, p, out=None: kk.inverse_dynamics_derivatives(
        s["q"], s["dq"], s["ddq"], p, out=out),
    "forward_dynamics_derivatives": lambda s, p, out=None: kk.forward_dynamics_derivatives(
        s["q"], s["dq"], s["tau"], p, out=out),
    "inverse_dynamics_fext": lambda s, p, out=None: kk.inverse_dynamics_fext(
        s["q"], s["dq"], s["ddq"], s["fext"], p, out=out),
    "forward_dynamics_fext": lambda s, p, out=None: kk.forward_dynamics_fext(
        s["q"], s["dq"], s["tau"], s["fext"], p, out=out),
    "inverse_dynamics_derivatives_fext": lambda s, p, out=None: kk.inverse_dynamics_derivatives_fext(
        s["q"], s["dq"], s["ddq"], s["fext"], p, out=out),
    "forward_dynamics_derivatives_fext": lambda s, p, out=None: kk.forward_dynamics_derivatives_fext(
        s["q"], s["dq"], s["tau"], s["fext"], p, out=out),
}
for _ee in kk.END_EFFECTORS:
    for _frame in ("world", "local"):
        KERNELS[f"jacobian_{_ee}_{_frame}"] = (
            lambda s, p, out=None, ee=_ee, fr=_frame: kk.jacobian(s["q"], ee, fr, p, out=out))
    KERNELS[f"fk_{_ee}"] = lambda s, p, out=None, ee=_ee: kk.fk(s["q"], ee, p, out=out)
    KERNELS[f"jdot_qdot_{_ee}"] = lambda s, p, out=None, ee=_ee: kk.jdot_qdot(s["q"], s["dq"], ee, p, out=out)
    for _frame in ("world", "local"):
        KERNELS[f"frame_jacobian_time_variation_{_ee}_{_frame}"] = (
            lambda s, p, out=None, ee=_ee, fr=_frame: kk.frame_jacobian_time_variation(
                s["q"], s["dq"], ee, fr, p, out=out))


def _row(states, i):
    return {k: v[i].copy() for k, v in states.items()}


def test_every_kernel_is_covered():
    kernels = {n for n in kk.__all__ if callable(getattr(kk, n))} - {
        "default_params", "params_from_dict", "check_params", "load_params", "link_params", "compute_all",
        "jacobian", "fk", "jdot_qdot", "neutral", "frame_jacobian_time_variation",
        "base_params",  # a function of the parameters alone: no state, no batch
        "rollout",  # a batch by nature (tests/test_rollout.py)
        # batches by nature, in the interleaved layout (tests/test_python_batch_interleaved.py)
        "cholesky_batch_interleaved", "solve_batch_interleaved", "unpack_interleaved"}
    assert kernels <= set(KERNELS)


# the kernels with a batch form in the C ABI (PFX_compute_A_batch, ...)
SIMD = {"compute_A", "compute_C", "inverse_dynamics", "bias", "forward_dynamics", "inverse_dynamics_derivatives",
        "forward_dynamics_derivatives"}


def _parts(x):
    return x if isinstance(x, tuple) else (x,)


# forward_dynamics_derivatives: solves with A, whose conditioning (~5e4 on these states) amplifies
# the fused multiply-adds placed differently in vector and scalar code (measured up to 1.2e-14)
RELATIVE = {"forward_dynamics_derivatives": 1e-13}


def _same_state(name, got, one):
    if name in SIMD:  # within 1e-14 relative, to the largest entry
        return np.abs(got - one).max() <= RELATIVE.get(name, 1e-14) * max(1.0, np.abs(one).max())
    return got.tobytes() == one.tobytes()


def _same_rows(name, got, i, one):
    """Row i of every output of a batch call equals the single call's output."""
    return all(_same_state(name, g[i], o) for g, o in zip(_parts(got), _parts(one), strict=True))


def _bits(x):
    return b"".join(a.tobytes() for a in _parts(x))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_batch_equals_per_state(name):
    call = KERNELS[name]
    s = _states(B + 8)  # more than one block of 8 lanes, and a tail
    got = call(s, P)
    one = call(_row(s, 0), P)
    for g, o in zip(_parts(got), _parts(one), strict=True):
        assert g.shape == (B + 8,) + o.shape and g.dtype == np.float64
    for i in range(B + 8):
        assert _same_rows(name, got, i, call(_row(s, i), P)), f"{name}: row {i}"
    s = _states()
    got = call(s, P)
    # default params, out= (written in place and returned), a list of lists
    outs = tuple(np.full(g.shape, np.nan) for g in _parts(got))
    res = call(s, P, out=outs if isinstance(got, tuple) else outs[0])
    assert all(r is o for r, o in zip(_parts(res), outs, strict=True)) and _bits(outs) == _bits(got)
    assert _bits(call({k: v.tolist() for k, v in s.items()}, P)) == _bits(got)
    ref = call(s, None)
    assert _same_rows(name, ref, B - 1, call(_row(s, B - 1), None))


def test_compute_all_batch_and_out():
    s = _states()
    got = kk.compute_all(s["q"], s["dq"], P)
    assert set(got) == {"A", "C", "Q", "friction"} | {f"J_{e}" for e in kk.END_EFFECTORS}
    for i in range(B):
        one = kk.compute_all(s["q"][i], s["dq"][i], P)
        for k in one:
            assert got[k][i].tobytes() == one[k].tobytes(), (k, i)
    # compute_all agrees with the single kernels (friction included)
    assert got["friction"].tobytes() == kk.friction(s["dq"], P).tobytes()
    # out=: the given arrays are filled and returned, the others allocated
    A = np.empty((B, N, N))
    res = kk.compute_all(s["q"], s["dq"], P, out={"A": A})
    assert res["A"] is A and A.tobytes() == got["A"].tobytes()
    assert res["C"].tobytes() == got["C"].tobytes()
    one_out = {k: np.empty(v.shape[1:]) for k, v in got.items()}
    res = kk.compute_all(s["q"][2], s["dq"][2], P, out=one_out)
    assert all(res[k] is one_out[k] and one_out[k].tobytes() == got[k][2].tobytes() for k in got)
    with pytest.raises(ValueError, match="out.*'B'"):
        kk.compute_all(s["q"][0], s["dq"][0], out={"B": np.empty(3)})
    with pytest.raises(ValueError, match=r"out\['Q'\]"):
        kk.compute_all(s["q"][0], s["dq"][0], out={"Q": np.empty(N + 1)})
    with pytest.raises(TypeError, match="out"):
        kk.compute_all(s["q"][0], s["dq"][0], out=[np.empty(N)])


def test_empty_batch_and_batch_of_one():
    s = _states(0)
    assert kk.compute_A(s["q"]).shape == (0, N, N)
    assert kk.fk(s["q"], 0).shape == (0, 4, 4)
    assert kk.compute_all(s["q"], s["dq"])["J_left"].shape == (0, 6, N)
    s = _states(1)
    assert kk.bias(s["q"], s["dq"]).tobytes() == kk.bias(s["q"][0], s["dq"][0]).tobytes()


def test_batch_input_checks():
    s = _states()
    # the other state arguments must match the batch (no broadcasting)
    with pytest.raises(ValueError, match=rf"dq must have shape \({B}, {N}\)"):
        kk.compute_C(s["q"], s["dq"][0])
    with pytest.raises(ValueError, match="ddq"):
        kk.inverse_dynamics(s["q"], s["dq"], s["ddq"][:-1])
    with pytest.raises(ValueError, match=r"\bq\b"):
        kk.compute_A(s["q"][:, :-1])
    # params are shared by the batch: (N_PARAMS,) only
    with pytest.raises(ValueError, match="params"):
        kk.compute_Q(s["q"], np.tile(P, (B, 1)))
    # every row finite; the error names the entry
    bad = s["q"].copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"q\[4, 2\]"):
        kk.fk(bad, "left")
    # byte order, alignment, strides: converted, the same numbers
    ref = kk.compute_A(s["q"])
    assert kk.compute_A(s["q"].astype(">f8")).tobytes() == ref.tobytes()
    assert kk.compute_A(np.asfortranarray(s["q"])).tobytes() == ref.tobytes()
    buf = bytearray(s["q"].nbytes + 4)
    mis = np.frombuffer(buf, dtype=np.float64, count=s["q"].size, offset=4).reshape(B, N)
    mis[...] = s["q"]
    assert kk.compute_A(mis).tobytes() == ref.tobytes()
    with pytest.raises(TypeError, match=r"\bq\b"):
        kk.compute_A(s["q"].astype(complex))
    # out= of a batch: exactly (B, ...), never converted
    with pytest.raises(ValueError, match="out"):
        kk.compute_Q(s["q"], out=np.empty(N))
    with pytest.raises(TypeError, match="out"):
        kk.compute_Q(s["q"], out=np.empty((B, N), dtype=np.float32))
    # the inputs are not written
    before = {k: v.copy() for k, v in s.items()}
    kk.forward_dynamics(s["q"], s["dq"], s["tau"])
    assert all(before[k].tobytes() == s[k].tobytes() for k in s)


def test_batch_out_may_overlap_the_inputs():
    """As for one state (the C ABI reads every input before writing), out=
    may overlap the inputs of a batch: the rows and the shared parameters."""
    s = _states(4)
    ref = kk.compute_Q(s["q"], P)
    q = s["q"].copy()
    assert kk.compute_Q(q, P, out=q).tobytes() == ref.tobytes()  # out is q
    buf = np.concatenate([s["q"].ravel(), np.zeros(N)])
    out = buf[N:].reshape(4, N)  # out shifted by one row: row i overwrites q's row i + 1
    assert kk.compute_Q(buf[:4 * N].reshape(4, N), P, out=out).tobytes() == ref.tobytes()
    p = np.concatenate([P, np.zeros(4 * N)])
    got = kk.compute_Q(s["q"], p[:NP], out=p[NP - 5:NP - 5 + 4 * N].reshape(4, N))  # over the params
    assert got.tobytes() == ref.tobytes()
    ref_all = kk.compute_all(s["q"], s["dq"], P)
    buf = np.concatenate([s["dq"].ravel(), np.zeros(N)])
    res = kk.compute_all(s["q"], buf[:4 * N].reshape(4, N), P, out={"friction": buf[N:].reshape(4, N)})
    assert all(res[k].tobytes() == ref_all[k].tobytes() for k in ref_all)


def test_batch_releases_the_gil():
    """A thread runs a long batch while this thread keeps running Python.
    With the GIL held through the C loop this thread could not run a single
    bytecode until the batch returned, so it would see the batch finished
    at its first look; it must instead count many steps while it runs."""
    rng = np.random.default_rng(0)
    n = 20000
    q, dq = rng.uniform(-3, 3, (n, N)), rng.uniform(-2, 2, (n, N))
    out = np.empty((n, N, N))
    for _attempt in range(3):
        started, finished = threading.Event(), threading.Event()

        def work():
            started.set()
            for _ in range(3):
                kk.compute_C(q, dq, out=out)
            finished.set()

        t = threading.Thread(target=work)
        t.start()
        started.wait()
        steps = 0
        while not finished.is_set():
            steps += 1
            finished.wait(0.0005)
        t.join()
        if steps >= 20:
            break
    assert steps >= 20, f"only {steps} steps of this thread while the batch ran"

"""Physics identities of the krang_kernels output, and input validation.

References come from reference/reference_fk.py (numpy forward kinematics of the
frame table in models/krang.toml), never from the kernels themselves:

* A symmetric positive definite;
* Adot - 2C skew-symmetric and C + C^T = Adot, Adot by central differences
  of compute_A along dq; C dq = Adot dq - dT/dq (this one also fixes the
  transpose of C); C linear in dq;
* Q = dU/dq with U = -sum g^T (m_k p_k + R_k MS_k) from numpy FK; Q = 0 at g = 0;
* A equals the numpy mass matrix sum_k J_k^T M_k J_k + diag(Ia);
* Jacobians equal finite differences of the numpy end-effector pose and the
  numpy geometric Jacobian;
* friction(dq) = Fv dq + Fc sign(dq);
* bad input is rejected with ValueError/TypeError naming the argument.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")

from reference.reference_fk import (  # noqa: E402
    KRANG_MODEL, NumericModel, load_model, random_physical_params, random_states, rel_err,
    time_derivative_fd, velocity_product_fd, worst_entry,
)

MODEL = load_model(KRANG_MODEL)
N = MODEL.ndof
H_ADOT = 1e-6  # step along dq (|dq| <= 3) for Adot; FD error ~1e-9 relative
H_GRAD = 1e-5  # step for dU/dq and the FK Jacobians; FD error ~1e-10 relative
TOL_FD = 1e-7  # identities involving Adot
TOL_FD_FK = 1e-8  # Q and Jacobians vs numpy FK differences
TOL_EXACT = 1e-10  # exact numpy references


def _param_sets():
    rng = np.random.default_rng(31337)
    sets = [("default", np.asarray(kk.default_params(), dtype=float))]
    sets += [(f"random{i}", random_physical_params(MODEL, rng)) for i in range(3)]
    return sets


PARAM_SETS = _param_sets()
IDS = [s[0] for s in PARAM_SETS]


def _states(seed, n):
    return list(zip(*random_states(np.random.default_rng(seed), n, N)))


def _msg(name, value, ref):
    idx, v, r = worst_entry(value, ref)
    return f"{name}: rel err {rel_err(value, ref):.3e}, worst entry {idx}: kernel {v!r}, reference {r!r}"


# ---- A -------------------------------------------------------------------------

@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_A_symmetric_positive_definite(label, params):
    for q, _ in _states(1, 200):
        A = kk.compute_A(q, params)
        assert A.shape == (N, N)
        scale = 1 + np.abs(A).max()
        assert np.abs(A - A.T).max() <= 1e-14 * scale, _msg("A - A^T", A, A.T)
        ev = np.linalg.eigvalsh(A)
        assert ev.min() > 1e-12 * scale, f"A not positive definite: eigenvalues {ev[:3]}"
        np.linalg.cholesky(A)


@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_A_matches_numpy_mass_matrix(label, params):
    nm = NumericModel(MODEL, params)
    for q, _ in _states(2, 20):
        A = kk.compute_A(q, params)
        ref = nm.mass_matrix(q)
        assert rel_err(A, ref) <= TOL_EXACT, _msg("A", A, ref)


# ---- C -------------------------------------------------------------------------

@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_Adot_minus_2C_skew_and_C_plus_CT(label, params):
    def Afun(x):
        return kk.compute_A(x, params)

    for q, dq in _states(3, 20):
        C = kk.compute_C(q, dq, params)
        Adot = time_derivative_fd(Afun, q, dq, H_ADOT)
        Nm = Adot - 2 * C
        scale = 1 + np.abs(Adot).max()
        assert np.abs(Nm + Nm.T).max() <= TOL_FD * scale, _msg("(Adot-2C) + (Adot-2C)^T", Nm + Nm.T, 0 * Nm)
        assert rel_err(C + C.T, Adot) <= TOL_FD, _msg("C + C^T vs Adot", C + C.T, Adot)


@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_C_dq_is_velocity_product(label, params):
    """C dq = Adot dq - d/dq (1/2 dq^T A dq): Lagrange's equations, which C^T fails."""
    def Afun(x):
        return kk.compute_A(x, params)

    for q, dq in _states(4, 10):
        c = kk.compute_C(q, dq, params) @ dq
        ref = velocity_product_fd(Afun, q, dq, H_ADOT)
        assert rel_err(c, ref) <= TOL_FD, _msg("C dq", c, ref)


@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_C_linear_in_dq(label, params):
    rng = np.random.default_rng(5)
    for q, dq in _states(5, 10):
        u = rng.uniform(-3, 3, N)
        a, b = rng.uniform(-2, 2, 2)
        lhs = kk.compute_C(q, a * dq + b * u, params)
        rhs = a * kk.compute_C(q, dq, params) + b * kk.compute_C(q, u, params)
        assert rel_err(lhs, rhs) <= 1e-12, _msg("C(a dq + b u)", lhs, rhs)
        assert np.abs(kk.compute_C(q, np.zeros(N), params)).max() == 0.0


# ---- Q -------------------------------------------------------------------------

@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_Q_is_gradient_of_potential_energy(label, params):
    nm = NumericModel(MODEL, params)
    for q, _ in _states(6, 10):
        Q = kk.compute_Q(q, params)
        assert Q.shape == (N,)
        ref = nm.gravity_fd(q, H_GRAD)
        assert rel_err(Q, ref) <= TOL_FD_FK, _msg("Q vs dU/dq", Q, ref)


def test_Q_vanishes_without_gravity():
    p0 = np.asarray(kk.params_from_dict({"g": 0.0}), dtype=float)
    for q, _ in _states(7, 10):
        assert np.abs(kk.compute_Q(q, p0)).max() == 0.0


def test_Q_linear_in_g():
    base = PARAM_SETS[1][1]
    names = list(kk.PARAM_NAMES)
    p2 = base.copy()
    p2[names.index("g")] *= 2.0
    for q, _ in _states(8, 10):
        assert rel_err(kk.compute_Q(q, p2), 2.0 * kk.compute_Q(q, base)) <= 1e-13


# ---- Jacobians -----------------------------------------------------------------

@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
@pytest.mark.parametrize("arm", ["left", "right"])
def test_jacobians_vs_fk(label, params, arm):
    nm = NumericModel(MODEL, params)
    for q, _ in _states(9, 6):
        Jw_fd, Jl_fd = nm.frame_jacobian_fd(q, arm, H_GRAD)
        Jw = kk.jacobian(q, arm, "world", params)
        Jl = kk.jacobian(q, arm, "local", params)
        assert Jw.shape == Jl.shape == (6, N)
        assert rel_err(Jw, Jw_fd) <= TOL_FD_FK, _msg(f"J_{arm} world vs FD of FK", Jw, Jw_fd)
        assert rel_err(Jl, Jl_fd) <= TOL_FD_FK, _msg(f"J_{arm} local vs FD of FK", Jl, Jl_fd)
        for fr, J in (("world", Jw), ("local", Jl)):
            ref = nm.frame_jacobian(q, arm, fr)
            assert rel_err(J, ref) <= TOL_EXACT, _msg(f"J_{arm} {fr} vs geometric", J, ref)
        R, _ = nm.pose(q, arm)
        assert rel_err(np.vstack([R @ Jl[:3], R @ Jl[3:]]), Jw) <= TOL_EXACT


def test_jacobian_columns_of_other_arm_are_zero():
    params = PARAM_SETS[1][1]
    left_only = [MODEL.frame(k).index for k in ("4l", "5l", "6l", "7l", "8l", "9l", "10l")]
    right_only = [MODEL.frame(k).index for k in ("4r", "5r", "6r", "7r", "8r", "9r", "10r")]
    for q, _ in _states(10, 5):
        for fr in ("world", "local"):
            assert np.all(kk.jacobian(q, "left", fr, params)[:, right_only] == 0.0)
            assert np.all(kk.jacobian(q, "right", fr, params)[:, left_only] == 0.0)
            assert np.abs(kk.jacobian(q, "left", fr, params)[:, left_only]).max() > 0


# ---- friction ------------------------------------------------------------------

@pytest.mark.parametrize("label,params", PARAM_SETS, ids=IDS)
def test_friction(label, params):
    nm = NumericModel(MODEL, params)
    for _, dq in _states(11, 20):
        f = kk.friction(dq, params)
        assert f.shape == (N,)
        ref = nm.friction(dq)
        assert rel_err(f, ref) <= 1e-14, _msg("friction", f, ref)


def test_friction_sign_at_zero_and_signs():
    rng = np.random.default_rng(12)
    params = random_physical_params(MODEL, rng)
    nm = NumericModel(MODEL, params)
    dq = rng.uniform(-3, 3, N)
    dq[::3] = 0.0
    dq[1] = -1e-300
    dq[2] = 5e-324
    f = kk.friction(dq, params)
    assert rel_err(f, nm.friction(dq)) <= 1e-14, _msg("friction", f, nm.friction(dq))


# ---- parameters ----------------------------------------------------------------

def test_params_from_dict():
    d = np.asarray(kk.default_params(), dtype=float)
    names = list(kk.PARAM_NAMES)
    p = np.asarray(kk.params_from_dict({"g": 1.25, "m_3": 7.5}), dtype=float)
    expected = d.copy()
    expected[names.index("g")] = 1.25
    expected[names.index("m_3")] = 7.5
    assert np.array_equal(p, expected)
    base = PARAM_SETS[2][1]
    p = np.asarray(kk.params_from_dict({"L1": 0.5}, base=base), dtype=float)
    expected = base.copy()
    expected[names.index("L1")] = 0.5
    assert np.array_equal(p, expected)
    full = dict(zip(names, base.tolist()))
    assert np.array_equal(np.asarray(kk.params_from_dict(full), dtype=float), base)


def test_params_from_dict_unknown_name():
    with pytest.raises(KeyError, match="m_99"):
        kk.params_from_dict({"m_99": 1.0})
    with pytest.raises(KeyError, match="q_w"):
        kk.params_from_dict({"g": 9.81, "q_w": 1.0})


# ---- input validation ----------------------------------------------------------

BAD = (ValueError, TypeError)
Q0 = np.linspace(-1, 1, N)
DQ0 = np.linspace(0.5, -0.5, N)


def _arg(name):
    return rf"\b{name}\b"


def _calls_with_q():
    return {
        "compute_A": lambda q: kk.compute_A(q),
        "compute_C": lambda q: kk.compute_C(q, DQ0),
        "compute_Q": lambda q: kk.compute_Q(q),
        "jacobian": lambda q: kk.jacobian(q, "left"),
        "compute_all": lambda q: kk.compute_all(q, DQ0),
    }


def _calls_with_dq():
    return {
        "compute_C": lambda dq: kk.compute_C(Q0, dq),
        "friction": lambda dq: kk.friction(dq),
        "compute_all": lambda dq: kk.compute_all(Q0, dq),
    }


def _calls_with_params():
    return {
        "compute_A": lambda p: kk.compute_A(Q0, p),
        "compute_C": lambda p: kk.compute_C(Q0, DQ0, p),
        "compute_Q": lambda p: kk.compute_Q(Q0, p),
        "jacobian": lambda p: kk.jacobian(Q0, "right", "local", p),
        "friction": lambda p: kk.friction(DQ0, p),
        "compute_all": lambda p: kk.compute_all(Q0, DQ0, p),
    }


def _bad_vectors(n):
    nan = np.full(n, 0.1)
    nan[3] = np.nan
    inf = np.full(n, 0.1)
    inf[-1] = np.inf
    ninf = np.full(n, 0.1)
    ninf[0] = -np.inf
    return {
        "short": np.zeros(n - 1),
        "long": np.zeros(n + 1),
        "empty": np.zeros(0),
        "scalar": 0.5,
        "3d": np.zeros((2, 1, n)),  # (2, n) is a batch (tests/test_batches.py)
        "strings": ["a"] * n,
        "none_items": [None] * n,
        "none": None,
        "text": "0" * n,
        "nan": nan,
        "inf": inf,
        "-inf": ninf,
    }


@pytest.mark.parametrize("fn", sorted(_calls_with_q()))
@pytest.mark.parametrize("bad", sorted(_bad_vectors(N)))
def test_bad_q(fn, bad):
    with pytest.raises(BAD, match=_arg("q")):
        _calls_with_q()[fn](_bad_vectors(N)[bad])


@pytest.mark.parametrize("fn", sorted(_calls_with_dq()))
@pytest.mark.parametrize("bad", sorted(_bad_vectors(N)))
def test_bad_dq(fn, bad):
    with pytest.raises(BAD, match=_arg("dq")):
        _calls_with_dq()[fn](_bad_vectors(N)[bad])


@pytest.mark.parametrize("fn", sorted(_calls_with_params()))
@pytest.mark.parametrize("bad", sorted(set(_bad_vectors(N)) - {"none"}))
def test_bad_params(fn, bad):
    P = len(kk.PARAM_NAMES)
    with pytest.raises(BAD, match=_arg("params")):
        _calls_with_params()[fn](_bad_vectors(P)[bad])


def _out_cases():
    return {
        "compute_A": (lambda out: kk.compute_A(Q0, out=out), (N, N)),
        "compute_C": (lambda out: kk.compute_C(Q0, DQ0, out=out), (N, N)),
        "compute_Q": (lambda out: kk.compute_Q(Q0, out=out), (N,)),
        "jacobian": (lambda out: kk.jacobian(Q0, "left", "local", out=out), (6, N)),
        "friction": (lambda out: kk.friction(DQ0, out=out), (N,)),
    }


def _bad_outs(shape):
    big = tuple(2 * s for s in shape)
    return {
        "extra_axis": np.zeros(shape + (1,)),
        "extra_column": np.zeros((shape[0], shape[1] + 1) if len(shape) == 2 else (shape[0], 1)),
        "transposed": np.zeros(shape[::-1] if shape[0] != shape[-1] else (shape[0] + 1, shape[0])),
        "too_small": np.zeros(tuple(s - 1 for s in shape)),
        "flat": np.zeros(int(np.prod(shape)) if len(shape) == 2 else shape[0] + 1),
        "float32": np.zeros(shape, dtype=np.float32),
        "int": np.zeros(shape, dtype=np.int64),
        "complex": np.zeros(shape, dtype=np.complex128),
        "strided": np.zeros(big)[tuple(slice(None, None, 2) for _ in shape)],
        "fortran": np.asfortranarray(np.zeros(shape)) if len(shape) == 2 else np.zeros(big)[::2],
        "list": np.zeros(shape).tolist(),
        "readonly": _readonly(shape),
    }


def _readonly(shape):
    a = np.zeros(shape)
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("fn", sorted(_out_cases()))
@pytest.mark.parametrize("bad", sorted(_bad_outs((3, 3))))
def test_bad_out(fn, bad):
    call, shape = _out_cases()[fn]
    out = _bad_outs(shape)[bad]
    if isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == shape:
        assert not (out.flags.c_contiguous and out.flags.writeable)
    with pytest.raises(BAD, match=_arg("out")):
        call(out)


@pytest.mark.parametrize("ee", ["", "Left", "both", "l", None, 2, -1, True, 1.0, b"left"])
def test_bad_ee(ee):
    # an end effector is a name in kk.END_EFFECTORS or its index (0 = "left")
    with pytest.raises(BAD, match=_arg("ee")):
        kk.jacobian(Q0, ee)


@pytest.mark.parametrize("frame", ["", "World", "base", "global", None, 1])
def test_bad_frame(frame):
    with pytest.raises(BAD, match=_arg("frame")):
        kk.jacobian(Q0, "left", frame)


def test_valid_sequences_accepted():
    A = kk.compute_A(Q0)
    assert np.array_equal(kk.compute_A(Q0.tolist()), A)
    assert np.array_equal(kk.compute_A(tuple(Q0.tolist())), A)
    qi = [int(x) for x in np.arange(N) % 3 - 1]
    assert np.array_equal(kk.compute_A(qi), kk.compute_A(np.array(qi, dtype=float)))
    p = np.asarray(kk.default_params(), dtype=float)
    assert np.array_equal(kk.compute_C(Q0.tolist(), DQ0.tolist(), p.tolist()), kk.compute_C(Q0, DQ0, p))
    # non-contiguous float64 *inputs* are fine (only `out` must be C-contiguous)
    qs = np.zeros(2 * N)
    qs[::2] = Q0
    assert np.array_equal(kk.compute_A(qs[::2]), A)


def test_inputs_not_modified():
    q, dq = Q0.copy(), DQ0.copy()
    p = np.asarray(kk.default_params(), dtype=float).copy()
    p0 = p.copy()
    kk.compute_all(q, dq, p)
    kk.friction(dq, p)
    kk.jacobian(q, "right", "local", p)
    assert np.array_equal(q, Q0) and np.array_equal(dq, DQ0) and np.array_equal(p, p0)


def test_results_are_fresh_arrays():
    A1 = kk.compute_A(Q0)
    A2 = kk.compute_A(Q0)
    assert not np.shares_memory(A1, A2)
    A1[:] = math.nan
    assert np.all(np.isfinite(kk.compute_A(Q0)))

"""Textbook cases from the reference documents, checked symbolically.

Every expected value here is typed in by hand from the documents' text (or, for the
Jacobians of the tool frames, from elementary kinematics written out below);
nothing expected is computed with the generator itself.

* planar2r.toml  - Burschka, "Dynamics examples" (and Craig): 2R arm with point
  masses in a vertical plane, closed-form torques eq. (6.58).
* pr.toml        - De Luca, "Dynamic model of robots: Lagrangian approach": PR robot, M(q), C_k(q), c(q, qdot).
* pendulum.toml  - De Luca (the same notes): actuated pendulum with motor
  inertia, I = I_l + m d^2 + I_m n_r^2 via Ia = I_m n_r^2 (Zafar 2015, the Krang report, eq. 18).
* mini.toml      - not a textbook case: the 3-DOF test model (file checks
  only, plus shape/consistency smoke checks of the generator on it).

The generator under test: codegen.derive.outputs.closed_form(model, method) for
method in ("lagrange", "recursive").
"""
from __future__ import annotations

import functools
import importlib.util
import random
from pathlib import Path

import pytest
import sympy as sp

from codegen.read.model import load_model, load_param_values

pytestmark = pytest.mark.module

MODELS = Path(__file__).resolve().parent / "models"
METHODS = ("lagrange", "recursive")
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")

# Skip only when the generator module genuinely does not exist; if it exists
# but fails to import, the error must surface as a failure.
_HAVE_DERIVE = importlib.util.find_spec("codegen.derive.outputs") is not None
needs_generator = pytest.mark.skipif(not _HAVE_DERIVE, reason="codegen/derive/outputs.py does not exist yet")
by_method = pytest.mark.parametrize("method", METHODS)


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def model(name):
    return load_model(MODELS / f"{name}.toml")


@functools.lru_cache(maxsize=None)
def derive(name, method):
    from codegen.derive.outputs import closed_form

    return closed_form(model(name), method)


def is_zero(expr) -> bool:
    expr = sp.expand(sp.expand_trig(sp.sympify(expr)))
    if expr == 0:
        return True
    return sp.simplify(expr) == 0


def assert_same(got, expected, what):
    got = sp.Matrix(got)
    expected = sp.Matrix(expected)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    bad = []
    for i in range(got.rows):
        for j in range(got.cols):
            if not is_zero(got[i, j] - expected[i, j]):
                bad.append(f"  [{i},{j}] got {sp.simplify(got[i, j])}  expected {expected[i, j]}")
    assert not bad, f"{what} differs from the seed:\n" + "\n".join(bad)


def steiner(m, S, Ic):
    """Inertia about the frame origin, J = I_c + m (S^T S 1 - S S^T)."""
    S = sp.Matrix(S)
    return sp.Matrix(Ic) + m * ((S.T * S)[0, 0] * sp.eye(3) - S * S.T)


def body(p, key, m, S, Ic=None):
    """Standard parameters of frame `key` for a body of mass m, centre of mass
    S (in the frame) and inertia Ic about the centre of mass (zero for a point
    mass). XY etc. are the entries of the inertia matrix (minus the product
    integrals), as in the Krang report's inertiaMat (Zafar 2015)."""
    J = steiner(m, S, sp.zeros(3) if Ic is None else Ic)
    out = {p[f"m_{key}"]: m}
    for n, s in zip(("MX", "MY", "MZ"), S):
        out[p[f"{n}_{key}"]] = m * s
    for n, (i, j) in zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ"), ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        out[p[f"{n}_{key}"]] = J[i, j]
    return out


def substitution(res, given, keep=()):
    """`given` plus 0 for every other parameter, except geometry, g and the
    names in `keep` (left as free symbols)."""
    mdl_keep = set(keep) | {"g"}
    out = dict(given)
    for name, sym in res["params"].items():
        if sym in out or name in mdl_keep:
            continue
        if name.split("_", 1)[0] in INERTIAL + ("Ia", "Fv", "Fc"):
            out[sym] = 0
    return out


def general_inertia(prefix):
    """A general symmetric inertia matrix about the centre of mass."""
    xx, xy, xz, yy, yz, zz = sp.symbols(f"{prefix}xx {prefix}xy {prefix}xz {prefix}yy {prefix}yz {prefix}zz", real=True)
    return sp.Matrix([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]), zz


def christoffel(M, q, dq):
    """C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) dq_k (De Luca's Lagrangian notes; Zafar 2015 eq. 4)."""
    n = len(q)
    return sp.Matrix(n, n, lambda i, j: sum(
        sp.Rational(1, 2) * (sp.diff(M[i, j], q[k]) + sp.diff(M[i, k], q[j]) - sp.diff(M[j, k], q[i])) * dq[k]
        for k in range(n)))


def tau_of(res, sub, ddq):
    A, C, Q = (res[k].subs(sub) for k in ("A", "C", "Q"))
    return A * sp.Matrix(ddq) + C * sp.Matrix(res["dq"]) + Q


def check_structure(res, n, ees):
    for key in ("A", "C", "Q", "friction", "q", "dq", "params"):
        assert key in res, f"closed_form result lacks {key!r}"
    assert res["A"].shape == (n, n)
    assert res["C"].shape == (n, n)
    assert res["Q"].shape == (n, 1)
    assert res["friction"].shape == (n, 1)
    assert len(res["q"]) == n and len(res["dq"]) == n
    for s in list(res["q"]) + list(res["dq"]) + list(res["params"].values()):
        assert isinstance(s, sp.Symbol) and s.is_real, s
    for e in ees:
        for frame in ("world", "local"):
            assert res[f"J_{e}_{frame}"].shape == (6, n), f"J_{e}_{frame}"


def assert_skew_mdot_2c(res, sub):
    """Seed 001, 'A structural property': with C built from Christoffel symbols,
    dM/dt - 2C is skew-symmetric."""
    A = res["A"].subs(sub)
    C = res["C"].subs(sub)
    q, dq = res["q"], res["dq"]
    Adot = sum((sp.diff(A, qk) * dqk for qk, dqk in zip(q, dq)), sp.zeros(*A.shape))
    N = Adot - 2 * C
    assert_same(N + N.T, sp.zeros(*A.shape), "dA/dt - 2C + (dA/dt - 2C)^T")


# ----------------------------------------------------------------------------
# planar 2R arm, point masses, vertical plane: Burschka, "Dynamics examples", eq. (6.58)
# ----------------------------------------------------------------------------

def planar2r_case(method):
    res = derive("planar2r", method)
    p = res["params"]
    l1, l2, g = p["l1"], p["l2"], p["g"]
    m1, m2 = p["m_1"], p["m_2"]
    # 1P_C1 = l1 X_1, 2P_C2 = l2 X_2, zero inertia about the centre of mass.
    given = {**body(p, "1", m1, (l1, 0, 0)), **body(p, "2", m2, (l2, 0, 0))}
    sub = substitution(res, given, keep=("l1", "l2"))
    t1, t2 = res["q"]
    dt1, dt2 = res["dq"]
    ddt1, ddt2 = sp.symbols("ddtheta1 ddtheta2", real=True)
    s2, c2 = sp.sin(t2), sp.cos(t2)
    c1, c12 = sp.cos(t1), sp.cos(t1 + t2)
    # eq. (6.58), typed from the seed
    tau1 = (m2 * l2**2 * (ddt1 + ddt2) + m2 * l1 * l2 * c2 * (2 * ddt1 + ddt2) + (m1 + m2) * l1**2 * ddt1
            - m2 * l1 * l2 * s2 * dt2**2 - 2 * m2 * l1 * l2 * s2 * dt1 * dt2
            + m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1)
    tau2 = m2 * l1 * l2 * c2 * ddt1 + m2 * l1 * l2 * s2 * dt1**2 + m2 * l2 * g * c12 + m2 * l2**2 * (ddt1 + ddt2)
    tau = sp.Matrix([tau1, tau2])
    return res, sub, tau, (ddt1, ddt2)


@needs_generator
@by_method
def test_planar2r_structure(method):
    check_structure(derive("planar2r", method), 2, ["tip"])


@needs_generator
@by_method
def test_planar2r_full_torque_eq_6_58(method):
    """tau = A qdd + C qd + Q equals eq. (6.58) of Burschka's "Dynamics examples"."""
    res, sub, tau, ddq = planar2r_case(method)
    assert_same(tau_of(res, sub, ddq), tau, "planar2r tau = A qdd + C qd + Q")


@needs_generator
@by_method
def test_planar2r_inertia_matrix(method):
    """A equals the coefficient matrix of the accelerations in eq. (6.58)."""
    res, sub, tau, ddq = planar2r_case(method)
    M_seed = tau.jacobian(sp.Matrix(ddq))
    assert_same(res["A"].subs(sub), M_seed, "planar2r A")
    assert_same(res["A"], res["A"].T, "planar2r A symmetric (unsubstituted)")


@needs_generator
@by_method
def test_planar2r_coriolis(method):
    """C qd equals the velocity terms of eq. (6.58); C equals the Christoffel
    matrix of the seed's M(q)."""
    res, sub, tau, ddq = planar2r_case(method)
    q, dq = res["q"], res["dq"]
    g = res["params"]["g"]
    M_seed = tau.jacobian(sp.Matrix(ddq))
    vel_terms = tau.subs({ddq[0]: 0, ddq[1]: 0, g: 0})
    C = res["C"].subs(sub)
    assert_same(C * sp.Matrix(dq), vel_terms, "planar2r C qd")
    assert_same(C, christoffel(M_seed, q, dq), "planar2r C (Christoffel)")
    assert_skew_mdot_2c(res, sub)


@needs_generator
@by_method
def test_planar2r_gravity(method):
    """Q equals the gravity terms of eq. (6.58)."""
    res, sub, tau, ddq = planar2r_case(method)
    dq = res["dq"]
    grav = tau.subs({ddq[0]: 0, ddq[1]: 0, dq[0]: 0, dq[1]: 0})
    assert_same(res["Q"].subs(sub), grav, "planar2r Q")


@needs_generator
@by_method
def test_planar2r_no_friction_without_parameters(method):
    res, sub, _, _ = planar2r_case(method)
    assert_same(res["friction"].subs(sub), sp.zeros(2, 1), "planar2r friction with Fv = Fc = 0")


@needs_generator
@by_method
def test_planar2r_tip_jacobian(method):
    """Tip of link 2 (frame 3 at l2 X_2). Not in Burschka's examples; the classical
    result (Craig, eqs. 5.66/5.67): in frame 0
      v = [[-l1 s1 - l2 s12, -l2 s12], [l1 c1 + l2 c12, l2 c12], [0, 0]],
    in the tip frame (rotated by theta1 + theta2)
      v = [[l1 s2, 0], [l1 c2 + l2, l2], [0, 0]];  omega = [[0,0],[0,0],[1,1]]
    in both."""
    res = derive("planar2r", method)
    p = res["params"]
    l1, l2 = p["l1"], p["l2"]
    t1, t2 = res["q"]
    s1, c1, s2, c2 = sp.sin(t1), sp.cos(t1), sp.sin(t2), sp.cos(t2)
    s12, c12 = sp.sin(t1 + t2), sp.cos(t1 + t2)
    world = sp.Matrix([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12], [0, 0],
                       [0, 0], [0, 0], [1, 1]])
    local = sp.Matrix([[l1 * s2, 0], [l1 * c2 + l2, l2], [0, 0], [0, 0], [0, 0], [1, 1]])
    assert_same(res["J_tip_world"], world, "planar2r J_tip_world")
    assert_same(res["J_tip_local"], local, "planar2r J_tip_local")


# ----------------------------------------------------------------------------
# PR robot on a horizontal plane: De Luca, "Dynamic model of robots: Lagrangian approach"
# ----------------------------------------------------------------------------

def pr_case(method):
    res = derive("pr", method)
    p = res["params"]
    m1, m2 = p["m_1"], p["m_2"]
    dc2 = sp.Symbol("d_c2", positive=True)
    # Link 2: centre of mass at d_c2 X_2, a general inertia I_c2 about it (only
    # I_c2,zz may appear in the result).
    Ic2, Ic2zz = general_inertia("Ic2_")
    given = body(p, "2", m2, (dc2, 0, 0), Ic2)
    given[p["m_1"]] = m1
    # Link 1 only translates: none of its parameters other than m_1 may appear
    # (the seed's d_c1 drops out), so MX_1..ZZ_1 are left as free symbols.
    keep = [f"{n}_1" for n in INERTIAL[1:]]
    sub = substitution(res, given, keep=keep)
    q1, q2 = res["q"]
    M_seed = sp.Matrix([[m1 + m2, -m2 * dc2 * sp.sin(q2)],
                        [-m2 * dc2 * sp.sin(q2), Ic2zz + m2 * dc2**2]])
    return res, sub, M_seed, dc2


@needs_generator
@by_method
def test_pr_structure(method):
    check_structure(derive("pr", method), 2, ["tip"])


@needs_generator
@by_method
def test_pr_inertia_matrix(method):
    res, sub, M_seed, _ = pr_case(method)
    assert_same(res["A"].subs(sub), M_seed, "PR A = M(q)")


@needs_generator
@by_method
def test_pr_coriolis(method):
    """c(q, qd) = (-m2 d_c2 cos q2 qd2^2, 0); C_1(q) = [[0, 0], [0, -m2 d_c2 cos q2]],
    C_2(q) = 0, so the rows of the factorization are S_k = qd^T C_k(q)."""
    res, sub, M_seed, dc2 = pr_case(method)
    q, dq = res["q"], res["dq"]
    m2 = res["params"]["m_2"]
    q2 = q[1]
    c_seed = sp.Matrix([-m2 * dc2 * sp.cos(q2) * dq[1] ** 2, 0])
    C1 = sp.Matrix([[0, 0], [0, -m2 * dc2 * sp.cos(q2)]])
    C2 = sp.zeros(2, 2)
    qd = sp.Matrix(dq)
    S_seed = sp.Matrix.vstack(qd.T * C1, qd.T * C2)
    # my typing of the seed is self-consistent
    assert_same(S_seed, christoffel(M_seed, q, dq), "seed's S vs Christoffel of the seed's M")
    assert_same(S_seed * qd, c_seed, "seed's S qd vs seed's c")
    C = res["C"].subs(sub)
    assert_same(C * qd, c_seed, "PR C qd")
    assert_same(C, S_seed, "PR C (Christoffel)")
    assert_skew_mdot_2c(res, sub)


@needs_generator
@by_method
def test_pr_gravity_vanishes_on_horizontal_plane(method):
    res, sub, _, _ = pr_case(method)
    assert_same(res["Q"].subs(sub), sp.zeros(2, 1), "PR Q (horizontal plane)")


@needs_generator
@by_method
def test_pr_full_model(method):
    """M(q) qdd + c(q, qd) = u (De Luca's Lagrangian notes, last PR slide)."""
    res, sub, M_seed, dc2 = pr_case(method)
    m2 = res["params"]["m_2"]
    q2, dq2 = res["q"][1], res["dq"][1]
    ddq = sp.symbols("ddq1 ddq2", real=True)
    u = M_seed * sp.Matrix(ddq) + sp.Matrix([-m2 * dc2 * sp.cos(q2) * dq2**2, 0])
    assert_same(tau_of(res, sub, ddq), u, "PR u")


@needs_generator
@by_method
def test_pr_tip_jacobian(method):
    """Tool frame at l2 X_2 (not in the seed): position (q1 + l2 c2, l2 s2, 0).
    Frame 0: v = [[1, -l2 s2], [0, l2 c2], [0, 0]]; tool frame (rotated by q2):
    v = [[c2, 0], [-s2, l2], [0, 0]]; omega = [[0, 0], [0, 0], [0, 1]] in both."""
    res = derive("pr", method)
    l2 = res["params"]["l2"]
    q2 = res["q"][1]
    s2, c2 = sp.sin(q2), sp.cos(q2)
    world = sp.Matrix([[1, -l2 * s2], [0, l2 * c2], [0, 0], [0, 0], [0, 0], [0, 1]])
    local = sp.Matrix([[c2, 0], [-s2, l2], [0, 0], [0, 0], [0, 0], [0, 1]])
    assert_same(res["J_tip_world"], world, "PR J_tip_world")
    assert_same(res["J_tip_local"], local, "PR J_tip_local")


# ----------------------------------------------------------------------------
# actuated pendulum with motor inertia: De Luca's notes (+ Zafar 2015 eqs. 17, 18)
# ----------------------------------------------------------------------------

def pendulum_case(method):
    res = derive("pendulum", method)
    p = res["params"]
    m, g0 = p["m_1"], p["g"]
    d = sp.Symbol("d", positive=True)
    I_m, n_r, b_l, b_m = sp.symbols("I_m n_r b_l b_m", positive=True)
    Ic, I_l = general_inertia("Il_")  # I_l: link inertia about the z axis through the CoM
    given = body(p, "1", m, (d, 0, 0), Ic)
    given[p["Ia_1"]] = I_m * n_r**2  # Zafar 2015 eq. (18): Ia = N^2 J_m
    given[p["Fv_1"]] = b_l + b_m * n_r**2  # De Luca: dissipation referred to the link side
    given[p["Fc_1"]] = 0
    sub = substitution(res, given, keep=("l",))
    sym = dict(m=m, g0=g0, d=d, I_m=I_m, n_r=n_r, b_l=b_l, b_m=b_m, I_l=I_l,
               I=I_l + m * d**2 + I_m * n_r**2)
    return res, sub, sym


@needs_generator
@by_method
def test_pendulum_structure(method):
    check_structure(derive("pendulum", method), 1, ["tip"])


@needs_generator
@by_method
def test_pendulum_inertia(method):
    """T = 1/2 (I_l + m d^2 + I_m n_r^2) thetadot^2."""
    res, sub, s = pendulum_case(method)
    assert_same(res["A"].subs(sub), sp.Matrix([[s["I"]]]), "pendulum A = I")


@needs_generator
@by_method
def test_pendulum_no_coriolis(method):
    res, sub, s = pendulum_case(method)
    assert_same(res["C"].subs(sub), sp.zeros(1, 1), "pendulum C")


@needs_generator
@by_method
def test_pendulum_gravity(method):
    """U = U_0 - m g_0 d cos(theta)  =>  Q = dU/dtheta = m g_0 d sin(theta)."""
    res, sub, s = pendulum_case(method)
    theta = res["q"][0]
    assert_same(res["Q"].subs(sub), sp.Matrix([s["m"] * s["g0"] * s["d"] * sp.sin(theta)]), "pendulum Q")


@needs_generator
@by_method
def test_pendulum_full_model_with_viscous_friction(method):
    """I thetadd + m g_0 d sin(theta) = n_r tau_m - (b_l + b_m n_r^2) thetad (F_x = 0):
    the motor must supply n_r tau_m = A thetadd + C thetad + Q + friction."""
    res, sub, s = pendulum_case(method)
    theta, dtheta = res["q"][0], res["dq"][0]
    ddtheta = sp.Symbol("ddtheta", real=True)
    nr_tau_m = s["I"] * ddtheta + s["m"] * s["g0"] * s["d"] * sp.sin(theta) + (s["b_l"] + s["b_m"] * s["n_r"] ** 2) * dtheta
    got = tau_of(res, sub, [ddtheta]) + res["friction"].subs(sub)
    assert_same(got, sp.Matrix([nr_tau_m]), "pendulum n_r tau_m")


@needs_generator
@by_method
def test_pendulum_coulomb_friction(method):
    """Seed 003 eq. (17): Gamma_f = diag(qd) Fv + diag(sign(qd)) Fc."""
    res = derive("pendulum", method)
    p = res["params"]
    dq = res["dq"][0]
    f = res["friction"][0]
    Fv, Fc = p["Fv_1"], p["Fc_1"]
    for v in (sp.Rational(7, 10), -sp.Rational(3, 2)):
        got = f.subs(dq, v)
        assert is_zero(got - (Fv * v + Fc * sp.sign(v))), f"friction at qd = {v}: {got}"


@needs_generator
@by_method
def test_pendulum_tip_jacobian(method):
    """Seed 001: pdot_x = l cos(theta) thetadot. The rest by the same
    kinematics: p = (l sin(theta), -l cos(theta), 0), omega = thetadot Z_0;
    in the tip frame v = (0, l, 0) thetadot."""
    res = derive("pendulum", method)
    l = res["params"]["l"]
    theta = res["q"][0]
    Jw = res["J_tip_world"]
    assert is_zero(Jw[0, 0] - l * sp.cos(theta)), f"J_x = {Jw[0, 0]}, seed: l cos(theta)"
    assert_same(Jw, sp.Matrix([l * sp.cos(theta), l * sp.sin(theta), 0, 0, 0, 1]), "pendulum J_tip_world")
    assert_same(res["J_tip_local"], sp.Matrix([0, l, 0, 0, 0, 1]), "pendulum J_tip_local")


# ----------------------------------------------------------------------------
# mini.toml: the 3-DOF test model
# ----------------------------------------------------------------------------

def test_mini_model_shape():
    mdl = model("mini")
    assert mdl.ndof == 3
    assert mdl.joint_names == ("q_base", "q_a", "q_b")
    types = {f.key: f.type for f in mdl.frames}
    assert types == {"1": "revolute", "a": "revolute", "ta": "fixed", "b": "prismatic"}
    parents = {f.key: f.parent for f in mdl.frames}
    assert parents == {"1": "0", "a": "1", "ta": "a", "b": "1"}  # the base branches into a and b
    assert mdl.frame("a").axis != mdl.frame("b").axis
    for f in mdl.frames:
        assert f.rotation != sp.eye(3), f"frame {f.key}: identity rotation"
        assert any(o != 0 for o in f.origin), f"frame {f.key}: zero origin"
        assert set(f.rotation) <= {-1, 0, 1}
    assert {e.name: e.frame for e in mdl.end_effectors} == {"tool": "ta", "slider": "b"}


def test_mini_params_physically_valid():
    mdl = model("mini")
    vals = dict(zip(mdl.param_names, load_param_values(MODELS / "mini_params.toml", mdl)))
    assert vals["g"] > 0
    assert all(vals[n] > 0 for n in mdl.geometry)
    for f in mdl.frames:
        k = f.key
        m = sp.nsimplify(vals[f"m_{k}"], rational=True)
        assert m > 0, k
        S = sp.Matrix([sp.nsimplify(vals[f"{n}_{k}"], rational=True) for n in ("MX", "MY", "MZ")]) / m
        J = sp.Matrix([[vals[f"{a}_{k}"] for a in row] for row in
                       (("XX", "XY", "XZ"), ("XY", "YY", "YZ"), ("XZ", "YZ", "ZZ"))]).applyfunc(
            lambda v: sp.nsimplify(v, rational=True))
        Ic = J - m * ((S.T * S)[0, 0] * sp.eye(3) - S * S.T)
        ev = sorted(float(e) for e in Ic.evalf().eigenvals(multiple=True))
        assert ev[0] > 0, f"frame {k}: inertia about the CoM not positive definite: {ev}"
        assert ev[0] + ev[1] > ev[2], f"frame {k}: triangle inequality violated: {ev}"
    for n in mdl.param_names:
        if n.split("_", 1)[0] in ("Ia", "Fv", "Fc"):
            assert vals[n] >= 0, n
    assert any(vals[n] > 0 for n in mdl.param_names if n.startswith("Ia_"))
    assert any(vals[n] > 0 for n in mdl.param_names if n.startswith("Fv_"))
    assert any(vals[n] > 0 for n in mdl.param_names if n.startswith("Fc_"))


@needs_generator
@by_method
def test_mini_structure(method):
    res = derive("mini", method)
    check_structure(res, 3, ["tool", "slider"])
    assert_same(res["A"], res["A"].T, "mini A symmetric")


@needs_generator
def test_mini_methods_agree_numerically():
    """Both methods give the same A, C qd, Q and Jacobians at random states
    with the mini_params values (consistency, not a textbook value)."""
    mdl = model("mini")
    vals = dict(zip(mdl.param_names, load_param_values(MODELS / "mini_params.toml", mdl)))
    lag, rec = derive("mini", "lagrange"), derive("mini", "recursive")
    rng = random.Random(4)
    keys = ["A", "Q", "friction"] + [f"J_{e}_{w}" for e in ("tool", "slider") for w in ("world", "local")]
    for _ in range(3):
        state = [rng.uniform(-2, 2) for _ in range(6)]

        def num(res, expr):
            sub = {res["params"][n]: v for n, v in vals.items()}
            sub.update(zip(list(res["q"]) + list(res["dq"]), state))
            return sp.Matrix(expr).subs(sub).evalf()

        for k in keys:
            d = num(lag, lag[k]) - num(rec, rec[k])
            assert max(abs(x) for x in d) < 1e-9, f"{k}: lagrange and recursive differ by {d}"
        d = num(lag, lag["C"] * sp.Matrix(lag["dq"])) - num(rec, rec["C"] * sp.Matrix(rec["dq"]))
        assert max(abs(x) for x in d) < 1e-9, f"C qd: lagrange and recursive differ by {d}"

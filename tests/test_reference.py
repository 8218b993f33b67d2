"""Checks of the references themselves (no generated kernels needed).

reference/reference_fk.py (numpy, from the frame table) and reference/pin_reference.py
(Pinocchio built from the same frame table) are two independent routes to the
same physics; here they are checked against each other and against
Pinocchio's own identities, and the comparison helper is shown to catch
plausible kernel bugs. Runs for the Krang model and for a small synthetic
model with a prismatic joint, an unaligned axis, non-trivial rotations and
fixed frames (one of them an end effector).
"""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.unit

pin = pytest.importorskip("pinocchio")

from reference.pin_reference import build_pin_model, compare, pin_reference  # noqa: E402
from reference.reference_fk import (  # noqa: E402
    KRANG_MODEL, KRANG_PARAMS, NumericModel, com_form, load_model, load_param_values,
    random_physical_params, random_states, rel_err, time_derivative_fd,
    velocity_product_fd,
)
from codegen.read.model import parse_model  # noqa: E402

SMALL_MODEL = """
name = "small"
geometry = ["a", "b", "c"]
gravity = [0.6, 0, -0.8]

[[end_effector]]
name = "tip"
frame = "tool"

[[end_effector]]
name = "side"
frame = "s2"

[[frame]]
key = "1"
parent = "0"
joint = "q1"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "a"]

[[frame]]
key = "2"
parent = "1"
joint = "q2"
type = "prismatic"
axis = [0.6, 0.8, 0]
rotation = [[0.6, -0.8, 0], [0.8, 0.6, 0], [0, 0, 1]]
origin = ["b", "0", "a/2"]

[[frame]]
key = "m"
parent = "2"
type = "fixed"
rotation = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
origin = ["c", "-b", "0"]

[[frame]]
key = "3"
parent = "m"
joint = "q3"
type = "revolute"
axis = [0, 0.8, -0.6]
rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
origin = ["a + c", "0", "b"]

[[frame]]
key = "tool"
parent = "3"
type = "fixed"
rotation = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
origin = ["0", "c", "-a"]

[[frame]]
key = "s1"
parent = "1"
joint = "q4"
type = "revolute"
axis = [1, 0, 0]
rotation = [[0.28, -0.96, 0], [0.96, 0.28, 0], [0, 0, 1]]
origin = ["0", "b", "0"]

[[frame]]
key = "s2"
parent = "s1"
joint = "q5"
type = "prismatic"
axis = [0, 0, -1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["c", "0", "0"]
"""

N_STATES = 30


def _krang():
    return load_model(KRANG_MODEL)


def _small():
    return parse_model(SMALL_MODEL, "small.toml")


MODELS = {"krang": _krang, "small": _small}


def _cases(model, n_sets=3, seed=7):
    rng = np.random.default_rng(seed)
    out = [random_physical_params(model, rng) for _ in range(n_sets)]
    if model.name == "krang" and KRANG_PARAMS.exists():
        try:
            out.append(np.array(load_param_values(KRANG_PARAMS, model)))
        except ValueError:
            pass  # the defaults file is validated elsewhere
    return out


@pytest.fixture(params=sorted(MODELS), scope="module")
def model(request):
    return MODELS[request.param]()


def _states(model, seed, n=N_STATES):
    return zip(*random_states(np.random.default_rng(seed), n, model.ndof))


def test_small_model_structure():
    m = _small()
    assert m.ndof == 5
    assert [f.type for f in m.frames] == ["revolute", "prismatic", "fixed", "revolute", "fixed", "revolute", "prismatic"]
    pm, ee = build_pin_model(m, random_physical_params(m, np.random.default_rng(0)))
    assert pm.njoints == 6  # universe + 5
    # the fixed frame "m" is merged into joint 2's body, "tool" into joint 3's
    assert pm.frames[ee["tip"]].parentJoint == 3
    assert not np.allclose(pm.frames[ee["tip"]].placement.homogeneous, np.eye(4))


def test_random_params_are_physical(model):
    rng = np.random.default_rng(1)
    for _ in range(5):
        nm = NumericModel(model, random_physical_params(model, rng))
        assert 9.0 <= nm.g <= 10.5
        assert all(nm.p[g] > 0 for g in model.geometry)
        for nf in nm.frames:
            assert nf.m > 0
            S, Ic = com_form(nf.m, nf.MS, nf.J)
            assert np.linalg.norm(S) <= 0.4 + 1e-12
            ev = np.linalg.eigvalsh(Ic)
            assert ev.min() > 0
            assert ev[0] + ev[1] > ev[2]  # triangle inequality of principal moments
            assert nf.Ia >= 0 and nf.Fv >= 0 and nf.Fc >= 0
            # J is the inertia about the frame origin: Pinocchio's dynamic parameters agree
            dyn = np.array([nf.m, *nf.MS, nf.J[0, 0], nf.J[0, 1], nf.J[1, 1], nf.J[0, 2], nf.J[1, 2], nf.J[2, 2]])
            I1 = pin.Inertia.FromDynamicParameters(dyn)
            I2 = pin.Inertia(nf.m, S, Ic)
            assert np.allclose(I1.matrix(), I2.matrix(), rtol=0, atol=1e-12)


def test_base_keeps_geometry(model):
    rng = np.random.default_rng(2)
    base = random_physical_params(model, rng)
    p = random_physical_params(model, rng, base=base)
    ng = len(model.geometry) + 1
    assert np.array_equal(p[:ng], base[:ng])
    assert not np.array_equal(p[ng:], base[ng:])


def test_fk_matches_pinocchio(model):
    for k, params in enumerate(_cases(model)):
        nm = NumericModel(model, params)
        pm, ee = build_pin_model(model, params)
        data = pm.createData()
        for q, _ in _states(model, 10 + k):
            poses = nm.fk(q)
            pin.forwardKinematics(pm, data, q)
            pin.updateFramePlacements(pm, data)
            for nf in nm.frames:
                if nf.type == "fixed":
                    continue
                jid = pm.getJointId(f"joint_{nf.key}")
                R, p = poses[nf.key]
                assert rel_err(R, data.oMi[jid].rotation) < 1e-13
                assert rel_err(p, data.oMi[jid].translation) < 1e-13
            for name in model.ee_names:
                R, p = nm.pose(q, name)
                assert rel_err(R, data.oMf[ee[name]].rotation) < 1e-13
                assert rel_err(p, data.oMf[ee[name]].translation) < 1e-13


def test_potential_energy_matches_pinocchio(model):
    for k, params in enumerate(_cases(model)):
        nm = NumericModel(model, params)
        pm, _ = build_pin_model(model, params)
        data = pm.createData()
        for q, _ in _states(model, 20 + k):
            U = nm.potential_energy(q)
            Up = pin.computePotentialEnergy(pm, data, q)
            assert abs(U - Up) <= 1e-12 * (1 + abs(Up))


def test_mass_matrix_and_jacobians_match_pinocchio(model):
    """Exact numpy routes (no finite differences) vs Pinocchio at 1e-12."""
    for k, params in enumerate(_cases(model)):
        nm = NumericModel(model, params)
        pm, _ = build_pin_model(model, params)
        data = pm.createData()
        for q, dq in _states(model, 30 + k):
            ref = pin_reference(pm, data, q, dq)
            assert rel_err(nm.mass_matrix(q), ref["A"]) < 1e-12
            for name in model.ee_names:
                for fr in ("world", "local"):
                    assert rel_err(nm.frame_jacobian(q, name, fr), ref[f"J_{name}_{fr}"]) < 1e-12


def test_finite_differences_match_pinocchio(model):
    """FD routes (Q = dU/dq, Christoffel C from dA/dq, Jacobians from fk) vs Pinocchio."""
    for k, params in enumerate(_cases(model, n_sets=2)):
        nm = NumericModel(model, params)
        pm, _ = build_pin_model(model, params)
        data = pm.createData()
        for q, dq in list(_states(model, 40 + k))[:4]:
            ref = pin_reference(pm, data, q, dq)
            assert rel_err(nm.gravity_fd(q), ref["Q"]) < 1e-8
            assert rel_err(nm.christoffel_C(q, dq), ref["C"]) < 1e-8
            for name in model.ee_names:
                Jw, Jl = nm.frame_jacobian_fd(q, name)
                assert rel_err(Jw, ref[f"J_{name}_world"]) < 1e-8
                assert rel_err(Jl, ref[f"J_{name}_local"]) < 1e-8


def test_pinocchio_identities(model):
    """Pinocchio's C satisfies Adot = C + C^T, C dq = rnea(q, dq, 0) - Q, and
    C dq = Adot dq - dT/dq (all by central differences)."""
    for k, params in enumerate(_cases(model, n_sets=2)):
        pm, _ = build_pin_model(model, params)
        data = pm.createData()

        def A(x):
            return pin_reference(pm, data, x, np.zeros(model.ndof))["A"]

        for q, dq in list(_states(model, 50 + k))[:5]:
            ref = pin_reference(pm, data, q, dq)
            Adot = time_derivative_fd(A, q, dq, 1e-6)
            N = Adot - 2 * ref["C"]
            assert np.max(np.abs(N + N.T)) <= 1e-7 * (1 + np.max(np.abs(Adot)))
            assert rel_err(ref["C"] + ref["C"].T, Adot) < 1e-7
            h = pin.rnea(pm, data, q, dq, np.zeros(model.ndof)) - ref["Q"]
            assert rel_err(ref["C"] @ dq, h) < 1e-12
            assert rel_err(ref["C"] @ dq, velocity_product_fd(A, q, dq, 1e-6)) < 1e-7
            assert np.all(np.linalg.eigvalsh(ref["A"]) > 0)


def test_armature_is_in_A(model):
    params = _cases(model, n_sets=1)[0]
    nm = NumericModel(model, params)
    pm, _ = build_pin_model(model, params)
    q = np.random.default_rng(3).uniform(-3, 3, model.ndof)
    A = pin_reference(pm, pm.createData(), q, 0 * q)["A"]
    pm.armature[:] = 0.0
    A0 = pin_reference(pm, pm.createData(), q, 0 * q)["A"]
    Ia = np.zeros(model.ndof)
    for nf in nm.frames:
        if nf.type != "fixed":
            Ia[nf.index] = nf.Ia
    assert np.all(Ia > 0)
    assert rel_err(A - A0, np.diag(Ia)) < 1e-13


def test_friction_reference():
    m = _small()
    nm = NumericModel(m, random_physical_params(m, np.random.default_rng(4)))
    Fv = np.array([nm.by_key[k].Fv for k in ("1", "2", "3", "s1", "s2")])
    Fc = np.array([nm.by_key[k].Fc for k in ("1", "2", "3", "s1", "s2")])
    dq = np.array([1.5, -2.0, 0.0, 0.25, -1e-9])
    assert np.allclose(nm.friction(dq), Fv * dq + Fc * np.array([1, -1, 0, 1, -1]), rtol=0, atol=1e-15)


# ---- the comparison helper catches plausible kernel bugs ---------------------

def _pin_ours(model):
    """A correct 'ours' built from independently constructed Pinocchio models,
    optionally with a bug injected."""
    cache = {}

    def make(bug=None):
        def ours(q, dq, params):
            key = params.tobytes()
            if key not in cache:
                pm, _ = build_pin_model(model, params)
                cache[key] = (pm, pm.createData())
            pm, data = cache[key]
            r = dict(pin_reference(pm, data, q, dq))
            if bug is not None:
                bug(r, params)
            return r
        return ours
    return make


def _bump(r, key, idx, amount):
    r[key] = r[key].copy()
    r[key][idx] += amount


def _ia(model, params):
    nm = NumericModel(model, params)
    Ia = np.zeros(model.ndof)
    for nf in nm.frames:
        if nf.type != "fixed":
            Ia[nf.index] = nf.Ia
    return Ia


def _swap_world_local(r, ee):
    r[f"J_{ee}_world"] = r[f"J_{ee}_local"]


def _bugs(model):
    e1, e2 = model.ee_names[0], model.ee_names[-1]
    return {
        "C transposed": lambda r, p: r.__setitem__("C", r["C"].T.copy()),
        "C symmetrized": lambda r, p: r.__setitem__("C", 0.5 * (r["C"] + r["C"].T)),
        "Q sign": lambda r, p: r.__setitem__("Q", -r["Q"]),
        "A without armature": lambda r, p: r.__setitem__("A", r["A"] - np.diag(_ia(model, p))),
        "A one entry 1e-8": lambda r, p: _bump(r, "A", (0, 1), 1e-8 * (1 + np.abs(r["A"]).max())),
        "J world/local swapped": lambda r, p: _swap_world_local(r, e1),
        "J rows [w; v]": lambda r, p: r.__setitem__(f"J_{e2}_world", np.roll(r[f"J_{e2}_world"], 3, axis=0)),
        "J local is transpose-rotated": lambda r, p: r.__setitem__(
            f"J_{e2}_local", np.vstack([r[f"R_{e2}"] @ r[f"J_{e2}_world"][:3], r[f"R_{e2}"] @ r[f"J_{e2}_world"][3:]])),
    }


BUG_NAMES = sorted(_bugs(_small()))


def test_compare_passes_on_correct(model):
    rng = np.random.default_rng(5)
    sets = [("r0", random_physical_params(model, rng))]
    res = compare(_pin_ours(model)(), model, sets, n_states=5, seed=1)
    assert res["failures"] == []
    assert all(v == 0.0 for v in res["overall"].values())


@pytest.mark.parametrize("bug", BUG_NAMES)
def test_compare_catches_bug(model, bug):
    rng = np.random.default_rng(6)
    sets = [("r0", random_physical_params(model, rng))]
    with pytest.raises(AssertionError, match="above tol"):
        compare(_pin_ours(model)(_bugs(model)[bug]), model, sets, n_states=5, seed=1)

"""Contact dynamics (codegen/derive/contacts.py, templates/c/contacts.c.j2), through the
Python module of a robot built with contacts, against Pinocchio's constraint API on the
same model and parameters (reference.pin_reference.build_pin_model, the contact frames
included):

* contact_jacobian / contact_drift = getFrameJacobian / getFrameClassicalAcceleration
  (3d, LOCAL_WORLD_ALIGNED) and the LOCAL Jacobian and spatial acceleration (6d);
* constrained_dynamics = constraintDynamics, with the Baumgarte gains (corrector Kp, Kd, the
  reference point as the contact's joint2 placement);
* constrained_dynamics_derivatives = computeConstraintDynamicsDerivatives;
* impulse_dynamics = impulseDynamics;
every subset of Solo12's four point contacts, default and random physical parameters,
<= 1e-10 relative. Physics: the active contacts do not accelerate (gains 0), an impact leaves
them at -restitution times their velocity and never adds energy; the derivatives equal central
differences of our own kernels; redundant contacts with damping; the mask's checks. Two feet
as flat (6d) contacts with kp: the placement error log6 and its Jacobian at every angle.
A humanoid with two 6d soles (Talos) is in the robots tier.
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.reference_fk import random_physical_params, rel_err
from reference.robot_data import MIMIC, robots_dir

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402

TOL = 1e-10
SOLO = "solo_description/robots/solo12.urdf"
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
TALOS = "talos_data/robots/talos_reduced.urdf"
SOLES = ("left_sole_link", "right_sole_link")


def _build(path, contacts, **kw):
    import codegen
    return codegen.import_urdf(robots_dir() / path, floating_base=True, contacts=contacts, quiet=True, **kw)


@pytest.fixture(scope="module")
def solo():
    from codegen.read.urdf import load_urdf
    kk = _build(SOLO, FEET)
    robot = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET])
    return kk, robot.model


@pytest.fixture(scope="module")
def solo_mixed():
    """Solo12 with two feet as flat (6d) contacts and two as points: both kinds of placement
    error (the 6d one Pinocchio's log6) in one model."""
    from codegen.read.urdf import load_urdf
    contacts = [("FL_FOOT", "6d"), ("FR_FOOT", "3d"), ("HL_FOOT", "3d"), ("HR_FOOT", "6d")]
    kk = _build(SOLO, [f"{f}:{k}" for f, k in contacts])
    return kk, load_urdf(robots_dir() / SOLO, floating_base=True, contacts=contacts).model


def _constraints(pm, frames, model, mask, kp=0.0, kd=0.0, ref=None):
    cms = []
    for k, c in enumerate(model.contacts):
        if not (mask >> k) & 1:
            continue
        f = pm.frames[frames[f"contact:{c.name}"]]
        kind, axes = ((pin.ContactType.CONTACT_3D, pin.LOCAL_WORLD_ALIGNED) if c.kind == "3d"
                      else (pin.ContactType.CONTACT_6D, pin.LOCAL))
        cm = pin.RigidConstraintModel(kind, pm, f.parentJoint, f.placement, axes)
        if ref is not None:
            cm.joint2_placement = ref[k]
        b = cm.m_baumgarte_parameters
        b.Kp, b.Kd = kp, kd
        cm.setBaumgarteCorrectorParameters(b)
        cms.append(cm)
    return pin.StdVec_RigidConstraintModel(cms), pin.StdVec_RigidConstraintData([c.createData() for c in cms])


def _state(model, rng):
    q = rng.uniform(-1.5, 1.5, size=model.nq)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    return q, rng.uniform(-2, 2, model.ndof), rng.uniform(-10, 10, model.ndof)


def _random_refs(model, rng):
    """(ref, placements): random reference placements of every contact, as our kernels' `ref`
    (a point's x y z, a pose's [R | p] rows) and as Pinocchio's joint2 placements."""
    ref, placements = [], []
    for c in model.contacts:
        p = rng.uniform(-0.5, 0.5, 3)
        R = pin.exp3(rng.uniform(-1.0, 1.0, 3)) if c.kind == "6d" else np.eye(3)
        ref += list(p) if c.kind == "3d" else list(np.hstack([R, p[:, None]]).ravel())
        placements.append(pin.SE3(R, p))
    return np.array(ref), placements


def _rows(model, mask):
    return sum(c.rows for k, c in enumerate(model.contacts) if (mask >> k) & 1)


def _reference_kinematics(pm, data, frames, model, mask, q, v):
    pin.forwardKinematics(pm, data, q, v, np.zeros(model.ndof))
    pin.computeJointJacobians(pm, data, q)
    pin.updateFramePlacements(pm, data)
    J, g = [], []
    for k, c in enumerate(model.contacts):
        if not (mask >> k) & 1:
            continue
        fid = frames[f"contact:{c.name}"]
        if c.kind == "3d":
            J.append(pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3])
            g.append(pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED).linear)
        else:
            J.append(pin.getFrameJacobian(pm, data, fid, pin.LOCAL))
            g.append(pin.getFrameAcceleration(pm, data, fid, pin.LOCAL).vector)
    return np.vstack(J), np.hstack(g)


def _check_against_pinocchio(kk, model, masks, params, rng, n_states=2, gains=((0.0, 0.0), (30.0, 4.0))):
    worst = {}

    def check(name, got, ref, tol=TOL):
        e = rel_err(got, ref)
        worst[name] = max(worst.get(name, 0.0), e)
        assert e <= tol, f"{name}: {e:.2e}"

    for label, p in params:
        p = _no_friction(kk, p)
        pm, frames = build_pin_model(model, p)
        data = pm.createData()
        for _ in range(n_states):
            q, v, tau = _state(model, rng)
            ref, placements = _random_refs(model, rng)
            tau_pin = tau  # p without friction (_no_friction)
            assert not kk.friction(v, p).any()
            for mask in masks:
                m = _rows(model, mask)
                J, g = _reference_kinematics(pm, data, frames, model, mask, q, v)
                check("contact_jacobian", kk.contact_jacobian(q, mask, params=p)[:m], J)
                check("contact_drift", kk.contact_drift(q, v, mask, params=p)[:m], g)
                for kp, kd in gains:
                    cms, cds = _constraints(pm, frames, model, mask, kp, kd, placements)
                    pin.initConstraintDynamics(pm, data, cms, cds)
                    a = pin.constraintDynamics(pm, data, q, v, tau_pin, cms, cds)
                    lam = data.lambda_c.copy()
                    ddq, lc = kk.constrained_dynamics(q, v, tau, mask, kp, kd, ref=ref, params=p)
                    check("ddq", ddq, a)
                    check("lambda_c", lc[:m], lam)
                    assert not lc[m:].any()
                    pin.computeConstraintDynamicsDerivatives(pm, data, cms, cds)
                    D = kk.constrained_dynamics_derivatives(q, v, tau, mask, kp, kd, ref=ref, params=p)
                    for name, ours, theirs in zip(
                            ("dddq_dq", "dddq_dv", "dddq_dtau", "dlambda_dq", "dlambda_dv", "dlambda_dtau"),
                            (D[0], D[1], D[2], D[3][:m], D[4][:m], D[5][:m]),
                            (data.ddq_dq, data.ddq_dv, data.ddq_dtau, data.dlambda_dq, data.dlambda_dv,
                             data.dlambda_dtau)):
                        check(name, ours, theirs)
                cms, cds = _constraints(pm, frames, model, mask)
                pin.initConstraintDynamics(pm, data, cms, cds)
                vp = pin.impulseDynamics(pm, data, q, v, cms, cds, 0.4)
                v_plus, imp = kk.impulse_dynamics(q, v, mask, restitution=0.4, params=p)
                check("v_plus", v_plus, vp)
                check("impulse", imp[:m], data.impulse_c)
                pin.computeImpulseDynamicsDerivatives(pm, data, cms, cds, 0.4)
                Di = kk.impulse_dynamics_derivatives(q, v, mask, restitution=0.4, params=p)
                check("dv_plus_dq", Di[0], data.ddq_dq)
                check("dv_plus_dv", Di[1] - np.eye(model.ndof), data.ddq_dv)  # Pinocchio's: the jump's
                check("dimpulse_dq", Di[2][:m], data.dlambda_dq)
                check("dimpulse_dv", Di[3][:m], data.dlambda_dv)
                assert not Di[2][m:].any() and not Di[3][m:].any()
    return worst


def _no_friction(kk, p):
    """p with Fv = Fc = 0: Pinocchio's constraint dynamics has no joint friction."""
    p = np.array(p)
    p[[i for i, n in enumerate(kk.PARAM_NAMES) if n.startswith(("Fv_", "Fc_"))]] = 0.0
    return p


def test_solo_every_contact_set_against_pinocchio(solo):
    kk, model = solo
    rng = np.random.default_rng(5)
    params = [("default", kk.default_params()), ("random", random_physical_params(model, rng))]
    worst = _check_against_pinocchio(kk, model, range(1, 16), params, rng)
    assert set(worst) >= {"ddq", "lambda_c", "dddq_dq", "dlambda_dq", "impulse", "dv_plus_dq", "dimpulse_dv"}


def test_contact_physics(solo):
    """Gains 0: the active contacts do not accelerate, the others do; an impact leaves the active
    contacts at -restitution times their velocity and loses kinetic energy (restitution < 1),
    keeps it (restitution 1)."""
    kk, model = solo
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v, tau = _state(model, rng)
        for mask in (0b1111, 0b1001, 0b0100):
            m = _rows(model, mask)
            ddq, _ = kk.constrained_dynamics(q, v, tau, mask)
            J, g = kk.contact_jacobian(q, mask)[:m], kk.contact_drift(q, v, mask)[:m]
            assert np.max(np.abs(J @ ddq + g)) <= 1e-9 * (1 + np.max(np.abs(g)))
            A = kk.compute_A(q)
            energy = lambda x: 0.5 * x @ A @ x  # noqa: E731
            for r in (0.0, 0.5, 1.0):
                v_plus, _ = kk.impulse_dynamics(q, v, mask, restitution=r)
                assert np.allclose(J @ v_plus, -r * (J @ v), atol=1e-10 * (1 + np.abs(J @ v).max()))
                assert energy(v_plus) <= energy(v) * (1 + 1e-12)
                if r == 1.0:
                    assert energy(v_plus) == pytest.approx(energy(v), rel=1e-10)


def test_derivatives_against_differences(solo):
    """d ddq / d(q, v, tau) and d lambda / d(q, v, tau) equal central differences of
    constrained_dynamics (q moved on the tangent space by integrate), with gains."""
    kk, model = solo
    rng = np.random.default_rng(9)
    q, v, tau = _state(model, rng)
    ref = rng.uniform(-0.5, 0.5, 12)
    mask, h = 0b1011, 1e-6
    D = kk.constrained_dynamics_derivatives(q, v, tau, mask, 20.0, 3.0, ref=ref)
    f = lambda q_, v_, t_: np.concatenate(kk.constrained_dynamics(q_, v_, t_, mask, 20.0, 3.0, ref=ref))  # noqa: E731
    n = model.ndof
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        dq_ = (f(kk.integrate(q, e, 1.0), v, tau) - f(kk.integrate(q, -e, 1.0), v, tau)) / (2 * h)
        dv_ = (f(q, v + e, tau) - f(q, v - e, tau)) / (2 * h)
        dt_ = (f(q, v, tau + e) - f(q, v, tau - e)) / (2 * h)
        for got, num in ((np.concatenate([D[0][:, j], D[3][:, j]]), dq_),
                         (np.concatenate([D[1][:, j], D[4][:, j]]), dv_),
                         (np.concatenate([D[2][:, j], D[5][:, j]]), dt_)):
            assert np.max(np.abs(got - num)) <= 1e-5 * (1 + np.max(np.abs(num))), j


def test_impulse_derivatives_against_differences(solo):
    """d v_plus / d(q, dq) and d impulse / d(q, dq) equal central differences of impulse_dynamics
    (q moved on the tangent space by integrate), plastic and with restitution."""
    kk, model = solo
    rng = np.random.default_rng(11)
    n, h = model.ndof, 1e-6
    for mask, r in ((0b1111, 0.0), (0b0110, 0.7)):
        q, v, _ = _state(model, rng)
        D = kk.impulse_dynamics_derivatives(q, v, mask, restitution=r)
        f = lambda q_, v_: np.concatenate(kk.impulse_dynamics(q_, v_, mask, restitution=r))  # noqa: E731
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            dq_ = (f(kk.integrate(q, e, 1.0), v) - f(kk.integrate(q, -e, 1.0), v)) / (2 * h)
            dv_ = (f(q, v + e) - f(q, v - e)) / (2 * h)
            for got, num in ((np.concatenate([D[0][:, j], D[2][:, j]]), dq_),
                             (np.concatenate([D[1][:, j], D[3][:, j]]), dv_)):
                assert np.max(np.abs(got - num)) <= 1e-5 * (1 + np.max(np.abs(num))), (mask, j)


def test_flat_and_point_contacts_with_gains_against_pinocchio(solo_mixed):
    """Every contact set of the mixed model but the two flat feet together (12 rows that lock
    both legs and the base: singular), with kp and kd on random reference placements."""
    kk, model = solo_mixed
    assert kk.CONTACT_ROWS == (6, 3, 3, 6) and kk.N_REF == 12 + 3 + 3 + 12
    rng = np.random.default_rng(13)
    masks = [m for m in range(1, 16) if (m & 0b1001) != 0b1001]
    worst = _check_against_pinocchio(kk, model, masks, [("default", kk.default_params())], rng)
    assert set(worst) >= {"ddq", "dddq_dq", "dlambda_dq"}


@pytest.mark.parametrize("angle", [0.0, 1e-7, 1e-3, 0.3, 0.4999, 0.5001, 2.0, np.pi - 1e-4, np.pi - 1e-9])
def test_flat_contact_placement_error_at_every_angle(solo_mixed, angle):
    """The 6d placement error log6(ref^-1 oMc) and its Jacobian where their closed forms cancel
    (near 0: series) or the antisymmetric part vanishes (near pi), against Pinocchio: the
    reference is the contact's pose moved by a known twist of rotation `angle`."""
    kk, model = solo_mixed
    rng = np.random.default_rng(int(angle * 1e4) % 1000)
    p = _no_friction(kk, kk.default_params())
    pm, frames = build_pin_model(model, p)
    data = pm.createData()
    q, v, tau = _state(model, rng)
    pin.framesForwardKinematics(pm, data, q)
    axis = rng.normal(size=3)
    twist = np.hstack([rng.uniform(-0.05, 0.05, 3), angle * axis / np.linalg.norm(axis)])
    ref, placements = _random_refs(model, rng)
    oMc = data.oMf[frames["contact:FL_FOOT"]]
    placements[0] = oMc * pin.exp6(twist)
    ref[:12] = np.hstack([placements[0].rotation, placements[0].translation[:, None]]).ravel()
    mask = 0b0111
    cms, cds = _constraints(pm, frames, model, mask, 30.0, 4.0, placements)
    pin.initConstraintDynamics(pm, data, cms, cds)
    a = pin.constraintDynamics(pm, data, q, v, tau, cms, cds)
    ddq, lam = kk.constrained_dynamics(q, v, tau, mask, 30.0, 4.0, ref=ref, params=p)
    assert rel_err(ddq, a) <= TOL and rel_err(lam[:12], data.lambda_c) <= TOL
    pin.computeConstraintDynamicsDerivatives(pm, data, cms, cds)
    D = kk.constrained_dynamics_derivatives(q, v, tau, mask, 30.0, 4.0, ref=ref, params=p)
    assert rel_err(D[0], data.ddq_dq) <= 1e-9 and rel_err(D[3][:12], data.dlambda_dq) <= 1e-9


def test_reference_placements_are_checked(solo_mixed):
    kk, model = solo_mixed
    q, v, tau = _state(model, np.random.default_rng(2))
    ref = np.zeros(kk.N_REF)
    with pytest.raises(ValueError, match="FL_FOOT.*not a rotation"):
        kk.constrained_dynamics(q, v, tau, 1, kp=1.0, ref=ref)
    with pytest.raises(ValueError):
        kk.constrained_dynamics(q, v, tau, 1, kp=1.0, ref=np.zeros(kk.N_REF - 1))
    # None: the world's origin and axes, the same as given explicitly
    ref[0:12] = ref[18:30] = np.hstack([np.eye(3), np.zeros((3, 1))]).ravel()
    assert np.array_equal(kk.constrained_dynamics(q, v, tau, 0b1111, mu=1e-6, kp=2.0)[0],
                          kk.constrained_dynamics(q, v, tau, 0b1111, mu=1e-6, kp=2.0, ref=ref)[0])


@pytest.mark.robots
def test_redundant_contacts_need_damping():
    """Solo12 standing on its four feet as flat (6d) contacts: 24 rows on 18 velocities, a
    rank-deficient contact system, consistent at rest (v = 0: no drift). mu = 0 gives NaN; mu > 0
    the proximal solution, which holds the feet and equals Pinocchio's proximal iterations
    (ProximalSettings) on the same problem."""
    from codegen.read.urdf import load_urdf
    kk = _build(SOLO, [f"{f}:6d" for f in FEET], kernels=("contact_dynamics",))
    # --kernels core,contact_dynamics: the contact kernels without their derivatives
    assert not hasattr(kk, "constrained_dynamics_derivatives") and not hasattr(kk, "inverse_dynamics_derivatives")
    assert kk.CONTACT_ROWS == (6,) * 4
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "6d") for f in FEET]).model
    pm, frames = build_pin_model(model, kk.default_params())
    data = pm.createData()
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, tau = _state(model, rng)
        v[:] = 0.0
        assert np.isnan(kk.constrained_dynamics(q, v, tau, 0b1111)[0]).all()
        ddq, lam = kk.constrained_dynamics(q, v, tau, 0b1111, mu=1e-4)
        J, g = kk.contact_jacobian(q, 0b1111), kk.contact_drift(q, v, 0b1111)
        assert np.max(np.abs(J @ ddq + g)) <= 1e-8 * (1 + np.max(np.abs(g)))
        cms, cds = _constraints(pm, frames, model, 0b1111)
        pin.initConstraintDynamics(pm, data, cms, cds)
        prox = pin.ProximalSettings(1e-14, 1e-4, 100)
        a = pin.constraintDynamics(pm, data, q, v, tau, cms, cds, prox)
        assert rel_err(ddq, a) <= 1e-8
        assert rel_err(lam, data.lambda_c) <= 1e-6


def test_mask_and_gain_checks(solo):
    kk, model = solo
    q, v, tau = _state(model, np.random.default_rng(1))
    full = kk.constrained_dynamics(q, v, tau, 0b1111)[0]
    assert np.array_equal(kk.constrained_dynamics(q, v, tau, [True] * 4)[0], full)
    assert np.array_equal(kk.constrained_dynamics(q, v, tau, list(FEET))[0], full)
    assert np.array_equal(kk.constrained_dynamics(q, v, tau, ["HL_FOOT", "FL_FOOT"])[0],
                          kk.constrained_dynamics(q, v, tau, 0b0101)[0])
    assert kk.CONTACT_NAMES == FEET and kk.CONTACT_ROWS == (3,) * 4 and kk.N_CONTACTS == 4
    for bad, exc in ((16, ValueError), (-1, ValueError), ("FL_FOOT", TypeError), (["nope"], ValueError),
                     ([True] * 3, ValueError), (1.0, TypeError)):
        with pytest.raises(exc):
            kk.constrained_dynamics(q, v, tau, bad)
    for kw in ({"kp": -1.0}, {"kd": float("nan")}, {"mu": -1e-3}):
        with pytest.raises(ValueError):
            kk.constrained_dynamics(q, v, tau, 1, **kw)
    with pytest.raises(ValueError):
        kk.impulse_dynamics(q, v, 1, restitution=1.5)
    # no active contact: the free dynamics
    ddq, lam = kk.constrained_dynamics(q, v, tau, 0)
    assert rel_err(ddq, kk.forward_dynamics(q, v, tau)) <= 1e-12 and not lam.any()
    # a batch of states, one mask
    qs, vs, ts = (np.stack([x] * 3) for x in (q, v, tau))
    ddqs, lams = kk.constrained_dynamics(qs, vs, ts, 0b0110)
    assert ddqs.shape == (3, model.ndof) and lams.shape == (3, 12)
    assert np.array_equal(ddqs[1], kk.constrained_dynamics(q, v, tau, 0b0110)[0])


@pytest.mark.robots
def test_humanoid_soles_against_pinocchio():
    from codegen.read.urdf import load_urdf
    kk = _build(TALOS, [f"{s}:6d" for s in SOLES], mimic=MIMIC)
    model = load_urdf(robots_dir() / TALOS, floating_base=True, mimic=MIMIC,
                      contacts=[(s, "6d") for s in SOLES]).model
    rng = np.random.default_rng(11)
    _check_against_pinocchio(kk, model, (0b01, 0b10, 0b11), [("default", kk.default_params())], rng, n_states=2,
                             gains=((0.0, 0.0), (20.0, 5.0)))


@pytest.mark.parametrize("robot", ["solo", "solo_mixed"])
def test_contact_c_is_clean_under_strict_flags(robot, request, tmp_path):
    """The contact kernels' C (derived and template) compiles without a warning under
    -Wall -Wextra -Werror, C99, at every optimization level, and as a portable module
    builds it (codegen/build/flags.py: target_clones; the derivatives' AVX2 and FMA copy)."""
    import platform
    import re
    import subprocess
    import codegen
    codegen.export(request.getfixturevalue(robot)[0], tmp_path)
    (c_file,) = tmp_path.glob("*_kernels.c")
    from codegen.build.flags import FLAGS, X86_FLAGS
    # portable: the part that holds the contact template only (each kernel's three clones of the
    # whole file would take minutes)
    (part,) = re.findall(r"#if KKIN\((\d+)\) /\* interface \*/", c_file.read_text())
    portable = [f for f in FLAGS if f != "-std=c99"] + (X86_FLAGS if platform.machine() == "x86_64" else [])
    portable.append(f"-DKKPART={part}")
    for flags in (["-O0"], ["-O2"], ["-O3", "-march=native", "-ffp-contract=fast"], portable):
        run = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *flags, "-c",
                              str(c_file), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]


def test_kernel_choice():
    """--kernels: the contact kernels are optional; their derivatives need the inverse
    dynamics' derivatives and contact_dynamics (one error before any derivation)."""
    from codegen.read.model import ModelError
    from codegen.emit.abi import describe
    from codegen.read.urdf import load_urdf
    with pytest.raises(ModelError, match="constrained_dynamics_derivatives needs inverse_dynamics_derivatives"):
        _build(SOLO, FEET, kernels=("constrained_dynamics_derivatives", "contact_dynamics"))
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    names = lambda kernels: {f.name for f in describe(model, kernels=kernels).functions}  # noqa: E731
    assert "constrained_dynamics" not in names(())
    assert {"constrained_dynamics", "impulse_dynamics"} <= names(("contact_dynamics",))
    assert "constrained_dynamics_derivatives" not in names(("contact_dynamics",))
    assert "constrained_dynamics_derivatives" in names(None)
    plain = load_urdf(robots_dir() / SOLO, floating_base=True).model
    assert not any("contact" in f.name for f in describe(plain).functions)


@pytest.mark.robots
def test_anymal_every_contact_set_against_pinocchio():
    """A second quadruped, ANYmal C (example-robot-data's simplified model), its four point feet."""
    from codegen.read.urdf import load_urdf
    path, feet = "anymal_c_simple_description/urdf/anymal.urdf", ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")
    with pytest.warns(UserWarning, match="massless: 'base'"):  # its base link has no <inertial>
        kk = _build(path, feet)
    model = load_urdf(robots_dir() / path, floating_base=True, contacts=[(f, "3d") for f in feet]).model
    rng = np.random.default_rng(13)
    _check_against_pinocchio(kk, model, range(1, 16), [("default", kk.default_params())], rng, n_states=1)

"""Free-flying base: every kernel against Pinocchio's free-flyer model.

The generated C of a URDF with a free-flyer (its own floating root joint, or
--floating-base) is compiled (gcc -O2 -std=c99 -Wall -Wextra -Werror) and
compared with pin.buildModelFromUrdf(URDF, pin.JointModelFreeFlyer()) (or
without the root joint when the URDF's root joint is floating) whose
inertias, armature and gravity come from our parameter vector
(reference/floating_reference.py), at random base positions, random unit
quaternions, random velocities and accelerations, for the default and a
random physically valid parameter set: A ~ crba, C ~ computeCoriolisMatrix,
Q ~ computeGeneralizedGravity, inverse_dynamics - friction ~ rnea,
bias ~ nonLinearEffects, forward_dynamics ~ aba, jacobian ~ getFrameJacobian
(LOCAL_WORLD_ALIGNED, LOCAL), fk ~ oMf, jdot_qdot ~
getFrameClassicalAcceleration. Error: max|ours - pin| / (1 + max|pin|) <= 1e-12
(forward dynamics divided by cond(A), as it solves with A).

Physics without a reference (the tiny robot in free flight, joints free):
with tau = 0 and g = 0 the world linear and angular momentum, read from the
base rows of A (A[0:6] dq is the robot's spatial momentum at the base origin
in base axes, as the base's motion subspace is the identity), stay constant
over a simulated second; with gravity the energy does.

Generation is slow for big robots: the tiny robot (one build per module)
and Solo12 run by default; ANYmal, Go2, the simple humanoid and Talos (full)
with KK_FLOATING_ALL=1.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")

from reference.robot_data import robots_dir  # noqa: E402
from codegen.read.model import ModelError, parse_model  # noqa: E402
from codegen.read.urdf import load_urdf, urdf_robot  # noqa: E402
from reference.abi_ctypes import Library, compile_shared  # noqa: E402
from reference.floating_reference import PinFreeFlyer, random_base_states  # noqa: E402
from reference.reference_fk import random_physical_params, rel_err  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STRICT = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
TOL = 1e-12
TINY = HERE / "models" / "floating_tiny.urdf"
TINY_EES = ["tool", "foot", "body", "upper", "lower", "carriage"]  # every body: the energy test needs them
ROBOTS = {  # name: (URDF under example-robot-data, end effectors, its own floating root joint)
    "solo12": ("solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"]),
    "go2": ("go2_description/urdf/go2.urdf", ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]),
    "simple_humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", ["l_ankle", "r_wrist"]),
    "talos": ("talos_data/robots/talos_full_v2.urdf", ["left_sole_link", "right_sole_link",
                                                      "gripper_left_base_link"]),
}


def cli(urdf, out, name, ees, extra=()):
    cmd = [sys.executable, "-m", "codegen", str(urdf), "--out", str(out), "--name", name, "--no-snap", *extra]
    for e in ees:
        cmd += ["--end-effector", e]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out / f"{name}_kernels.c"


def build(tmp, urdf, name, ees, flag):
    robot = load_urdf(urdf, name=name, end_effectors=ees, snap=False, floating_base=flag)
    c = cli(urdf, tmp, name, ees, ["--floating-base"] if flag else [])
    return robot, Library(robot.model, compile_shared(c, tmp / "libkernels.so", STRICT), name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("tiny"), TINY, "tiny", TINY_EES, False)


def ours(lib, q, dq, ddq, p, fr, tau_pin, n_ee):
    out = {"A": lib.compute_A(q, p), "C": lib.compute_C(q, dq, p), "Q": lib.compute_Q(q, p),
           "tau": lib.inverse_dynamics(q, dq, ddq, p) - fr, "bias": lib.bias(q, dq, p),
           "ddq": lib.forward_dynamics(q, dq, tau_pin + fr, p)}
    for i in range(n_ee):
        out[f"J{i}_world"], out[f"J{i}_local"] = lib.jacobian(q, p, i, 0), lib.jacobian(q, p, i, 1)
        out[f"T{i}"] = lib.fk(q, p, i)
        out[f"a{i}"] = lib.jdot_qdot(q, dq, p, i)
    singles = [out["A"], out["C"], out["Q"], *(out[f"J{i}_world"] for i in range(n_ee))]
    for name, a, b in zip(["A", "C", "Q", *range(n_ee)], lib.compute_all(q, dq, p), singles):
        assert rel_err(a, b) <= 1e-13, f"compute_all {name}"
    return out


def max_errors(urdf, robot, lib, own, seed, n_states=4):
    rng = np.random.default_rng(seed)
    errs = {}
    for params in (np.array(robot.values), random_physical_params(robot.model, rng)):
        ref = PinFreeFlyer(urdf, robot.model, params, own)
        qs, dqs = random_base_states(rng, robot.model, n_states)
        for q, dq in zip(qs, dqs):
            ddq = rng.uniform(-5, 5, size=robot.model.ndof)
            R = ref.reference(q, dq, ddq)
            got = ours(lib, q, dq, ddq, params, ref.friction(dq), R["tau"], len(robot.model.end_effectors))
            for k, v in R.items():
                e = rel_err(got[k], v) / (np.linalg.cond(R["A"]) if k == "ddq" else 1)
                errs[k] = max(errs.get(k, 0.0), e)
    return errs


def check(errs):
    assert not [k for k, e in errs.items() if not e <= TOL], errs  # NaN fails too


def test_tiny_with_its_own_floating_joint_matches_pinocchio(tiny):
    robot, lib = tiny
    check(max_errors(TINY, robot, lib, True, seed=1))


def test_metadata(tiny):
    robot, lib = tiny
    model = robot.model
    assert model.floating_base and model.nq == model.ndof + 1 == 10
    lib.lib.tiny_joint_name.restype = ctypes.c_char_p
    names = [lib.lib.tiny_joint_name(i).decode() for i in range(model.ndof)]
    assert names[:6] == [f"base_free:{s}" for s in ("vx", "vy", "vz", "wx", "wy", "wz")]
    assert names[6:] == list(pin.buildModelFromUrdf(str(TINY)).names[2:])  # URDF names, Pinocchio's order
    header = next(Path(lib.lib._name).parent.glob("tiny_kernels.h")).read_text()
    assert "#define TINY_NQ 10\n" in header and "#define TINY_NV 9\n" in header
    assert "#define TINY_NDOF 9\n" in header
    lower, upper, _, _ = lib.joint_limits()
    assert np.isnan(lower[:6]).all() and lower[8] == -0.2  # the base has no limits; the slider does
    assert (lib.friction(np.ones(9), np.array(robot.values))[:6] == 0).all()  # nor friction


def test_non_unit_quaternion_is_normalized(tiny):
    robot, lib = tiny
    rng = np.random.default_rng(2)
    p = random_physical_params(robot.model, rng)
    (q,), (dq,) = random_base_states(rng, robot.model, 1)
    ddq = rng.uniform(-3, 3, size=9)
    scaled = q.copy()
    scaled[3:7] *= 2.7
    pairs = [(lib.compute_A(q, p), lib.compute_A(scaled, p)), (lib.compute_Q(q, p), lib.compute_Q(scaled, p)),
             (lib.compute_C(q, dq, p), lib.compute_C(scaled, dq, p)), (lib.bias(q, dq, p), lib.bias(scaled, dq, p)),
             (lib.inverse_dynamics(q, dq, ddq, p), lib.inverse_dynamics(scaled, dq, ddq, p)),
             (lib.forward_dynamics(q, dq, ddq, p), lib.forward_dynamics(scaled, dq, ddq, p))]
    pairs += [(lib.fk(q, p, i), lib.fk(scaled, p, i)) for i in range(len(TINY_EES))]
    pairs += [(lib.jacobian(q, p, 0, f), lib.jacobian(scaled, p, 0, f)) for f in (0, 1)]
    pairs += [(lib.jdot_qdot(q, dq, p, 0), lib.jdot_qdot(scaled, dq, p, 0))]
    for a, b in pairs:
        assert rel_err(b, a) <= 1e-14
    assert abs(np.linalg.det(lib.fk(scaled, p, 2)[:3, :3]) - 1) <= 1e-14  # the base pose is a rotation


def test_batch_kernels_loop_over_the_scalar_kernel(tiny):
    robot, lib = tiny
    rng = np.random.default_rng(3)
    p = random_physical_params(robot.model, rng)
    qs, dqs = random_base_states(rng, robot.model, 5)
    A, C = np.full((5, 9, 9), np.nan), np.full((5, 9, 9), np.nan)
    D = ctypes.POINTER(ctypes.c_double)
    ptr = lambda a: np.ascontiguousarray(a).ctypes.data_as(D)  # noqa: E731
    lib.lib.tiny_compute_A_batch(ctypes.c_int(5), ptr(qs), ptr(p), ptr(A))
    lib.lib.tiny_compute_C_batch(ctypes.c_int(5), ptr(qs), ptr(dqs), ptr(p), ptr(C))
    for i in range(5):
        assert np.array_equal(A[i], lib.compute_A(qs[i], p))
        assert np.array_equal(C[i], lib.compute_C(qs[i], dqs[i], p))


# --------------------------------------------------------------------------
# physics without a reference: free flight of the tiny robot

def quat_mul(a, b):
    """Hamilton product of quaternions (x, y, z, w)."""
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def rotation(quat):
    x, y, z, w = quat / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_exp(w):
    """The unit quaternion of the rotation vector w (the exponential map of SO(3))."""
    a = np.linalg.norm(w)
    s = 0.5 if a < 1e-8 else np.sin(a / 2) / a
    return np.concatenate([s * w, [np.cos(a / 2)]])


def retract(q, v, h):
    """q (+) h v on the configuration manifold: the base moves along the body
    twist v[0:6] held for time h (the SE(3) exponential: rotation by
    exp(h w), translation by R int_0^h exp(s w) ds v_lin), the joints by h v."""
    out = q.copy()
    vl, w = v[:3], v[3:6]
    a = np.linalg.norm(w) * h
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) * h
    if a < 1e-8:
        V = np.eye(3) + W / 2
    else:
        V = np.eye(3) + (1 - np.cos(a)) / a**2 * W + (a - np.sin(a)) / a**3 * W @ W
    out[:3] = q[:3] + rotation(q[3:7]) @ V @ vl * h
    out[3:7] = quat_mul(q[3:7], quat_exp(w * h))
    out[7:] = q[7:] + h * v[6:]
    return out


def bracket(a, b):
    """The se(3) Lie bracket of twists (linear, angular): ad_a b."""
    return np.concatenate([np.cross(a[3:], b[:3]) - np.cross(b[3:], a[:3]), np.cross(a[3:], b[3:])])


def dexpinv(theta, u):
    """The inverse derivative of exp for the body-velocity form y' = y u, to
    the two brackets a fourth-order method needs (Munthe-Kaas 1999): the base
    twist gets u + [T, u]/2 + [T, [T, u]]/12; the joints (abelian) u."""
    out = u.copy()
    t, b = theta[:6], u[:6]
    tb = bracket(t, b)
    out[:6] = b + tb / 2 + bracket(t, tb) / 12
    return out


def rk4_step(fd, q, v, h):
    """One Runge-Kutta-Munthe-Kaas step of order 4 of q' = v (the base on
    SE(3) through its exponential, `retract`), v' = fd(q, v)."""
    theta, vel, ks, kv = np.zeros_like(v), v, [], []
    for c in (0.5, 0.5, 1.0, None):
        y = retract(q, theta, 1.0)
        a = fd(y, vel)
        ks.append(dexpinv(theta, h * vel))
        kv.append(h * a)
        if c is not None:
            theta, vel = c * ks[-1], v + c * kv[-1]
    theta = (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3]) / 6
    return retract(q, theta, 1.0), v + (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3]) / 6


def world_momentum(lib, q, v, p):
    """(linear, angular about the world origin) momentum, world axes, from A's base rows."""
    h = lib.compute_A(q, p)[:6] @ v  # spatial momentum at the base origin, base axes, linear first
    R = rotation(q[3:7])
    lin = R @ h[:3]
    return lin, R @ h[3:] + np.cross(q[:3], lin)


def energy(lib, model, q, v, p, names):
    """Kinetic 1/2 v'Av plus potential -sum m_k g.c_k, c_k from fk of every body."""
    pd = dict(zip(model.param_names, p))
    g = pd["g"] * np.array([float(x) for x in model.gravity])
    U = 0.0
    for i, key in enumerate(names):
        T = lib.fk(q, p, i)
        ms = np.array([pd[f"MX_{key}"], pd[f"MY_{key}"], pd[f"MZ_{key}"]])
        U -= g @ (pd[f"m_{key}"] * T[:3, 3] + T[:3, :3] @ ms)
    return 0.5 * v @ lib.compute_A(q, p) @ v + U


def simulate(lib, robot, p, seconds=1.0, h=2.5e-4):
    rng = np.random.default_rng(7)
    (q,), (v,) = random_base_states(rng, robot.model, 1, dqmax=1.0)
    fd = lambda q, v: lib.forward_dynamics(q, v, np.zeros(9), p)  # noqa: E731
    states = [(q, v)]
    for _ in range(int(round(seconds / h))):
        q, v = rk4_step(fd, q, v, h)
        states.append((q, v))
    return states


def free_params(robot, gravity):
    """Default inertias, no friction (it would dissipate), g as asked."""
    p = np.array(robot.values)
    for k, n in enumerate(robot.model.param_names):
        if n.startswith(("Fv_", "Fc_")):
            p[k] = 0.0
        if n == "g":
            p[k] = 9.81 if gravity else 0.0
    return p


def test_free_flight_conserves_momentum(tiny):
    robot, lib = tiny
    p = free_params(robot, gravity=False)
    states = simulate(lib, robot, p)
    l0, a0 = world_momentum(lib, *states[0], p)
    assert np.linalg.norm(l0) > 0.1 and np.linalg.norm(a0) > 0.1
    worst = max(max(np.abs(l - l0).max(), np.abs(a - a0).max())
                for l, a in (world_momentum(lib, q, v, p) for q, v in states[::40]))
    print("momentum drift", worst)
    assert worst <= 1e-10 * (1 + max(np.abs(l0).max(), np.abs(a0).max())), worst
    moved = np.abs(states[-1][0][7:] - states[0][0][7:]).max()
    assert moved > 0.1  # the joints did move


def test_free_fall_conserves_energy(tiny):
    robot, lib = tiny
    p = free_params(robot, gravity=True)
    keys = [robot.model.end_effector(e).frame for e in TINY_EES]
    assert set(keys) == {f.key for f in robot.model.frames if f.param_names() and f.moving}
    # end effectors on the bodies themselves (identity placements), except tool and foot
    bodies = [(i, e) for i, e in enumerate(TINY_EES) if e not in ("tool", "foot")]
    idx = [i for i, _ in bodies]
    names = [e for _, e in bodies]

    class Bodies:  # fk(q, p, i) over the body end effectors only
        def fk(self, q, p, i):
            return lib.fk(q, p, idx[i])

        def compute_A(self, q, p):
            return lib.compute_A(q, p)

    states = simulate(lib, robot, p)
    E = [energy(Bodies(), robot.model, q, v, p, names) for q, v in states[::40]]
    assert abs(states[-1][0][2] - states[0][0][2]) > 1  # it fell
    print("energy drift", max(abs(e - E[0]) for e in E), "of", E[0])
    assert max(abs(e - E[0]) for e in E) <= 1e-8 * (1 + abs(E[0])), (E[0], max(abs(e - E[0]) for e in E))


# --------------------------------------------------------------------------
# input: flag, floating root joint, model files

def test_flag_and_own_floating_joint_give_the_same_model():
    """The tiny robot without its dummy world link, with --floating-base: the
    same frames but for the free-flyer's name (root_joint, Pinocchio's)."""
    text = TINY.read_text()
    start, end = text.index('  <link name="world"/>'), text.index('  <link name="body">')
    flagged = urdf_robot(text[:start].encode() + text[end:].encode(), floating_base=True, snap=False)
    own = load_urdf(TINY, snap=False)
    assert flagged.model.joint_names[:6] == tuple(f"root_joint:{s}" for s in ("vx", "vy", "vz", "wx", "wy", "wz"))
    assert flagged.model.joint_names[6:] == own.model.joint_names[6:]
    assert flagged.model.param_names == own.model.param_names and flagged.values == own.values


def test_model_toml_round_trip():
    robot = load_urdf(TINY, snap=False, end_effectors=["tool", "body"])
    text, _ = robot.to_toml()
    assert text.count('type = "floating"') == 1 and "\x1f" not in text
    again = parse_model(text)
    assert again.floating_base and again.frames == robot.model.frames
    assert again.param_names == robot.model.param_names and again.end_effectors == robot.model.end_effectors


@pytest.mark.parametrize("edit, match", [
    ('parent = "0"\njoint = "base_free"', "floating frame must be the first frame"),
    ('rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = ["0", "0", "0"]', "rotation identity and origin zero"),
])
def test_floating_frame_errors(edit, match):
    text, _ = load_urdf(TINY, snap=False).to_toml()
    if "first" in match:  # the floating frame hung below another frame
        text = text.replace(edit, 'parent = "body"\njoint = "base_free"', 1)
    else:
        text = text.replace(edit, 'rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = ["0.1", "0", "0"]', 1)
    with pytest.raises(ModelError, match=match):
        parse_model(text)


def test_planar_and_inner_floating_joints_are_refused_by_name():
    text = TINY.read_text()
    for kind in ("planar", "floating"):
        bad = text.replace('name="slider" type="prismatic"', f'name="slider" type="{kind}"')
        with pytest.raises(ModelError, match=f"slider.*{kind}"):
            urdf_robot(bad.encode())


def test_floating_base_flag_is_urdf_only(tmp_path):
    r = subprocess.run([sys.executable, "-m", "codegen", "models/krang.toml", "models/krang_params.toml",
                        "--out", str(tmp_path), "--floating-base"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "--floating-base" in r.stderr


# --------------------------------------------------------------------------
# robots from example-robot-data

ALL_ROBOTS = os.environ.get("KK_FLOATING_ALL") == "1"  # the others: minutes of generation each (Talos ~2)


@pytest.mark.robots
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "solo12" or ALL_ROBOTS else pytest.mark.skip(
    reason="KK_FLOATING_ALL=1 runs every floating-base robot")) for n in sorted(ROBOTS)])
def test_robot_with_free_flyer_matches_pinocchio(name, tmp_path):
    rel, ees = ROBOTS[name]
    urdf = robots_dir() / rel
    if not urdf.exists():
        pytest.skip(f"{rel} is not in this example-robot-data")
    robot, lib = build(tmp_path, urdf, name, ees, True)
    errs = max_errors(urdf, robot, lib, False, seed=11, n_states=3)
    print(name, {k: f"{e:.1e}" for k, e in sorted(errs.items())})
    check(errs)


def test_centroidal_and_configuration_kernels_on_a_floating_base(tiny):
    """com, com_jacobian, centroidal_map, integrate and neutral on the free-flyer against
    pin.centerOfMass, jacobianCenterOfMass, computeCentroidalMap, integrate and neutral."""
    robot, lib = tiny
    rng = np.random.default_rng(7)
    for params in (np.array(robot.values), random_physical_params(robot.model, rng)):
        ref = PinFreeFlyer(TINY, robot.model, params, True)
        pm, d, P = ref.pm, ref.data, ref.perm
        qs, dqs = random_base_states(rng, robot.model, 4)
        for q, dq in zip(qs, dqs):
            qp = ref.q(q)
            c = pin.centerOfMass(pm, d, qp)
            assert rel_err(lib.com(q, params), c) <= TOL
            assert rel_err(lib.com_jacobian(q, params), pin.jacobianCenterOfMass(pm, d, qp)[:, P]) <= TOL
            assert rel_err(lib.centroidal_map(q, params), pin.computeCentroidalMap(pm, d, qp)[:, P]) <= TOL
            for dt in (0.01, 1e-7, 0.7):  # the exponential's Taylor branch and a large step
                vp = np.zeros(pm.nv)
                vp[P] = dq
                got = lib.integrate(q, dq, dt)
                assert abs(np.linalg.norm(got[3:7]) - 1) <= 1e-15
                want = pin.integrate(pm, qp, vp * dt)
                if want[3:7] @ got[3:7] < 0:  # q and -q are one rotation
                    want[3:7] *= -1
                assert rel_err(ref.q(got), want) <= TOL, dt
    np.testing.assert_array_equal(ref.q(lib.neutral()), pin.neutral(pm))
    # a non-unit quaternion in q: integrate normalizes it, as every kernel does
    q, dq = qs[0].copy(), dqs[0]
    q2 = q.copy()
    q2[3:7] *= 3.0
    assert rel_err(lib.integrate(q2, dq, 0.1), lib.integrate(q, dq, 0.1)) <= 1e-15

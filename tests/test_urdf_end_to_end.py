"""URDF in, compiled C out, against Pinocchio built from the SAME URDF.

For real robots from example-robot-data (Panda with its -pi/4 hand, UR5,
Solo12 as a fixed-base branched tree, a Kinova arm with continuous joints),
a URDF with hostile names and a URDF with fixed links: generate C with the
CLI (`python -m codegen ROBOT.urdf ...` in a subprocess), compile it with
gcc -O2 -std=c99 -Wall -Wextra -Werror, load it (reference/abi_ctypes.py) and
compare with pin.buildModelFromUrdf(ROBOT.urdf) whose inertias, armature and
gravity are set from our parameter vector (so random parameter sets test the
parameter layout too):

  A ~ crba (armature included), C ~ computeCoriolisMatrix,
  Q ~ computeGeneralizedGravity, jacobian(ee, world/local) ~ getFrameJacobian
  of the URDF link's frame (LOCAL_WORLD_ALIGNED / LOCAL), fk ~ oMf,
  inverse_dynamics - friction ~ rnea, bias ~ nonLinearEffects,
  jdot_qdot ~ getFrameClassicalAcceleration (ddq = 0, LOCAL_WORLD_ALIGNED),
  forward_dynamics(tau + friction) ~ aba.

Continuous joints: our q is the angle, Pinocchio's (cos q, sin q); v is the
same. Error: max|ours - pin| / (1 + max|pin|) over random states and the
default plus 2 random physically valid parameter sets. --no-snap: <= 1e-12
(forward dynamics: 1e-12 times cond(A), as it solves with A). Snapped (the
default): <= reference.pin_reference.snap_bound(model), the first-order effect of
moving rotation entries by <= 1e-9.
"""
from __future__ import annotations

import ctypes
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")

from reference.robot_data import MIMIC, MIMIC_FLAGS, robots_dir  # noqa: E402
from codegen.read.urdf import SNAP_TOL, load_urdf  # noqa: E402
from codegen.pipeline import default_name  # noqa: E402
from reference.abi_ctypes import Library, compile_shared  # noqa: E402
from reference.pin_reference import snap_bound, urdf_q  # noqa: E402
from reference.reference_fk import param_dict, random_physical_params, random_states, rel_err  # noqa: E402

HERE = Path(__file__).resolve().parent
STRICT = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
EXACT_TOL = 1e-12
N_STATES = 6

ROBOTS = {
    # the hand is fixed to link8 with rpy (0, 0, -pi/4); two prismatic fingers
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand", "panda_leftfinger"]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["tool0", "ee_link"]),
    # branched tree (fixed base); the feet are merged fixed links
    "solo12": ("solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    # continuous joints: one angle each here, (cos, sin) in Pinocchio
    "kinova": ("kinova_description/robots/kinova.urdf", ["j2s6s200_end_effector", "j2s6s200_link_4"]),
}
HOSTILE_EES = ["ee", "frame", "link_a", "link.a", "p", "link a"]


def cli(urdf, out, name, ees, snap=True, extra=()):
    """python -m codegen URDF in a subprocess; the generated .c path."""
    cmd = [sys.executable, "-m", "codegen", str(urdf), "--out", str(out), *extra]
    if name is not None:
        cmd += ["--name", name]
    for e in ees:
        cmd += ["--end-effector", e]
    if not snap:
        cmd.append("--no-snap")
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
    # nothing on stderr but the progress lines of slow stages ("[codegen] stage: 2.3 s"), which
    # appear or not with the machine's load
    noise = [ln for ln in r.stderr.splitlines() if not re.fullmatch(r"\[codegen\] .+: \d+\.\d s", ln)]
    assert r.returncode == 0 and not noise, r.stderr
    c_files = sorted(out.glob("*_kernels.c"))
    assert len(c_files) == 1, c_files
    return c_files[0]


def build(urdf, tmp, name, ees, snap):
    """(UrdfRobot, Library): load_urdf for the reference layout, the C from the CLI."""
    model_name = name or default_name(urdf)  # the command line's default: the URDF file name
    robot = load_urdf(urdf, name=model_name, end_effectors=ees, snap=snap, mimic=MIMIC)  # Pinocchio's mimic=False
    out = tmp / ("snap" if snap else "exact")
    c_file = cli(urdf, out, name, ees, snap, extra=MIMIC_FLAGS)
    lib = Library(robot.model, compile_shared(c_file, out / "libkernels.so", STRICT), model_name)
    return robot, lib


class PinUrdf:
    """pin.buildModelFromUrdf(urdf) with inertias, armature and gravity from our parameter vector."""

    def __init__(self, urdf, model, params):
        self.model_ours = model
        pm = pin.buildModelFromUrdf(str(urdf))
        p = param_dict(model, params)
        self.perm = []
        for f in model.joints:
            jid = pm.getJointId(f.joint)
            k = f.key
            # (m, m c, J about the joint frame origin: XX XY YY XZ YZ ZZ), Pinocchio's order
            dyn = [p[f"{n}_{k}"] for n in ("m", "MX", "MY", "MZ", "XX", "XY", "YY", "XZ", "YZ", "ZZ")]
            pm.inertias[jid] = pin.Inertia.FromDynamicParameters(np.array(dyn))
            pm.armature[pm.joints[jid].idx_v] = p[f"Ia_{k}"]
            self.perm.append(pm.joints[jid].idx_v)
        pm.gravity.linear = p["g"] * np.array([float(x) for x in model.gravity])
        self.fv = np.array([p[f"Fv_{f.key}"] for f in model.joints])
        self.fc = np.array([p[f"Fc_{f.key}"] for f in model.joints])
        self.pm, self.data = pm, pm.createData()
        self.fids = [pm.getFrameId(e.name, pin.BODY) for e in model.end_effectors]

    def friction(self, dq):
        return self.fv * dq + self.fc * np.sign(dq)

    def reference(self, q, dq, ddq):
        """Everything in OUR coordinate order."""
        pm, d, P = self.pm, self.data, np.array(self.perm)
        qp = urdf_q(pm, self.model_ours, q)
        vp, ap = np.zeros(pm.nv), np.zeros(pm.nv)
        vp[P], ap[P] = dq, ddq
        M = pin.crba(pm, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        out = {"A": M[np.ix_(P, P)],
               "C": pin.computeCoriolisMatrix(pm, d, qp, vp)[np.ix_(P, P)],
               "Q": pin.computeGeneralizedGravity(pm, d, qp)[P],
               "tau": pin.rnea(pm, d, qp, vp, ap)[P],
               "bias": pin.nonLinearEffects(pm, d, qp, vp)[P]}
        out["ddq"] = pin.aba(pm, d, qp, vp, pin.rnea(pm, d, qp, vp, ap))[P]  # = ddq, as Pinocchio solves it
        pin.computeJointJacobians(pm, d, qp)
        pin.updateFramePlacements(pm, d)
        for i, fid in enumerate(self.fids):
            out[f"J{i}_world"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)[:, P]
            out[f"J{i}_local"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL)[:, P]
            out[f"T{i}"] = d.oMf[fid].homogeneous.copy()
        pin.forwardKinematics(pm, d, qp, vp, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, d)
        for i, fid in enumerate(self.fids):
            a = pin.getFrameClassicalAcceleration(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)
            out[f"a{i}"] = np.concatenate([a.linear, a.angular])
        return out


def ours_ctypes(lib, n_ee):
    def ours(q, dq, ddq, p, fr, tau_pin):
        out = {"A": lib.compute_A(q, p), "C": lib.compute_C(q, dq, p), "Q": lib.compute_Q(q, p),
               "tau": lib.inverse_dynamics(q, dq, ddq, p) - fr, "bias": lib.bias(q, dq, p),
               "ddq": lib.forward_dynamics(q, dq, tau_pin + fr, p)}  # Pinocchio's torque for ddq
        for i in range(n_ee):
            out[f"J{i}_world"], out[f"J{i}_local"] = lib.jacobian(q, p, i, 0), lib.jacobian(q, p, i, 1)
            out[f"T{i}"] = lib.fk(q, p, i)
            out[f"a{i}"] = lib.jdot_qdot(q, dq, p, i)
        # compute_all (its own shared routines, Jacobian columns included) agrees with the single kernels
        singles = [out["A"], out["C"], out["Q"], *(out[f"J{i}_world"] for i in range(n_ee))]
        for name, a, b in zip(["A", "C", "Q", *range(n_ee)], lib.compute_all(q, dq, p), singles):
            assert rel_err(a, b) <= 1e-12, f"compute_all {name}"
        return out
    return ours


def param_sets(robot, seed):
    rng = np.random.default_rng(seed)
    return [("default", np.array(robot.values, dtype=float))] + [
        (f"random{i}", random_physical_params(robot.model, rng)) for i in range(2)]


def max_errors(urdf, robot, ours, seed, n_states=N_STATES):
    """{quantity: max rel err} over the parameter sets and random states; ddq errors divided by cond(A)."""
    errs = {}
    rng = np.random.default_rng(seed)
    for _, params in param_sets(robot, seed):
        ref_side = PinUrdf(urdf, robot.model, params)
        qs, dqs = random_states(rng, n_states, robot.model.ndof)
        ddqs = rng.uniform(-5, 5, size=qs.shape)
        for q, dq, ddq in zip(qs, dqs, ddqs):
            ref = ref_side.reference(q, dq, ddq)
            got = ours(q, dq, ddq, params, ref_side.friction(dq), ref["tau"])
            for k, v in ref.items():
                e = rel_err(got[k], v)
                if k == "ddq":
                    e /= np.linalg.cond(ref["A"])
                errs[k] = max(errs.get(k, 0.0), e)
    return errs


def check(errs, bound):
    assert not [k for k, e in errs.items() if not e <= bound], (errs, bound)  # NaN fails too


@pytest.mark.robots
@pytest.mark.parametrize("robot_name", sorted(ROBOTS))
def test_generated_c_matches_pinocchio(robot_name, tmp_path):
    rel, ees = ROBOTS[robot_name]
    urdf = robots_dir() / rel
    exact, lib = build(urdf, tmp_path, robot_name, ees, snap=False)
    errs = max_errors(urdf, exact, ours_ctypes(lib, len(ees)), seed=1)
    print(robot_name, "no-snap", {k: f"{e:.1e}" for k, e in sorted(errs.items())})
    check(errs, EXACT_TOL)
    snapped, lib = build(urdf, tmp_path, robot_name, ees, snap=True)
    bound = snap_bound(snapped.model, SNAP_TOL)
    errs = max_errors(urdf, snapped, ours_ctypes(lib, len(ees)), seed=2)
    print(robot_name, f"snapped (bound {bound:.1e})", {k: f"{e:.1e}" for k, e in sorted(errs.items())})
    check(errs, bound)


@pytest.mark.system  # the hostile-names build; the name escaping itself is unit-tested (test_cnames)
def test_hostile_names_compile_and_match(tmp_path):
    urdf = HERE / "models" / "hostile_names.urdf"
    # no --name: the C prefix comes from the file name hostile_names.urdf (not <robot name>)
    exact, lib = build(urdf, tmp_path, None, HOSTILE_EES, snap=False)
    assert lib.abi.prefix == "hostile_names_"
    n = exact.model.ndof
    lib.lib.hostile_names_joint_name.restype = ctypes.c_char_p
    names = [lib.lib.hostile_names_joint_name(i).decode() for i in range(n)]
    assert names == list(pin.buildModelFromUrdf(str(urdf)).names[1:])  # verbatim, Pinocchio's order
    errs = max_errors(urdf, exact, ours_ctypes(lib, len(HOSTILE_EES)), seed=3, n_states=4)
    check(errs, EXACT_TOL)


# --------------------------------------------------------------------------
# fixed-link merging: the same robot with its fixed links lumped beforehand

def _rpy(R):
    return " ".join(repr(float(x)) for x in pin.rpy.matrixToRpy(R))


def _xyz(p):
    return " ".join(repr(float(x)) for x in p)


def lumped_urdf(urdf) -> str:
    """The robot of `urdf` with every fixed link folded into its moving parent,
    written by hand from Pinocchio's own parse (its lumped joint inertias,
    composed joint placements): no fixed joint with mass is left; the
    end-effector link "tcp" stays as a massless fixed link."""
    pm = pin.buildModelFromUrdf(str(urdf))
    links, joints = ['<link name="base"/>'], []
    names = {0: "base"}
    for jid in range(1, pm.njoints):
        body = next(f.name for f in pm.frames if f.type == pin.BODY and f.parentJoint == jid
                    and f.placement.isIdentity())
        names[jid] = body
        Y = pm.inertias[jid]
        I = Y.inertia
        links.append(
            f'<link name="{body}"><inertial><origin xyz="{_xyz(Y.lever)}" rpy="0 0 0"/>'
            f'<mass value="{float(Y.mass)!r}"/><inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/></inertial></link>')
        X = pm.jointPlacements[jid]
        axis = {"JointModelRX": "1 0 0", "JointModelRY": "0 1 0", "JointModelRZ": "0 0 1"}[pm.joints[jid].shortname()]
        joints.append(
            f'<joint name="{pm.names[jid]}" type="revolute"><parent link="{names[pm.parents[jid]]}"/>'
            f'<child link="{body}"/><origin xyz="{_xyz(X.translation)}" rpy="{_rpy(X.rotation)}"/>'
            f'<axis xyz="{axis}"/><limit lower="-3" upper="3" effort="50" velocity="2"/></joint>')
    tcp = pm.frames[pm.getFrameId("tcp", pin.BODY)]
    links.append('<link name="tcp"/>')
    joints.append(f'<joint name="tcp_fixed" type="fixed"><parent link="{names[tcp.parentJoint]}"/>'
                  f'<child link="tcp"/><origin xyz="{_xyz(tcp.placement.translation)}" '
                  f'rpy="{_rpy(tcp.placement.rotation)}"/></joint>')
    return '<?xml version="1.0"?>\n<robot name="merge_fixed">\n' + "\n".join(links + joints) + "\n</robot>\n"


def test_merging_fixed_links_gives_the_unmerged_dynamics(tmp_path):
    urdf = HERE / "models" / "merge_fixed.urdf"
    lumped = tmp_path / "lumped.urdf"
    lumped.write_text(lumped_urdf(urdf))
    ees = ["l2", "tcp"]
    merged, lib_m = build(urdf, tmp_path / "merged", "merged", ees, snap=False)
    pre, lib_p = build(lumped, tmp_path / "pre", "pre", ees, snap=False)
    assert merged.model.param_names == pre.model.param_names  # one body per moving joint
    assert max(abs(a - b) for a, b in zip(merged.values, pre.values)) <= 1e-12
    rng = np.random.default_rng(4)
    qs, dqs = random_states(rng, 8, merged.model.ndof)
    p = np.array(merged.values)
    for q, dq in zip(qs, dqs):
        pairs = [(lib_m.compute_A(q, p), lib_p.compute_A(q, p)), (lib_m.compute_C(q, dq, p), lib_p.compute_C(q, dq, p)),
                 (lib_m.compute_Q(q, p), lib_p.compute_Q(q, p))]
        pairs += [(lib_m.jacobian(q, p, i, f), lib_p.jacobian(q, p, i, f)) for i in range(2) for f in (0, 1)]
        pairs += [(lib_m.fk(q, p, i), lib_p.fk(q, p, i)) for i in range(2)]
        for a, b in pairs:
            assert rel_err(a, b) <= 1e-12
    # and both match Pinocchio on the original URDF
    check(max_errors(urdf, merged, ours_ctypes(lib_m, 2), seed=5, n_states=4), EXACT_TOL)


# --------------------------------------------------------------------------
# the generated Python module

@pytest.mark.robots
def test_python_module_from_urdf_matches_pinocchio(tmp_path):
    rel, ees = ROBOTS["kinova"]
    urdf = robots_dir() / rel
    cli(urdf, tmp_path, "kinova", ees, snap=False, extra=["--python"])
    so = next(tmp_path.glob("kinova_kernels.*.so"))
    spec = importlib.util.spec_from_file_location("kinova_kernels", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    robot = load_urdf(urdf, name="kinova", end_effectors=ees, snap=False)
    assert mod.END_EFFECTORS == tuple(ees) and mod.JOINT_NAMES == robot.model.joint_names
    np.testing.assert_array_equal(mod.default_params(), robot.values)

    def ours(q, dq, ddq, p, fr, tau_pin):
        out = {"A": mod.compute_A(q, p), "C": mod.compute_C(q, dq, p), "Q": mod.compute_Q(q, p),
               "tau": mod.inverse_dynamics(q, dq, ddq, p) - fr, "bias": mod.bias(q, dq, p),
               "ddq": mod.forward_dynamics(q, dq, tau_pin + fr, p)}
        for i, e in enumerate(ees):
            out[f"J{i}_world"], out[f"J{i}_local"] = mod.jacobian(q, e, "world", p), mod.jacobian(q, e, "local", p)
            out[f"T{i}"] = mod.fk(q, e, p)
            out[f"a{i}"] = mod.jdot_qdot(q, dq, e, p)
        return out

    check(max_errors(urdf, robot, ours, seed=6, n_states=4), EXACT_TOL)

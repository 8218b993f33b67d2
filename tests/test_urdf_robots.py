"""The URDF front end on real robots, against Pinocchio's own URDF parser.

For each URDF from example-robot-data: (a) pin.buildModelFromUrdf(urdf) and
(b) reference/pin_reference.build_pin_model of OUR converted model and default
values (codegen.read.urdf.load_urdf) must give the same A (crba), C
(computeCoriolisMatrix), Q (computeGeneralizedGravity) and end-effector
Jacobians (the URDF link's frame in (a), LOCAL_WORLD_ALIGNED and LOCAL) at
random states, with the same coordinate order (compare_urdf checks it). This
checks the front end (tree walk, fixed-link merging, inertia lumping, rpy and
axis conventions, end-effector placements) independently of the generator.

Error measure: max|a - b| / (1 + max|a|). snap=False: <= 1e-12. snap=True:
<= pin_reference.snap_bound(model), the first-order bound that follows from
moving rotation and axis entries by <= 1e-9 (derivation in its docstring).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytestmark = pytest.mark.robots

pin = pytest.importorskip("pinocchio")

from benchmarks.urdf_coverage import EXACT_TOL, LEGGED, check_robot, run  # noqa: E402
from reference.robot_data import MIMIC, robots_dir  # noqa: E402
from codegen.read.model import ModelError  # noqa: E402
from codegen.read.urdf import SNAP_TOL, load_urdf  # noqa: E402
from reference.floating_reference import compare_urdf_floating  # noqa: E402
from reference.pin_reference import compare_urdf, snap_bound  # noqa: E402

ROBOTS = {
    # Panda: the hand is fixed to link8 with rpy (0, 0, -pi/4); fingers prismatic
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand", "panda_hand_tcp", "panda_leftfinger"]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["ee_link", "tool0"]),
    # branched tree; the feet are merged fixed links
    "solo12": ("solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    # continuous joints: one angle each here, (cos, sin) in Pinocchio
    "kinova": ("kinova_description/robots/kinova.urdf", ["j2s6s200_end_effector", "j2s6s200_link_6"]),
    "talos": ("talos_data/robots/talos_reduced.urdf",
              ["left_sole_link", "right_sole_link", "gripper_left_base_link", "gripper_right_base_link"]),
    "baxter": ("baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper", "head"]),
}


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_robot_matches_pinocchio(robot):
    rel, ees = ROBOTS[robot]
    path = robots_dir() / rel
    exact = load_urdf(path, end_effectors=ees, snap=False, mimic=MIMIC)  # Pinocchio's mimic=False
    assert [e.name for e in exact.model.end_effectors] == ees
    errs = compare_urdf(path, exact, n_states=20, seed=1)
    assert set(errs) == {"A", "C", "Q", "J_world", "J_local"}
    assert max(errs.values()) <= EXACT_TOL, errs
    snapped = load_urdf(path, end_effectors=ees, snap=True, mimic=MIMIC)
    bound = snap_bound(snapped.model, SNAP_TOL)
    errs = compare_urdf(path, snapped, n_states=20, seed=2)
    assert max(errs.values()) <= bound, (errs, bound)


def test_kinova_continuous_joints_have_one_coordinate():
    path = robots_dir() / ROBOTS["kinova"][0]
    model = load_urdf(path).model
    pm = pin.buildModelFromUrdf(str(path))
    assert pm.nq > pm.nv == model.ndof  # Pinocchio: (cos, sin) per continuous joint
    continuous = [f for f in model.frames if f.joint in ("j2s6s200_joint_1", "j2s6s200_joint_4")]
    assert continuous and all(f.type == "revolute" and f.limits.lower is None for f in continuous)


def test_snapping_makes_truncated_pi_over_2_exact():
    # Kinova writes pi as 3.14159265359 and pi/2 as 1.57079632679: every
    # rotation entry is within 1e-9 of 0 or +-1, so snapping makes them exact
    path = robots_dir() / ROBOTS["kinova"][0]
    pa = pin.buildModelFromUrdf(str(path))
    snapped, raw = load_urdf(path).model, load_urdf(path, snap=False).model
    for f in snapped.frames:
        ref = pa.jointPlacements[pa.getJointId(f.joint)].rotation  # Pinocchio's composed placement
        assert all(x.is_Integer for x in f.rotation), f.key
        assert (np.array(f.rotation.tolist(), dtype=float) == ref.round()).all()
        assert abs(np.array(f.rotation.tolist(), dtype=float) - ref).max() <= SNAP_TOL
    assert not all(x.is_Integer for f in raw.frames for x in f.rotation)


def test_coverage_every_robot_matches_or_is_refused():
    """All 69 example-robot-data URDFs: each matches Pinocchio within tolerance
    or is refused with a ModelError (other exceptions fail the test)."""
    rows = run(n_states=3)
    assert len(rows) >= 69
    bad = [(name, r) for name, r in rows if r["status"] not in ("matched", "refused")]
    assert not bad, bad
    for name, r in rows:
        if r["status"] == "refused":
            assert r["reason"], name
    accepted = sum(r["status"] == "matched" for _, r in rows)
    assert accepted >= 0.9 * len(rows)


@pytest.mark.parametrize("robot", ["solo12", "talos"])
def test_floating_base_matches_pinocchio_free_flyer(robot):
    """The floating-base coverage check (benchmarks/urdf_coverage.py, free-flyer pass) on two robots."""
    rel, ees = ROBOTS[robot]
    path = robots_dir() / rel
    assert rel.split("/")[0] in LEGGED
    r = check_robot(path, n_states=3, floating=True)
    assert r["status"] == "matched" and r["dof"] == load_urdf(path, mimic=MIMIC).model.ndof + 6, r
    errs = compare_urdf_floating(path, load_urdf(path, end_effectors=ees, snap=False, floating_base=True,
                                                           mimic=MIMIC), 4, 1)
    assert set(errs) == {"A", "C", "Q", "J_world", "J_local"}
    assert max(errs.values()) <= EXACT_TOL, errs


def test_floating_base_check_fails_on_a_wrong_base_mass():
    """The free-flyer comparison sees a change of the base link alone (a check that can fail)."""
    path = robots_dir() / ROBOTS["solo12"][0]
    robot = load_urdf(path, end_effectors=ROBOTS["solo12"][1], snap=False, floating_base=True)
    values = list(robot.values)
    values[robot.model.param_names.index("m_base_link")] *= 1.01
    wrong = SimpleNamespace(model=robot.model, values=values)
    assert compare_urdf_floating(path, robot, 2, 0)["A"] <= EXACT_TOL
    assert compare_urdf_floating(path, wrong, 2, 0)["A"] > 1e-4


def test_floating_coverage_every_legged_robot_matches_or_is_refused():
    rows = run(n_states=2, floating=True)
    assert len(rows) >= 30
    assert all(r["status"] == "matched" or (r["status"] == "refused" and r["reason"]) for _, r in rows), rows


def test_floating_joint_refused_by_name(tmp_path):
    text = (robots_dir() / ROBOTS["ur5"][0]).read_text()
    text = text.replace('name="shoulder_pan_joint" type="revolute"', 'name="shoulder_pan_joint" type="floating"')
    p = tmp_path / "ur5_floating.urdf"
    p.write_text(text)
    with pytest.raises(ModelError, match="shoulder_pan_joint.*floating"):
        load_urdf(p)

"""models/krang_params.toml: Krang's default parameters converted from the URDF.

The reference is Pinocchio's own URDF parser (pin.buildModelFromUrdf), with
the link-to-seed-frame rotations taken from Pinocchio's forward kinematics at
q = 0 and from codegen.read.model's frame tree, independently of the converter's
rpy handling.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.module

ROOT = Path(__file__).resolve().parents[1]

from codegen.read.model import load_model, load_param_values  # noqa: E402

URDF = ROOT / "tests" / "data" / "krang_fixed_wheel.urdf"  # see tests/data/README.md
PARAMS = ROOT / "models" / "krang_params.toml"
MODEL = ROOT / "models" / "krang.toml"
SCRIPT = ROOT / "models" / "krang_params_from_urdf.py"

needs_urdf = pytest.mark.skipif(not URDF.exists(), reason=f"{URDF} not available")

# Seed frame key -> URDF joint carrying the link (Pinocchio joint name).
JOINT_OF = {"1": "JLWheel", "2": "JWaist", "3": "JTorso"}
LINK_OF = {"1": "Base", "2": "Spine", "3": "Bracket"}
for s, S in (("l", "L"), ("r", "R")):
    for i in range(1, 7):
        JOINT_OF[f"{i + 3}{s}"] = f"{S}J{i}"
        LINK_OF[f"{i + 3}{s}"] = f"{S}{i}"
    JOINT_OF[f"10{s}"] = f"{S}JFT"
    LINK_OF[f"10{s}"] = f"{s}Gripper"
PLATES = ("lgPlate1", "lgPlate2", "rgPlate1", "rgPlate2")
KINECT_BOX = (0.28, 0.07, 0.063)  # the documented replacement of the Kinect's inertia


@pytest.fixture(scope="module")
def model():
    return load_model(MODEL)


@pytest.fixture(scope="module")
def values(model):
    return dict(zip(model.param_names, load_param_values(PARAMS, model)))


def standard(values, key):
    """(m, MS, J) of frame `key` from the parameter file."""
    v = lambda n: values[f"{n}_{key}"]  # noqa: E731
    ms = np.array([v("MX"), v("MY"), v("MZ")])
    j = np.array([[v("XX"), v("XY"), v("XZ")], [v("XY"), v("YY"), v("YZ")], [v("XZ"), v("YZ"), v("ZZ")]])
    return v("m"), ms, j


def com_inertia(m, ms, j):
    s = ms / m
    return s, j - m * (s @ s * np.eye(3) - np.outer(s, s))


def physical_problems(ic):
    e = np.linalg.eigvalsh(ic)
    out = []
    if not np.allclose(ic, ic.T, atol=0):
        out.append("not symmetric")
    if e[0] <= 0:
        out.append(f"not positive definite: {e}")
    if e[0] + e[1] < e[2] * (1 - 1e-12):
        out.append(f"triangle inequality violated: {e}")
    return out


def seed_rotation(model, key):
    """1R_key at q = 0 from the model file (codegen.read.model, sympy)."""
    r = np.eye(3)
    for f in model.chain(key)[1:]:
        r = r @ np.array(f.rotation.tolist(), dtype=float)
    return r


@pytest.fixture(scope="module")
def pin_robot():
    pin = pytest.importorskip("pinocchio")
    if not URDF.exists():
        pytest.skip(f"{URDF} not available")
    robot = pin.buildModelFromUrdf(str(URDF))
    data = robot.createData()
    pin.forwardKinematics(robot, data, pin.neutral(robot))
    return pin, robot, data


def urdf_to_seed(model, pin_robot, key):
    """R_k = (1R_k seed)^T BaseR_link (Pinocchio, rounded to integers)."""
    pin, robot, data = pin_robot
    base = data.oMi[robot.getJointId("JLWheel")]
    link = (base.inverse() * data.oMi[robot.getJointId(JOINT_OF[key])]).rotation
    r = seed_rotation(model, key).T @ link
    rounded = np.round(r)
    assert np.abs(r - rounded).max() < 0.01, (key, r)  # the URDF uses 3.14 for pi
    assert np.array_equal(rounded.T @ rounded, np.eye(3)) and round(np.linalg.det(rounded)) == 1
    return rounded


def pin_body(pin_robot, key):
    """Pinocchio inertia of frame key's body in the URDF link frame, with the
    documented lumping: gripper plates removed, Kinect added to the Bracket
    as a box of KINECT_BOX at its URDF centre of mass."""
    pin, robot, _ = pin_robot
    jid = robot.getJointId(JOINT_OF[key])
    y = robot.inertias[jid].copy()
    for f in robot.frames:  # fixed children merged into the body by Pinocchio
        if f.type == pin.FrameType.FIXED_JOINT and f.parentJoint == jid and f.inertia.mass > 0:
            y = y - f.placement.act(f.inertia)
    if key == "3":
        kid = robot.getJointId("JKinect")
        assert robot.parents[kid] == jid
        yk = robot.inertias[kid]
        box = pin.Inertia.FromBox(yk.mass, *KINECT_BOX).inertia
        y = y + robot.jointPlacements[kid].act(pin.Inertia(yk.mass, yk.lever, box))
    return y


# ---------------------------------------------------------------- file and script
def test_file_loads_in_model_order(model):
    vals = load_param_values(PARAMS, model)
    assert len(vals) == len(model.param_names)
    raw = tomllib.loads(PARAMS.read_text())["values"]
    assert list(raw) == list(model.param_names)  # every name given, in order
    for k in (f.key for f in model.joints):
        assert raw[f"Ia_{k}"] == raw[f"Fv_{k}"] == raw[f"Fc_{k}"] == 0.0
    assert raw["g"] == 9.81
    report = dict(L1=0.499, L2=0.091, L3=0.584, L4=0.1088, L5=0.0845, L6=0.2823, L7=0.328, L8=0.2765, L9=0.200)
    assert {n: raw[n] for n in report} == report


def test_header_documents_source_and_choices():
    text = PARAMS.read_text()
    header = text.split("[values]")[0]
    assert all(line.startswith("#") or not line.strip() for line in header.splitlines())
    for needle in ("e556156", "09-URDF/KrangFixedWheels/krang_fixed_wheel.urdf", "Kinect", "lgPlate1",
                   "0.026", "-0.0285", "S = R_k c", "R_10l = [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]"):
        assert needle in header, needle


@needs_urdf
def test_script_check_passes():
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_urdf
def test_script_check_detects_a_stale_file(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("krang_params_from_urdf", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stale = tmp_path / "krang_params.toml"
    stale.write_text(PARAMS.read_text().replace("m_1 = 75.767", "m_1 = 75.768"))
    monkeypatch.setattr(mod, "OUTPUT", stale)
    monkeypatch.setattr(mod, "REPO", tmp_path)
    assert mod.main(["--check"]) == 1
    assert mod.main([]) == 0  # regenerates ...
    assert stale.read_text() == PARAMS.read_text()  # ... byte-identically
    assert mod.main(["--check"]) == 0


# ---------------------------------------------------------------- against Pinocchio
@needs_urdf
def test_rotations_link_to_seed_frame(model, pin_robot):
    gripper = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
    for key in JOINT_OF:
        r = urdf_to_seed(model, pin_robot, key)
        expected = gripper if key.startswith("10") else np.eye(3)
        assert np.array_equal(r, expected), key
        # The joint axes agree, so R_k is constant in q.
        pin, robot, _ = pin_robot
        jm = robot.joints[robot.getJointId(JOINT_OF[key])]
        if key != "1":
            axis = np.array(jm.extract().axis)  # JointModelRevoluteUnaligned
            assert np.allclose(r @ axis, [float(a) for a in model.frame(key).axis]), key


@needs_urdf
def test_standard_parameters_match_pinocchio(model, values, pin_robot):
    for key in JOINT_OF:
        r = urdf_to_seed(model, pin_robot, key)
        p = pin_body(pin_robot, key).toDynamicParameters()  # m, m c, I about the link origin
        m, mc = p[0], p[1:4]
        xx, xy, yy, xz, yz, zz = p[4:]
        j = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        fm, fms, fj = standard(values, key)
        tol = 1e-6 if key == "3" else 1e-9  # JKinect's placement uses 3.1416 for pi
        assert fm == pytest.approx(m, abs=1e-12), key
        np.testing.assert_allclose(fms, r @ mc, atol=tol, rtol=0, err_msg=key)
        np.testing.assert_allclose(fj, r @ j @ r.T, atol=tol, rtol=0, err_msg=key)


@needs_urdf
def test_mass_and_com_inertia_eigenvalues_match_pinocchio(values, pin_robot):
    for key in JOINT_OF:
        y = pin_body(pin_robot, key)
        m, ms, j = standard(values, key)
        s, ic = com_inertia(m, ms, j)
        assert m == pytest.approx(y.mass, abs=1e-12), key
        assert np.linalg.norm(s) == pytest.approx(np.linalg.norm(y.lever), abs=1e-6), key
        np.testing.assert_allclose(np.linalg.eigvalsh(ic), np.linalg.eigvalsh(y.inertia),
                                   atol=1e-7, rtol=0, err_msg=key)


def _urdf_links():
    out = {}
    for link in ET.parse(URDF).getroot().findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        i = inertial.find("inertia")
        g = {k: float(i.get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        origin = inertial.find("origin")
        out[link.get("name")] = (
            float(inertial.find("mass").get("value")),
            np.array([float(x) for x in origin.get("xyz").split()]) if origin is not None else np.zeros(3),
            np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                      [g["ixz"], g["iyz"], g["izz"]]]),
        )
    return out


@needs_urdf
def test_com_inertia_back_in_link_frame_matches_urdf_numbers(model, values, pin_robot):
    """Undo the conversion (rotate back with R_k) and compare with the URDF's
    own numbers, read here with ElementTree; frame 3 holds the Kinect too."""
    links = _urdf_links()
    for key in JOINT_OF:
        if key == "3":
            continue  # lumped: covered by the Pinocchio tests above
        r = urdf_to_seed(model, pin_robot, key)
        m, ms, j = standard(values, key)
        s, ic = com_inertia(m, ms, j)
        um, uc, ui = links[LINK_OF[key]]
        assert m == um, key
        np.testing.assert_allclose(r.T @ s, uc, atol=1e-12, rtol=0, err_msg=key)
        np.testing.assert_allclose(r.T @ ic @ r, ui, atol=1e-12, rtol=0, err_msg=key)


@needs_urdf
def test_total_mass(values, pin_robot):
    links = _urdf_links()
    expected = sum(links[n][0] for n in LINK_OF.values()) + links["Kinect"][0]
    total = sum(v for n, v in values.items() if n.startswith("m_"))
    assert total == pytest.approx(expected, abs=1e-9)
    assert total == pytest.approx(153.5426, abs=1e-9)
    # Pinocchio: all bodies but the world/wheel, less the dropped plates.
    pin, robot, _ = pin_robot
    pin_total = sum(robot.inertias[i].mass for i in range(1, robot.njoints))
    assert total == pytest.approx(pin_total - sum(links[p][0] for p in PLATES), abs=1e-9)


# ---------------------------------------------------------------- physical validity
def test_every_link_inertia_is_physically_valid(model, values):
    for f in model.frames:
        m, ms, j = standard(values, f.key)
        assert m > 0, f.key
        _, ic = com_inertia(m, ms, j)
        assert physical_problems(ic) == [], f.key


def test_validity_check_rejects_bad_inertias():
    assert physical_problems(np.diag([1.0, 1.0, 3.0]))  # triangle inequality
    assert physical_problems(np.diag([1.0, -0.1, 1.0]))  # not positive definite
    assert physical_problems(np.diag([0.0104, 0.0108, 0.0027])) == []

"""com, com_jacobian, centroidal_map, integrate and neutral against Pinocchio.

Reference: Pinocchio's centerOfMass, jacobianCenterOfMass,
computeCentroidalMap, computeCentroidalMomentum, integrate and neutral on
(a) reference/pin_reference.build_pin_model of the same frame table at random
physically valid parameters, and (b) for URDF robots also on
pin.buildModelFromUrdf of the URDF itself at the URDF's values (the front end
included; continuous joints are (cos, sin) there, one angle here:
pin_reference.urdf_q maps ours to Pinocchio's). Error measure
max|ours - ref| / (1 + max|ref|) <= 1e-12.

Identities that need no reference: Jc = Ag[0:3] / M with M the moving mass
summed from the parameters; Jc dq = the central difference of com along dq;
integrate(q, v, dt) - q = v dt; neutral() = 0 everywhere.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")

from reference.robot_data import MIMIC, robots_dir  # noqa: E402
from codegen.derive.centroidal import moving_roots  # noqa: E402
from codegen.pipeline import CodegenConfig, generate  # noqa: E402
from codegen.read.model import load_model  # noqa: E402
from codegen.read.urdf import load_urdf  # noqa: E402
from reference.abi_ctypes import Library, compile_shared  # noqa: E402
from reference.pin_reference import build_pin_model, urdf_q  # noqa: E402
from reference.reference_fk import random_physical_params, random_states, rel_err  # noqa: E402

HERE = Path(__file__).resolve().parent
TOL = 1e-12
STRICT = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]

# A pendulum on a massive stand bolted to the world: the stand's mass is not
# moved by any joint and must be left out of the CoM, as in Pinocchio.
STAND = """
name = "stand"
geometry = ["h", "l"]
gravity = [0, 0, -1]

[[end_effector]]
name = "tip"
frame = "tip"

[[frame]]
key = "s"
parent = "0"
type = "fixed"
rotation = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
origin = ["0.1", "0", "h"]

[[frame]]
key = "1"
parent = "s"
joint = "theta"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "0"]

[[frame]]
key = "2"
parent = "1"
joint = "slide"
type = "prismatic"
axis = [1, 0, 0]
rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
origin = ["l", "0", "0.2"]

[[frame]]
key = "tip"
parent = "2"
type = "fixed"
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["l", "0", "0"]
"""


def _build(model, values, out: Path) -> Library:
    generate(model, values, CodegenConfig(out_dir=out))
    return Library(model, compile_shared(out / f"{model.name}_kernels.c", out / "libk.so", STRICT))


def _moving_mass(model, params) -> float:
    """M from the parameter vector: the masses of every frame below a moving root."""
    p = dict(zip(model.param_names, params))
    keys = set()
    for r in moving_roots(model):
        keys |= {f.key for f in model.frames if r.key in [g.key for g in model.chain(f.key)]}
    return sum(p[f"m_{k}"] for k in keys)


def pin_centroidal(pm, data, q, dq):
    c = pin.centerOfMass(pm, data, q).copy()
    Jc = pin.jacobianCenterOfMass(pm, data, q).copy()
    Ag = pin.computeCentroidalMap(pm, data, q).copy()
    hg = pin.computeCentroidalMomentum(pm, data, q, dq)
    return c, Jc, Ag, np.concatenate([hg.linear, hg.angular])


def check_against_frame_table(lib, model, params, rng, n_states=8):
    """Errors of com, com_jacobian, centroidal_map, Ag dq, integrate, neutral vs
    build_pin_model(model, params), plus the identities; returns the worst errors."""
    pm, _ = build_pin_model(model, params)
    data = pm.createData()
    mass = _moving_mass(model, params)
    errs = {}
    qs, dqs = random_states(rng, n_states, model.ndof)
    for q, dq in zip(qs, dqs):
        c, Jc, Ag, hg = pin_centroidal(pm, data, q, dq)
        ours = {"com": lib.com(q, params), "com_jacobian": lib.com_jacobian(q, params),
                "centroidal_map": lib.centroidal_map(q, params)}
        ours["Ag dq"] = ours["centroidal_map"] @ dq
        ref = {"com": c, "com_jacobian": Jc, "centroidal_map": Ag, "Ag dq": hg}
        for k in ref:
            errs[k] = max(errs.get(k, 0.0), rel_err(ours[k], ref[k]))
        # identities (no reference): Jc = Ag_lin / M, Jc dq = d com / dt
        errs["Jc = Ag_lin/M"] = max(errs.get("Jc = Ag_lin/M", 0.0),
                                    rel_err(ours["com_jacobian"], ours["centroidal_map"][:3] / mass))
        h = 1e-6
        fd = (lib.com(q + h * dq, params) - lib.com(q - h * dq, params)) / (2 * h)
        assert rel_err(fd, ours["com_jacobian"] @ dq) <= 1e-7
        dt = float(rng.uniform(-0.1, 0.1))
        qn = lib.integrate(q, dq, dt)
        errs["integrate"] = max(errs.get("integrate", 0.0), rel_err(qn, pin.integrate(pm, q, dq * dt)))
        np.testing.assert_allclose(qn, q + dq * dt, rtol=0, atol=4e-16 * (1 + np.abs(q).max()))  # fused or not
    neutral = lib.neutral()
    assert np.array_equal(neutral, pin.neutral(pm))
    return errs


@pytest.mark.parametrize("name", ["mini", "tree", "twins"])
def test_test_models_match_pinocchio(name, tmp_path):
    model = load_model(HERE / "models" / f"{name}.toml")
    rng = np.random.default_rng(sum(map(ord, name)))
    params = random_physical_params(model, rng)
    lib = _build(model, params, tmp_path)
    for params in [params, random_physical_params(model, rng)]:
        errs = check_against_frame_table(lib, model, params, rng)
        assert max(errs.values()) <= TOL, errs


def test_world_fixed_mass_is_left_out(tmp_path):
    path = tmp_path / "stand.toml"
    path.write_text(STAND)
    model = load_model(path)
    rng = np.random.default_rng(5)
    params = random_physical_params(model, rng)
    assert dict(zip(model.param_names, params))["m_s"] > 0.4  # the stand is heavy
    lib = _build(model, params, tmp_path / "out")
    errs = check_against_frame_table(lib, model, params, rng)
    assert max(errs.values()) <= TOL, errs
    # the stand's mass changes nothing
    heavier = params.copy()
    heavier[model.param_names.index("m_s")] *= 3.0
    q = rng.uniform(-3, 3, model.ndof)
    assert np.array_equal(lib.com(q, params), lib.com(q, heavier))


def test_krang_matches_pinocchio():
    kk = pytest.importorskip("krang_kernels")
    model = load_model(HERE.parent / "models" / "krang.toml")
    rng = np.random.default_rng(19)
    sets = [np.asarray(kk.default_params(), dtype=float)] + [random_physical_params(model, rng) for _ in range(2)]
    lib = _KrangModule(kk)
    for params in sets:
        errs = check_against_frame_table(lib, model, params, rng, n_states=20)
        assert max(errs.values()) <= TOL, errs


class _KrangModule:
    """The Python module behind the Library interface of check_against_frame_table."""

    def __init__(self, kk):
        self.kk = kk

    def com(self, q, p):
        return self.kk.com(q, p)

    def com_jacobian(self, q, p):
        return self.kk.com_jacobian(q, p)

    def centroidal_map(self, q, p):
        return self.kk.centroidal_map(q, p)

    def integrate(self, q, v, dt):
        return self.kk.integrate(q, v, dt)

    def neutral(self):
        return self.kk.neutral()


def test_krang_python_batches_and_checks():
    kk = pytest.importorskip("krang_kernels")
    rng = np.random.default_rng(3)
    q = rng.uniform(-3, 3, (5, kk.N_DOF))
    v = rng.uniform(-3, 3, (5, kk.N_DOF))
    for name in ("com", "com_jacobian", "centroidal_map"):
        f = getattr(kk, name)
        batch = f(q)
        assert batch.shape[0] == 5
        for i in range(5):
            assert np.array_equal(batch[i], f(q[i]))
    out = np.empty((5, kk.N_DOF))
    assert kk.integrate(q, v, 0.01, out=out) is out
    np.testing.assert_allclose(out, q + v * 0.01, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(kk.neutral(), np.zeros(kk.N_DOF))
    with pytest.raises(TypeError):
        kk.integrate(q[0], v[0], "0.1")
    with pytest.raises(ValueError):
        kk.integrate(q[0], v[0], float("nan"))
    with pytest.raises(ValueError):
        kk.integrate(q, v[:4], 0.1)


URDFS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    # continuous joints: one angle here, (cos, sin) in Pinocchio
    "kinova": "kinova_description/robots/kinova.urdf",
}


def check_against_urdf(lib, robot, path, rng, n_states=5):
    """Our kernels at the URDF's values vs pin.buildModelFromUrdf(path) (front end included)."""
    model, params = robot.model, np.asarray(robot.values, dtype=float)
    pa = pin.buildModelFromUrdf(str(path))
    assert list(pa.names[1:]) == list(model.joint_names)
    da = pa.createData()
    errs = {}
    for q, dq in zip(*random_states(rng, n_states, model.ndof)):
        c, Jc, Ag, hg = pin_centroidal(pa, da, urdf_q(pa, model, q), dq)
        for k, ours, ref in (("com", lib.com(q, params), c), ("com_jacobian", lib.com_jacobian(q, params), Jc),
                             ("centroidal_map", lib.centroidal_map(q, params), Ag)):
            errs[k] = max(errs.get(k, 0.0), rel_err(ours, ref))
        # integrate: Pinocchio's exponential on (cos, sin) = our angle plus v dt
        dt = 0.05
        ref = pin.integrate(pa, urdf_q(pa, model, q), dq * dt)
        errs["integrate"] = max(errs.get("integrate", 0.0), rel_err(urdf_q(pa, model, lib.integrate(q, dq, dt)), ref))
    errs["neutral"] = rel_err(urdf_q(pa, model, lib.neutral()), pin.neutral(pa))
    return errs


@pytest.mark.robots
@pytest.mark.parametrize("robot_name", sorted(URDFS))
def test_urdf_robots_match_pinocchio(robot_name, tmp_path):
    path = robots_dir() / URDFS[robot_name]
    robot = load_urdf(path, name=robot_name, snap=False, mimic=MIMIC)  # Pinocchio's mimic=False
    lib = _build(robot.model, robot.values, tmp_path)
    rng = np.random.default_rng(7)
    errs = check_against_urdf(lib, robot, path, rng)
    print(robot_name, "URDF", {k: f"{e:.1e}" for k, e in errs.items()})
    assert max(errs.values()) <= TOL, errs
    errs = check_against_frame_table(lib, robot.model, random_physical_params(robot.model, rng), rng, n_states=4)
    print(robot_name, "random params", {k: f"{e:.1e}" for k, e in errs.items()})
    assert max(errs.values()) <= TOL, errs


@pytest.mark.robots
def test_talos_matches_pinocchio(tmp_path):
    """The largest fixed-base humanoid of example-robot-data (32 DOF), sampled: a few states."""
    path = robots_dir() / "talos_data/robots/talos_reduced.urdf"
    robot = load_urdf(path, name="talos", snap=False, mimic=MIMIC)
    lib = _build(robot.model, robot.values, tmp_path)
    rng = np.random.default_rng(11)
    errs = check_against_urdf(lib, robot, path, rng, n_states=3)
    print("talos URDF", {k: f"{e:.1e}" for k, e in errs.items()})
    assert max(errs.values()) <= TOL, errs
    errs = check_against_frame_table(lib, robot.model, random_physical_params(robot.model, rng), rng, n_states=3)
    print("talos random params", {k: f"{e:.1e}" for k, e in errs.items()})
    assert max(errs.values()) <= TOL, errs

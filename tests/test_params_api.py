"""Parameters as users have them (krang_kernels; shared by every generated
module): load_params (the TOML parameter format), link_params (the 10
standard parameters of a link from mass, centre of mass and inertia about
it, checked against Pinocchio's Inertia.toDynamicParameters), check_params
naming the link, and the README's point that changing m alone moves the
centre of mass.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tomli_w

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")
pin = pytest.importorskip("pinocchio")

ROOT = Path(__file__).resolve().parent.parent


def _write(path, values):
    path.write_text(tomli_w.dumps({"values": values}), encoding="utf-8")
    return path


def test_load_params_reads_the_shipped_file():
    p = kk.load_params(ROOT / "models" / "krang_params.toml")
    assert p.dtype == np.float64 and p.tobytes() == kk.default_params().tobytes()


def test_load_params_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    p = kk.default_params()
    for name in ("Fv", "Fc", "Ia"):  # actuator values: non-negative, any size
        for i, n in enumerate(kk.PARAM_NAMES):
            if n.startswith(name + "_"):
                p[i] = rng.uniform(0, 2)
    p = kk.params_from_dict(kk.link_params("10l", 2.5, [0.01, -0.02, 0.05], np.diag([0.01, 0.02, 0.015])), p)
    got = kk.load_params(_write(tmp_path / "p.toml", dict(zip(kk.PARAM_NAMES, p.tolist()))))
    assert got.tobytes() == p.tobytes()
    # Ia, Fv, Fc may be left out (0)
    values = {n: v for n, v in zip(kk.PARAM_NAMES, p.tolist()) if n.split("_")[0] not in ("Ia", "Fv", "Fc")}
    got = kk.load_params(_write(tmp_path / "q.toml", values))
    assert all(got[i] == 0 for i, n in enumerate(kk.PARAM_NAMES) if n.split("_")[0] in ("Ia", "Fv", "Fc"))


@pytest.mark.parametrize("change, match", [
    ({"m_99": 1.0}, "unknown"),
    ({"m_10l": "3"}, "m_10l.*not a number"),
    ({"m_10l": True}, "m_10l.*not a number"),
    ({"m_10l": -1.0}, "10l"),
    ({"XX_5r": -1.0}, "5r"),
])
def test_load_params_rejects(tmp_path, change, match):
    values = dict(zip(kk.PARAM_NAMES, kk.default_params().tolist()))
    values.update(change)
    with pytest.raises(ValueError, match=match):
        kk.load_params(_write(tmp_path / "p.toml", values))


def test_load_params_rejects_missing_and_malformed(tmp_path):
    values = dict(zip(kk.PARAM_NAMES, kk.default_params().tolist()))
    del values["m_4l"]
    with pytest.raises(ValueError, match="m_4l"):
        kk.load_params(_write(tmp_path / "p.toml", values))
    (tmp_path / "bad.toml").write_text("[values\nm_1 = 1", encoding="utf-8")
    with pytest.raises(ValueError):
        kk.load_params(tmp_path / "bad.toml")
    (tmp_path / "none.toml").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[values\]"):
        kk.load_params(tmp_path / "none.toml")


def _random_body(rng):
    m = rng.uniform(0.1, 5)
    c = rng.uniform(-0.3, 0.3, 3)
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    d = rng.uniform(0.01, 0.1, 3)
    d[2] = rng.uniform(abs(d[0] - d[1]) + 1e-3, d[0] + d[1])  # triangle inequality
    return m, c, R @ np.diag(d) @ R.T


def test_link_params_vs_pinocchio_inertia():
    rng = np.random.default_rng(2)
    names = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")
    for _ in range(20):
        m, c, Ic = _random_body(rng)
        got = kk.link_params("7r", m, c, Ic)
        assert list(got) == [f"{n}_7r" for n in names]
        # Pinocchio: [m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the frame origin
        ref = pin.Inertia(m, c, Ic).toDynamicParameters()
        want = dict(zip(names, [ref[0], ref[1], ref[2], ref[3], ref[4], ref[5], ref[7], ref[6], ref[8], ref[9]]))
        for n in names:
            assert got[f"{n}_7r"] == pytest.approx(want[n], rel=1e-13, abs=1e-15), n
        kk.check_params(kk.params_from_dict(got))


def test_link_params_errors():
    with pytest.raises(KeyError, match="nolink"):
        kk.link_params("nolink", 1.0, [0, 0, 0], np.eye(3))
    with pytest.raises(ValueError, match="10l"):
        kk.link_params("10l", -1.0, [0, 0, 0], np.eye(3))
    with pytest.raises(ValueError, match="10l.*triangle"):
        kk.link_params("10l", 1.0, [0, 0, 0], np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(ValueError, match="com"):
        kk.link_params("10l", 1.0, [0, 0], np.eye(3))
    with pytest.raises(ValueError, match="symmetric"):
        kk.link_params("10l", 1.0, [0, 0, 0], [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])


def test_check_params_names_the_link():
    kk.check_params(kk.default_params())
    i = kk.PARAM_NAMES.index("YY_6l")
    p = kk.default_params()
    p[i] = -abs(p[i]) - 1.0
    with pytest.raises(ValueError, match="6l"):
        kk.check_params(p)


def test_changing_the_mass_alone_moves_the_centre_of_mass():
    """The README's example: m_10l alone keeps MS_10l, so the centre of mass
    MS/m moves; link_params sets all ten and keeps it."""
    p0 = kk.default_params()
    get = lambda p, n: p[kk.PARAM_NAMES.index(f"{n}_10l")]  # noqa: E731
    c0 = np.array([get(p0, n) for n in ("MX", "MY", "MZ")]) / get(p0, "m")
    p_bad = kk.params_from_dict({"m_10l": 3.0})
    c_bad = np.array([get(p_bad, n) for n in ("MX", "MY", "MZ")]) / 3.0
    assert np.linalg.norm(c0) > 0 and not np.allclose(c_bad, c0)
    m0 = get(p0, "m")
    J0 = np.array([[get(p0, "XX"), get(p0, "XY"), get(p0, "XZ")], [get(p0, "XY"), get(p0, "YY"), get(p0, "YZ")],
                   [get(p0, "XZ"), get(p0, "YZ"), get(p0, "ZZ")]])
    Ic0 = J0 - m0 * (c0 @ c0 * np.eye(3) - np.outer(c0, c0))
    p_ok = kk.params_from_dict(kk.link_params("10l", 3.0, c0, Ic0 * 3.0 / m0))
    c_ok = np.array([get(p_ok, n) for n in ("MX", "MY", "MZ")]) / get(p_ok, "m")
    np.testing.assert_allclose(c_ok, c0, rtol=1e-12)
    # and the gravity torques see the heavier gripper at the same place: Pinocchio agrees
    from codegen.read.model import load_model
    from reference.pin_reference import build_pin_model
    model = load_model(ROOT / "models" / "krang.toml")
    pm, _ = build_pin_model(model, p_ok)
    q = np.random.default_rng(4).uniform(-1, 1, kk.N_DOF)
    ref = pin.computeGeneralizedGravity(pm, pm.createData(), q)
    np.testing.assert_allclose(kk.compute_Q(q, params=p_ok), ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rotor", [0.0, 0.05])
def test_check_params_refuses_a_joint_that_moves_no_mass(rotor):
    """A leaf (the left gripper, frame 10l) emptied of mass and inertia, its rotor inertia
    0: the last left joint moves nothing, A is singular, forward dynamics would be NaN.
    A rotor inertia on that joint makes A regular again: accepted."""
    p = kk.default_params()
    names = list(kk.PARAM_NAMES)
    for n in ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ"):
        p[names.index(f"{n}_10l")] = 0.0
    p[names.index("Ia_10l")] = rotor
    if rotor:
        kk.check_params(p)
        assert np.isfinite(kk.forward_dynamics(np.zeros(kk.N_DOF), np.zeros(kk.N_DOF), np.zeros(kk.N_DOF), p)).all()
    else:
        assert np.linalg.matrix_rank(kk.compute_A(np.zeros(kk.N_DOF), p)) < kk.N_DOF  # the reference: A singular
        with pytest.raises(ValueError, match=r"joint 'q_7l' moves no mass or inertia"):
            kk.check_params(p)

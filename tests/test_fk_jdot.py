"""End-effector poses and Jdot*dq (codegen/derive/fk.py), compiled and called via ctypes.

* fk_<ee>(q) and the dispatcher fk(q, ee) against Pinocchio's frame
  placement data.oMf of the end-effector frame (reference/pin_reference.py
  places it with the end effector's constant placement);
* jdot_qdot_<ee>(q, dq) and the dispatcher against Pinocchio's classical
  acceleration of that frame with ddq = 0 in LOCAL_WORLD_ALIGNED axes
  (forwardKinematics(q, dq, 0), getFrameClassicalAcceleration), to
  max|ours - ref| <= 1e-12 (1 + max|ref|);
* jdot_qdot against d/dt (J(q) dq) by central differences of our world
  Jacobian along dq, Richardson-extrapolated (error O(h^4) ~ 1e-10 at
  h = 1e-3, plus rounding ~ 1e-13 / h), to 1e-8 (1 + max|ref|);
* an unknown ee fills the output with NaN.
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.ctrl_cases import cases, check, library, param_sets, states
from reference.reference_fk import rel_err

pytestmark = pytest.mark.builds

TOL = 1e-12
pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402


@pytest.mark.parametrize("name", cases())
def test_fk_and_jdot_qdot_vs_pinocchio(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    qs, dqs, _ = states(model.ndof)
    worst = {}
    for label, p in param_sets(name):
        pm, frame_ids = build_pin_model(model, p)
        data = pm.createData()
        for q, dq in zip(qs, dqs):
            pin.forwardKinematics(pm, data, q, dq, np.zeros(model.ndof))
            pin.updateFramePlacements(pm, data)
            for i, ee in enumerate(model.end_effectors):
                fid = frame_ids[ee.name]
                T_ref = data.oMf[fid].homogeneous
                a = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
                a_ref = np.concatenate([a.linear, a.angular])
                check(worst, "fk", getattr(lib, f"fk_{ee.name}")(q, p), T_ref, TOL, label)
                check(worst, "fk dispatcher", lib.fk(q, p, i), T_ref, TOL, label)
                check(worst, "jdot_qdot", getattr(lib, f"jdot_qdot_{ee.name}")(q, dq, p), a_ref, TOL, label)
                check(worst, "jdot_qdot dispatcher", lib.jdot_qdot(q, dq, p, i), a_ref, TOL, label)
    print(f"\n{name}: max rel err " + ", ".join(f"{k}: {v:.1e}" for k, v in worst.items()))


@pytest.mark.parametrize("name", cases("mini", "tree", "krang"))
def test_jdot_qdot_vs_finite_differences(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    qs, dqs, _ = states(model.ndof, n=5, seed=4)
    (_, p), = param_sets(name, n_random=1, seed=5)[-1:]
    worst = 0.0
    for q, dq in zip(qs, dqs):
        for i, ee in enumerate(model.end_effectors):
            def Jdq(h):
                J = lambda x: lib.jacobian(x, p, i, 0)  # noqa: E731  (world axes)
                return (J(q + h * dq) @ dq - J(q - h * dq) @ dq) / (2 * h)
            h = 1e-3
            ref = (4 * Jdq(h / 2) - Jdq(h)) / 3  # Richardson: O(h^4)
            got = lib.jdot_qdot(q, dq, p, i)
            e = rel_err(got, ref)
            worst = max(worst, e)
            assert e <= 1e-8, f"{ee.name}: rel err {e:.2e}\nours {got}\nfd   {ref}"
    print(f"\n{name}: jdot_qdot vs finite differences of J dq: max rel err {worst:.1e}")


def test_unknown_end_effector_fills_nan(tmp_path_factory):
    lib = library("tree", tmp_path_factory)
    n = lib.model.ndof
    (_, p), = param_sets("tree", n_random=1)
    q, dq = np.full(n, 0.3), np.full(n, -0.2)
    for ee in (-1, len(lib.model.end_effectors), 1 << 20):
        assert np.isnan(lib.fk(q, p, ee)).all()
        assert np.isnan(lib.jdot_qdot(q, dq, p, ee)).all()
    # and a known one is completely written (outputs start NaN-filled)
    assert np.isfinite(lib.fk(q, p, 1)).all() and np.isfinite(lib.jdot_qdot(q, dq, p, 1)).all()

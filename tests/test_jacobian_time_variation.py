"""dJ/dt of the end effectors (frame_jacobian_time_variation; codegen/derive/jacobians.py),
compiled and called through ctypes:

* against Pinocchio's getFrameJacobianTimeVariation (LOCAL_WORLD_ALIGNED and LOCAL) on the
  same model, <= 1e-10 relative;
* against central differences of our own jacobian along the motion q(t) = q (+) t dq;
* dJ_world dq = jdot_qdot (the classical acceleration at ddq = 0).

Models: fixed-base trees (one, two arms on the world) and a free-flyer.
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.ctrl_cases import library, param_sets
from reference.reference_fk import rel_err, random_physical_params

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402
from tests.test_external_forces import tiny  # noqa: E402,F401 (the free-flyer's build, a fixture)

TOL = 1e-10
FRAMES = {0: "LOCAL_WORLD_ALIGNED", 1: "LOCAL"}


def _state(model, rng):
    q = rng.uniform(-np.pi, np.pi, size=model.nq)
    if model.floating_base:
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
    return q, rng.uniform(-3, 3, model.ndof)


def _check(lib, model, params, seed=4, n=4):
    rng = np.random.default_rng(seed)
    assert model.end_effectors
    for label, p in params:
        pm, ee = build_pin_model(model, p)
        data = pm.createData()
        for _ in range(n):
            q, v = _state(model, rng)
            pin.computeJointJacobiansTimeVariation(pm, data, q, v)
            pin.updateFramePlacements(pm, data)
            for i, e in enumerate(model.end_effectors):
                for frame, ref_frame in FRAMES.items():
                    got = lib.frame_jacobian_time_variation(q, v, p, i, frame)
                    ref = pin.getFrameJacobianTimeVariation(pm, data, ee[e.name], getattr(pin, ref_frame))
                    assert rel_err(got, ref) <= TOL, f"{label} {e.name} {ref_frame}"
                    # along the motion, by differences of our own Jacobian
                    h = 1e-6
                    num = (lib.jacobian(lib.integrate(q, v, h), p, i, frame)
                           - lib.jacobian(lib.integrate(q, v, -h), p, i, frame)) / (2 * h)
                    assert rel_err(got, num) <= 1e-7, f"{label} {e.name} {ref_frame}: differences"
                world = lib.frame_jacobian_time_variation(q, v, p, i, 0)
                assert rel_err(world @ v, lib.jdot_qdot(q, v, p, i)) <= 1e-12
            # an unknown end effector or frame: NaN
            assert np.isnan(lib.frame_jacobian_time_variation(q, v, p, len(model.end_effectors), 0)).all()
            assert np.isnan(lib.frame_jacobian_time_variation(q, v, p, 0, 2)).all()


@pytest.mark.parametrize("name", ["mini", "tree", "forest"])
def test_fixed_base(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    _check(lib, lib.model, param_sets(name, n_random=1))


def test_free_flyer(tiny):  # noqa: F811
    robot, lib = tiny
    rng = np.random.default_rng(8)
    _check(lib, robot.model, [("default", np.array(robot.values)),
                              ("random", random_physical_params(robot.model, rng))])

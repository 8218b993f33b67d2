"""Inverse dynamics and bias (codegen/derive/rnea.py), compiled and called via ctypes.

* inverse_dynamics(q, dq, ddq) against our own A ddq + C dq + Q + friction
  (compute_A, compute_C, compute_Q, friction: a different derivation, the
  composite-inertia and Christoffel recursions) and against Pinocchio's rnea
  (armature included in Pinocchio 3+; Pinocchio has no friction model, so
  tau - friction is compared);
* bias(q, dq) against Pinocchio's nonLinearEffects and inverse_dynamics at
  ddq = 0 minus friction;
over random states and random physically valid parameter sets, to
max|ours - ref| <= 1e-12 (1 + max|ref|).
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.ctrl_cases import cases, check, library, param_sets, states
from reference.reference_fk import NumericModel

pytestmark = pytest.mark.builds

TOL = 1e-12
pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402


def _check(errs, key, got, ref, label):
    check(errs, key, got, ref, TOL, label)


@pytest.mark.parametrize("name", cases())
def test_inverse_dynamics_and_bias(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    qs, dqs, ddqs = states(model.ndof)
    errs = {}
    for label, p in param_sets(name):
        pm, _ = build_pin_model(model, p)
        data = pm.createData()
        num = NumericModel(model, p)
        for q, dq, ddq in zip(qs, dqs, ddqs):
            tau = lib.inverse_dynamics(q, dq, ddq, p)
            fr = num.friction(dq)
            assembled = lib.compute_A(q, p) @ ddq + lib.compute_C(q, dq, p) @ dq + lib.compute_Q(q, p) + fr
            _check(errs, "tau vs A ddq + C dq + Q + friction", tau, assembled, label)
            _check(errs, "tau - friction vs pin.rnea", tau - fr, pin.rnea(pm, data, q, dq, ddq), label)
            h = lib.bias(q, dq, p)
            _check(errs, "h vs pin.nonLinearEffects", h, pin.nonLinearEffects(pm, data, q, dq), label)
            _check(errs, "h vs tau(ddq = 0) - friction", h,
                   lib.inverse_dynamics(q, dq, np.zeros(model.ndof), p) - fr, label)
    print(f"\n{name}: max rel err " + ", ".join(f"{k}: {v:.1e}" for k, v in errs.items()))


def test_rotor_inertia_enters_as_ia_ddq(tmp_path_factory):
    """Only the diagonal rotor term depends on Ia: raising Ia_j by d adds d ddq_j to tau_j."""
    lib = library("mini", tmp_path_factory)
    model = lib.model
    (label, p), = param_sets("mini", n_random=0)
    qs, dqs, ddqs = states(model.ndof, n=3)
    for f in model.joints:
        k = model.param_names.index(f"Ia_{f.key}")
        p2 = p.copy()
        p2[k] += 0.75
        for q, dq, ddq in zip(qs, dqs, ddqs):
            d = lib.inverse_dynamics(q, dq, ddq, p2) - lib.inverse_dynamics(q, dq, ddq, p)
            expect = np.zeros(model.ndof)
            expect[f.index] = 0.75 * ddq[f.index]
            assert np.allclose(d, expect, rtol=0, atol=1e-12 * (1 + abs(ddq).max())), (f.key, d, expect)


def test_outputs_may_alias_inputs(tmp_path_factory):
    """The header's promise: every input is read before the first output is written."""
    import ctypes

    lib = library("tree", tmp_path_factory)
    n = lib.model.ndof
    (_, p), = param_sets("tree", n_random=1)
    qs, dqs, ddqs = states(n, n=2)
    q, dq, ddq = qs[0], dqs[0], ddqs[0]
    ref = lib.inverse_dynamics(q, dq, ddq, p)
    buf = ddq.copy()
    D = ctypes.POINTER(ctypes.c_double)
    fn = getattr(lib.lib, lib.abi.prefix + "inverse_dynamics")
    fn(q.ctypes.data_as(D), dq.ctypes.data_as(D), buf.ctypes.data_as(D), p.ctypes.data_as(D), buf.ctypes.data_as(D))
    assert np.array_equal(buf, ref)
    tau = ref.copy()
    fn = getattr(lib.lib, lib.abi.prefix + "forward_dynamics")
    fn(q.ctypes.data_as(D), dq.ctypes.data_as(D), tau.ctypes.data_as(D), p.ctypes.data_as(D), tau.ctypes.data_as(D))
    assert np.array_equal(tau, lib.forward_dynamics(q, dq, ref, p))

"""The joint-torque regressor (codegen/derive/regressor.py), compiled and called via ctypes.

* Y(q, dq, ddq) . pi = inverse_dynamics(q, dq, ddq, p) (a different
  derivation: the Newton-Euler recursion with the parameters as symbols)
  with pi = p[regressor_param_index(k)], over random states and random
  physically valid parameter sets, to 1e-12 relative;
* Y reads no inertial entry of p: changing them all leaves Y bit for bit;
* the column map is the ABI's: NPI columns, the inertial and actuator
  parameters in p order, -1 out of range;
* the inertial columns have the rank of Pinocchio's
  computeJointTorqueRegressor stacked over the same random states.
"""
from __future__ import annotations

import numpy as np
import pytest

from codegen.emit.abi import regressor_columns
from reference.ctrl_cases import MODELS, cases, check, library, param_sets, states

pytestmark = pytest.mark.builds

TOL = 1e-12


def _index(lib, k):
    return getattr(lib.lib, lib.abi.prefix + "regressor_param_index")(k)


def _pi(lib, p):
    npi = lib.abi.function("regressor").outputs[0].shape[1]
    return p[[_index(lib, k) for k in range(npi)]]


@pytest.mark.parametrize("name", cases())
def test_regressor_times_params_is_inverse_dynamics(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    qs, dqs, ddqs = states(lib.model.ndof)
    errs = {}
    for label, p in param_sets(name):
        for q, dq, ddq in zip(qs, dqs, ddqs):
            Y = lib.regressor(q, dq, ddq, p)
            check(errs, "Y pi vs inverse_dynamics", Y @ _pi(lib, p), lib.inverse_dynamics(q, dq, ddq, p),
                  TOL, label)
    print(f"\n{name}: max rel err " + ", ".join(f"{k}: {v:.1e}" for k, v in errs.items()))


@pytest.mark.parametrize("name", cases())
def test_regressor_reads_no_inertial_parameter(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    (_, p1), (_, p2) = param_sets(name, n_random=2)[-2:]
    cols = list(regressor_columns(model))
    p2 = p2.copy()
    p2[: cols[0]] = p1[: cols[0]]  # same geometry and g, every inertial/actuator entry different
    assert np.all(p1[cols] != p2[cols])
    for q, dq, ddq in zip(*states(model.ndof, n=4)):
        np.testing.assert_array_equal(lib.regressor(q, dq, ddq, p1), lib.regressor(q, dq, ddq, p2))


def test_regressor_columns_follow_p():
    for name, (path, _) in MODELS.items():
        from codegen.read.model import load_model

        model = load_model(path)
        cols = regressor_columns(model)
        names = [model.param_names[i] for i in cols]
        assert names == [n for f in model.frames for n in f.param_names()]
        assert not set(names) & set(model.geometry) and "g" not in names


def test_param_index_out_of_range(tmp_path_factory):
    lib = library("mini", tmp_path_factory)
    npi = lib.abi.function("regressor").outputs[0].shape[1]
    assert _index(lib, -1) == -1 and _index(lib, npi) == -1
    assert [_index(lib, k) for k in range(npi)] == list(regressor_columns(lib.model))
    assert _index(lib, npi - 1) == len(lib.model.param_names) - 1


def _stacked_rank(Ys):
    Y = np.vstack(Ys)
    s = np.linalg.svd(Y, compute_uv=False)
    return int(np.sum(s > s[0] * max(Y.shape) * np.finfo(float).eps * 10))


@pytest.mark.parametrize("name", cases("tree", "planar2r", "pr", "krang"))
def test_inertial_rank_matches_pinocchio(name, tmp_path_factory):
    pin = pytest.importorskip("pinocchio")
    from reference.pin_reference import build_pin_model

    lib = library(name, tmp_path_factory)
    model = lib.model
    (_, p), = param_sets(name, n_random=1)[-1:]
    pm, _ = build_pin_model(model, p)
    data = pm.createData()
    inertial = [k for k, i in enumerate(regressor_columns(model)) if model.param_names[i][:2] not in
                ("Ia", "Fv", "Fc")]
    ours, theirs = [], []
    for q, dq, ddq in zip(*states(model.ndof, n=40, seed=3)):
        ours.append(lib.regressor(q, dq, ddq, p)[:, inertial])
        theirs.append(np.array(pin.computeJointTorqueRegressor(pm, data, q, dq, ddq)))
    assert _stacked_rank(ours) == _stacked_rank(theirs)
    print(f"\n{name}: inertial rank {_stacked_rank(ours)} (Pinocchio {_stacked_rank(theirs)})")

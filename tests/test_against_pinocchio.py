"""krang_kernels vs an independent Pinocchio model built from the same frame table.

For the default parameter set, five random physically valid sets and one set
with the default geometry and random inertias, N_STATES random states each
(q uniform in [-pi, pi], dq uniform in [-3, 3], fixed seeds): A, C, Q and the
left/right Jacobians in the world and local frames must agree with
Pinocchio to  max|ours - ref| <= 1e-10 * (1 + max|ref|)  per matrix.

Run with -s to see the largest errors; benchmarks/errors_vs_pinocchio.py
writes them to benchmarks/results/errors_vs_pinocchio.json.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.module

pytest.importorskip("pinocchio")
kk = pytest.importorskip("krang_kernels")

from reference.pin_reference import build_pin_model, compare, krang_eval, krang_param_sets, pin_reference  # noqa: E402
from reference.reference_fk import KRANG_MODEL, KRANG_PARAMS, load_model, load_param_values, random_states, rel_err  # noqa: E402

N_STATES = 1000
N_RANDOM_SETS = 5
TOL = 1e-10

MODEL = load_model(KRANG_MODEL)
PARAM_SETS = krang_param_sets(MODEL, kk, n_random=N_RANDOM_SETS, seed=20240601)
ERRORS = {}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if ERRORS:
        keys = list(next(iter(ERRORS.values())))
        print(f"\nmax relative error vs Pinocchio ({N_STATES} states per set):")
        print("  " + "set".ljust(34) + "".join(k.rjust(15) for k in keys))
        for label, errs in ERRORS.items():
            print("  " + label.ljust(34) + "".join(f"{errs[k]:15.2e}" for k in keys))
        overall = {k: max(e[k] for e in ERRORS.values()) for k in keys}
        print("  " + "overall".ljust(34) + "".join(f"{overall[k]:15.2e}" for k in keys))
        print("  " + json.dumps({k: float(f"{v:.3e}") for k, v in overall.items()}))


def test_metadata_matches_model():
    assert kk.N_DOF == MODEL.ndof == 17
    assert tuple(kk.JOINT_NAMES) == MODEL.joint_names
    assert tuple(kk.PARAM_NAMES) == MODEL.param_names
    p = np.asarray(kk.default_params(), dtype=float)
    assert p.shape == (len(MODEL.param_names),)
    assert np.all(np.isfinite(p))


@pytest.mark.skipif(not KRANG_PARAMS.exists(), reason="models/krang_params.toml not written yet")
def test_default_params_are_the_params_file():
    expected = np.array(load_param_values(KRANG_PARAMS, MODEL))
    assert np.array_equal(np.asarray(kk.default_params(), dtype=float), expected)


def test_parameter_sets():
    assert [s[0] for s in PARAM_SETS][:1] == ["default"]
    assert len(PARAM_SETS) >= 1 + N_RANDOM_SETS


@pytest.mark.parametrize("label,params", PARAM_SETS, ids=[s[0] for s in PARAM_SETS])
def test_matches_pinocchio(label, params):
    seed = 1000 + [s[0] for s in PARAM_SETS].index(label)
    res = compare(krang_eval(kk), MODEL, [(label, params)], n_states=N_STATES, seed=seed,
                  tol=TOL, on_fail="collect")
    ERRORS[label] = res["overall"]
    if res["failures"]:
        shown = "\n".join(res["failures"][:25])
        pytest.fail(f"{len(res['failures'])} comparison(s) above {TOL:g} x (1 + max|ref|):\n{shown}")


def test_default_params_used_when_omitted():
    rng = np.random.default_rng(77)
    q, dq = (x[0] for x in random_states(rng, 1, MODEL.ndof))
    p = np.asarray(kk.default_params(), dtype=float)
    assert np.array_equal(kk.compute_A(q), kk.compute_A(q, p))
    assert np.array_equal(kk.compute_C(q, dq), kk.compute_C(q, dq, p))
    assert np.array_equal(kk.compute_Q(q), kk.compute_Q(q, p))
    for arm in ("left", "right"):
        assert np.array_equal(kk.jacobian(q, arm), kk.jacobian(q, arm, "world", p))


def test_compute_all_and_out_agree_with_single_calls():
    rng = np.random.default_rng(78)
    label, params = PARAM_SETS[1]
    pm, _ = build_pin_model(MODEL, params)
    data = pm.createData()
    for q, dq in zip(*random_states(rng, 5, MODEL.ndof)):
        allr = kk.compute_all(q, dq, params)
        assert set(allr) >= {"A", "C", "Q", "J_left", "J_right"}
        ref = pin_reference(pm, data, q, dq)
        for k in ("A", "C", "Q"):
            assert rel_err(allr[k], ref[k]) <= TOL, k
        assert rel_err(allr["J_left"], ref["J_left_world"]) <= TOL
        assert rel_err(allr["J_right"], ref["J_right_world"]) <= TOL
        n = MODEL.ndof
        cases = [
            (kk.compute_A, (q,), (n, n)),
            (kk.compute_C, (q, dq), (n, n)),
            (kk.compute_Q, (q,), (n,)),
            (lambda *a, **k: kk.jacobian(a[0], "left", "local", *a[1:], **k), (q,), (6, n)),
            (lambda *a, **k: kk.jacobian(a[0], "right", "world", *a[1:], **k), (q,), (6, n)),
            (kk.friction, (dq,), (n,)),
        ]
        for fn, args, shape in cases:
            plain = fn(*args, params)
            buf = np.full(shape, np.nan)
            res = fn(*args, params, out=buf)
            assert np.array_equal(buf, plain)
            assert np.shares_memory(res, buf)
            assert np.array_equal(res, plain)

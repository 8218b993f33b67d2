"""The controller functions of krang_kernels' Python API against Pinocchio
(reference/pin_reference.py builds the same robot): inverse_dynamics vs rnea +
friction, bias vs nonLinearEffects, forward_dynamics vs aba, fk vs the frame
placement, jdot_qdot vs the classical acceleration at ddq = 0; over the
default and random physical parameter sets, one state at a time and as a
batch. Friction's reference is written here from the report's model
(Fv dq + Fc sign(dq), Krang report eq. 17).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")
pin = pytest.importorskip("pinocchio")

from codegen.read.model import load_model  # noqa: E402
from reference.pin_reference import build_pin_model, krang_param_sets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TOL = 1e-10
MODEL = load_model(ROOT / "models" / "krang.toml")


def _friction(p, dq):
    idx = {n: i for i, n in enumerate(kk.PARAM_NAMES)}
    fv = np.array([p[idx[f"Fv_{f.key}"]] for f in MODEL.joints])
    fc = np.array([p[idx[f"Fc_{f.key}"]] for f in MODEL.joints])
    return fv * dq + fc * np.sign(dq)


def _rel(a, b):
    return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))


def _sets():
    sets = krang_param_sets(MODEL, kk, n_random=3, seed=5)
    rng = np.random.default_rng(9)
    out = []
    for label, p in sets:  # friction on, so that it is tested
        p = p.copy()
        for i, n in enumerate(kk.PARAM_NAMES):
            if n.startswith(("Fv_", "Fc_")):
                p[i] = rng.uniform(0, 1.5)
        out.append((label, p))
    return out


@pytest.mark.parametrize("label, p", _sets(), ids=lambda x: x if isinstance(x, str) else "")
def test_controller_functions_vs_pinocchio(label, p):
    pm, frame_ids = build_pin_model(MODEL, p)
    data = pm.createData()
    rng = np.random.default_rng(11)
    n = kk.N_DOF
    qs, dqs = rng.uniform(-np.pi, np.pi, (6, n)), rng.uniform(-2, 2, (6, n))
    ddqs, taus = rng.uniform(-3, 3, (6, n)), rng.uniform(-20, 20, (6, n))
    refs = {k: [] for k in ("tau", "h", "ddq", "T", "a")}
    for q, dq, ddq, tau in zip(qs, dqs, ddqs, taus):
        fr = _friction(p, dq)
        tau_ref = pin.rnea(pm, data, q, dq, ddq) + fr
        h_ref = pin.nonLinearEffects(pm, data, q, dq)
        ddq_ref = pin.aba(pm, data, q, dq, tau - fr)
        assert _rel(kk.inverse_dynamics(q, dq, ddq, params=p), tau_ref) <= TOL
        assert _rel(kk.bias(q, dq, params=p), h_ref) <= TOL
        assert _rel(kk.forward_dynamics(q, dq, tau, params=p), ddq_ref) <= TOL
        # forward dynamics inverts inverse dynamics
        assert _rel(kk.inverse_dynamics(q, dq, kk.forward_dynamics(q, dq, tau, params=p), params=p), tau) <= TOL
        pin.forwardKinematics(pm, data, q, dq, np.zeros(n))
        pin.updateFramePlacements(pm, data)
        Ts, As = [], []
        for i, ee in enumerate(kk.END_EFFECTORS):
            fid = frame_ids[ee]
            T_ref = data.oMf[fid].homogeneous
            acc = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
            a_ref = np.concatenate([acc.linear, acc.angular])
            T = kk.fk(q, ee, params=p)
            assert T.shape == (4, 4) and _rel(T, T_ref) <= TOL
            assert kk.fk(q, i, params=p).tobytes() == T.tobytes()
            a = kk.jdot_qdot(q, dq, ee, params=p)
            assert a.shape == (6,) and _rel(a, a_ref) <= TOL
            Ts.append(T_ref)
            As.append(a_ref)
        refs["tau"].append(tau_ref)
        refs["h"].append(h_ref)
        refs["ddq"].append(ddq_ref)
        refs["T"].append(Ts)
        refs["a"].append(As)
    # the same as batches
    assert _rel(kk.inverse_dynamics(qs, dqs, ddqs, p), np.array(refs["tau"])) <= TOL
    assert _rel(kk.bias(qs, dqs, p), np.array(refs["h"])) <= TOL
    assert _rel(kk.forward_dynamics(qs, dqs, taus, p), np.array(refs["ddq"])) <= TOL
    for i, ee in enumerate(kk.END_EFFECTORS):
        assert _rel(kk.fk(qs, ee, p), np.array(refs["T"])[:, i]) <= TOL
        assert _rel(kk.jdot_qdot(qs, dqs, ee, p), np.array(refs["a"])[:, i]) <= TOL


def test_compute_all_friction_vs_reference():
    p = _sets()[0][1]
    dq = np.random.default_rng(2).uniform(-1, 1, kk.N_DOF)
    dq[3] = 0.0  # sign(0) = 0
    res = kk.compute_all(np.zeros(kk.N_DOF), dq, p)
    assert _rel(res["friction"], _friction(p, dq)) <= 1e-14


def test_dispatchers_reject_unknown_end_effectors():
    q = np.zeros(kk.N_DOF)
    for bad in ("nose", len(kk.END_EFFECTORS), -1, 1.0, True, None):
        with pytest.raises(ValueError, match="ee"):
            kk.fk(q, bad)
        with pytest.raises(ValueError, match="ee"):
            kk.jdot_qdot(q, q, bad)
    # the per-end-effector kernels are reached through the dispatchers only
    assert not any(n.startswith(("fk_", "jdot_qdot_", "jacobian_")) for n in kk.__all__)
    assert not hasattr(kk, "fk_left")

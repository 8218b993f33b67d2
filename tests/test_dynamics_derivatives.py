"""Derivatives of inverse and forward dynamics (codegen/derive/dynamics_derivatives.py),
compiled and called via ctypes:

* against Pinocchio's computeRNEADerivatives and computeABADerivatives on the
  same model (armature included; Pinocchio has no friction: its torque is
  ours minus friction, so ours adds diag(Fv) to dtau_dv and -Minv diag(Fv)
  to dddq_dv; Coulomb's derivative is 0), <= 1e-10 relative
  (forward dynamics: 1e-12 cond(A), as it solves with A);
* against central finite differences of the project's own inverse_dynamics
  and forward_dynamics (consistent to the differences' error);
* the identities dtau/da = A (by differences) and Minv A = 1.

Models: the small test models and Krang (reference/ctrl_cases.py); UR5, and with
KK_DERIVATIVES_ALL=1 Panda and Talos (fixed base, 32 DOF; slow), from
example-robot-data URDFs, generated with --no-snap so that both sides read the
same rotations; free-flying: a tiny free-flyer, and with KK_FLOATING_ALL=1
Solo12 and a simple humanoid.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from reference.ctrl_cases import cases, library, param_sets, states
from reference.reference_fk import NumericModel, rel_err

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402

TOL = 1e-10  # against Pinocchio (relative, max |ours - ref| / (1 + max |ref|))
FD_H = 1e-6
FD_TOL = 1e-6  # central differences: O(h^2) truncation + O(eps / h) rounding, relative


def _pin_id(pm, data, q, v, a, fv):
    dq, dv, _ = pin.computeRNEADerivatives(pm, data, q, v, a)
    return dq.copy(), dv.copy() + np.diag(fv)


def _pin_fd(pm, data, q, v, tau_pin, fv):
    dq, dv, minv = (x.copy() for x in pin.computeABADerivatives(pm, data, q, v, tau_pin))
    minv = np.triu(minv) + np.triu(minv, 1).T  # Pinocchio may fill the upper triangle only
    return dq, dv - minv @ np.diag(fv), minv


def _fv(num, n):
    """Viscous friction coefficients in joint order."""
    fv = np.zeros(n)
    for nf in num.frames:
        if nf.type != "fixed":
            fv[nf.index] = nf.Fv
    return fv


@pytest.mark.parametrize("name", cases())
def test_against_pinocchio(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    n = model.ndof
    qs, vs, accs = states(n, n=6)
    rng = np.random.default_rng(5)
    worst = {}
    for label, p in param_sets(name, n_random=2):
        pm, _ = build_pin_model(model, p)
        data = pm.createData()
        num = NumericModel(model, p)
        fv = _fv(num, n)
        for q, v, a in zip(qs, vs, accs):
            A = lib.compute_A(q, p)
            fd_tol = max(TOL, 1e-12 * np.linalg.cond(A))  # a solve with A: its condition number
            dq, dv = lib.inverse_dynamics_derivatives(q, v, a, p)
            ref_q, ref_v = _pin_id(pm, data, q, v, a, fv)
            tau = rng.uniform(-20, 20, n)
            fq, fdv, minv = lib.forward_dynamics_derivatives(q, v, tau, p)
            pq, pv, pminv = _pin_fd(pm, data, q, v, tau - num.friction(v), fv)
            for key, got, ref, tol in [("dtau_dq", dq, ref_q, TOL), ("dtau_dv", dv, ref_v, TOL),
                                       ("dddq_dq", fq, pq, fd_tol), ("dddq_dv", fdv, pv, fd_tol),
                                       ("Minv", minv, pminv, fd_tol), ("Minv A", minv @ A, np.eye(n), fd_tol)]:
                e = rel_err(got, ref)
                worst[key] = max(worst.get(key, 0.0), e)
                assert e <= tol, f"[{label}] {key}: rel err {e:.2e}\n{got}\n{ref}"
    print(f"\n{name}: max rel err vs Pinocchio " + ", ".join(f"{k}: {v:.1e}" for k, v in worst.items()))


def _central(f, x, h=FD_H):
    cols = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))]
    return np.array(cols).T


@pytest.mark.parametrize("name", cases("tree", "mini", "pr", "forest", "krang"))
def test_against_finite_differences(name, tmp_path_factory):
    """The project's own ID and FD differentiated numerically (v away from 0: Coulomb's kink)."""
    lib = library(name, tmp_path_factory)
    n = lib.model.ndof
    rng = np.random.default_rng(11)
    _, p = param_sets(name, n_random=1)[-1]
    for _ in range(2):
        q, a, tau = rng.uniform(-np.pi, np.pi, n), rng.uniform(-5, 5, n), rng.uniform(-10, 10, n)
        v = rng.uniform(0.5, 2, n) * rng.choice([-1, 1], n)
        dq, dv = lib.inverse_dynamics_derivatives(q, v, a, p)
        assert rel_err(dq, _central(lambda x: lib.inverse_dynamics(x, v, a, p), q)) <= FD_TOL
        assert rel_err(dv, _central(lambda x: lib.inverse_dynamics(q, x, a, p), v)) <= FD_TOL
        A = _central(lambda x: lib.inverse_dynamics(q, v, x, p), a)
        assert rel_err(A, lib.compute_A(q, p)) <= FD_TOL  # d tau / da = A
        fq, fv, minv = lib.forward_dynamics_derivatives(q, v, tau, p)
        cond = np.linalg.cond(lib.compute_A(q, p))
        assert rel_err(fq, _central(lambda x: lib.forward_dynamics(x, v, tau, p), q)) <= FD_TOL * cond
        assert rel_err(fv, _central(lambda x: lib.forward_dynamics(q, x, tau, p), v)) <= FD_TOL * cond
        assert rel_err(minv, _central(lambda x: lib.forward_dynamics(q, v, x, p), tau)) <= FD_TOL * cond


def test_coulomb_friction_contributes_zero(tmp_path_factory):
    """At v = 0 and away from it, dtau_dv's friction part is diag(Fv) only."""
    lib = library("mini", tmp_path_factory)
    model = lib.model
    n = model.ndof
    _, p = param_sets("mini", n_random=1)[-1]
    num = NumericModel(model, p)
    fv = _fv(num, n)
    assert all(nf.Fc > 0 for nf in num.frames if nf.type != "fixed")  # Coulomb present: the test can fail
    pm, _ = build_pin_model(model, p)
    data = pm.createData()
    q = np.linspace(-1, 1, n)
    for v in (np.zeros(n), np.full(n, 0.3)):
        _, dv = lib.inverse_dynamics_derivatives(q, v, np.ones(n), p)
        assert rel_err(dv, _pin_id(pm, data, q, v, np.ones(n), fv)[1]) <= TOL


def test_python_module_tuples_batches_and_kernels_option(tmp_path):
    """The Python functions return tuples (out: a tuple of arrays), take batches
    row by row, and agree with the C; --kernels core leaves the derivative
    kernels out of the C and the module, core,<kernel> keeps that one."""
    import importlib.util
    import subprocess
    import sys
    from types import SimpleNamespace

    from codegen.cli import main
    from codegen.emit.abi import describe
    from codegen.build.module import build_python_module
    from codegen.read.model import load_model, load_param_values
    from reference.ctrl_cases import MODELS as M

    model_path, params_path = M["mini"]
    model = load_model(model_path)
    values = load_param_values(params_path, model)
    out = tmp_path / "full"
    assert main([str(model_path), str(params_path), "--out", str(out)]) == 0
    so = build_python_module(describe(model), model, values, out, SimpleNamespace(name=None))
    spec = importlib.util.spec_from_file_location("mini_kernels", so)
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    n = mk.N_DOF
    rng = np.random.default_rng(2)
    q, v, a = rng.normal(size=(3, 4, n))
    dq, dv = mk.inverse_dynamics_derivatives(q[0], v[0], a[0])
    assert dq.shape == dv.shape == (n, n)
    bq, bv = mk.inverse_dynamics_derivatives(q, v, a)  # a batch: row i = state i, bit for bit
    assert bq.shape == (4, n, n) and np.array_equal(bq[0], dq) and np.array_equal(bv[0], dv)
    bufs = (np.empty((n, n)), np.empty((n, n)), np.empty((n, n)))
    res = mk.forward_dynamics_derivatives(q[1], v[1], a[1], out=bufs)
    assert all(r is b for r, b in zip(res, bufs))
    assert np.allclose(res[2] @ mk.compute_A(q[1]), np.eye(n), atol=1e-12)
    with pytest.raises(TypeError):
        mk.inverse_dynamics_derivatives(q[0], v[0], a[0], out=np.empty((n, n)))
    with pytest.raises(ValueError, match="overlap"):
        mk.inverse_dynamics_derivatives(q[0], v[0], a[0], out=(bufs[0], bufs[0]))
    for kernels, present in (("core", []), ("core,forward_dynamics_derivatives", ["forward"])):
        d = tmp_path / kernels.replace(",", "_")
        r = subprocess.run([sys.executable, "-m", "codegen", str(model_path), str(params_path), "--out", str(d),
                            "--kernels", kernels], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        header = (d / "mini_kernels.h").read_text()
        for which in ("inverse", "forward"):
            assert (f"mini_{which}_dynamics_derivatives(" in header) == (which in present)


URDF_ROBOTS = {  # name -> (URDF under example-robot-data's robots/, end effectors)
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand"]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["tool0"]),
    "talos": ("talos_data/robots/talos_reduced.urdf", ["left_sole_link", "right_sole_link"]),
}


# By default UR5 only (the quickest real arm: ~45 s of generation, compile and checks on the
# shared 2-core machine); Panda (~80 s) and Talos (32 DOF: minutes) with KK_DERIVATIVES_ALL=1,
# the CI budget (docs: the whole suite well under 90 min on 2 cores).
def _check_state(robot_name, lib, ref, P, qs, v, a, tau, params, worst):
    """One state: our two derivative kernels against Pinocchio's computeRNEADerivatives /
    computeABADerivatives. ref: the Pinocchio side (pm, data, fv, friction()); P: our velocity
    index -> Pinocchio's; qs: (our q, Pinocchio's q). Largest errors accumulate in `worst`."""
    (q, qp), pm, data, ix = qs, ref.pm, ref.data, np.ix_(P, P)
    vp, ap, tp = np.zeros(pm.nv), np.zeros(pm.nv), np.zeros(pm.nv)
    vp[P], ap[P], tp[P] = v, a, tau - ref.friction(v)
    rq, rv, _ = (x.copy() for x in pin.computeRNEADerivatives(pm, data, qp, vp, ap))
    fq, fv, fm = (x.copy() for x in pin.computeABADerivatives(pm, data, qp, vp, tp))
    minv = (np.triu(fm) + np.triu(fm, 1).T)[ix]
    dq, dv = lib.inverse_dynamics_derivatives(q, v, a, params)
    gq, gv, gm = lib.forward_dynamics_derivatives(q, v, tau, params)
    fd_tol = max(TOL, 1e-12 * np.linalg.cond(lib.compute_A(q, params)))
    for key, got, want, tol in [("dtau_dq", dq, rq[ix], TOL), ("dtau_dv", dv, rv[ix] + np.diag(ref.fv), TOL),
                                ("dddq_dq", gq, fq[ix], fd_tol),
                                ("dddq_dv", gv, fv[ix] - minv @ np.diag(ref.fv), fd_tol),
                                ("Minv", gm, minv, fd_tol)]:
        e = rel_err(got, want)
        worst[key] = max(worst.get(key, 0.0), e)
        assert e <= tol, f"{robot_name} {key}: rel err {e:.2e} > {tol:.1e}"


ALL_ARMS = os.environ.get("KK_DERIVATIVES_ALL") == "1"


@pytest.mark.robots
@pytest.mark.parametrize("robot_name", [
    pytest.param(n, marks=() if n == "ur5" else pytest.mark.skipif(
        not ALL_ARMS, reason="KK_DERIVATIVES_ALL=1 runs Panda and Talos")) for n in sorted(URDF_ROBOTS)])
def test_urdf_robots_against_pinocchio(robot_name, tmp_path):
    """Generated with --no-snap (both sides read the same rotations), the default and a
    random physically valid parameter set, a few random states. Panda and Talos (32 DOF:
    minutes of generation and compile on a 2-core machine) only with KK_DERIVATIVES_ALL=1."""
    from reference.robot_data import robots_dir
    from tests.test_urdf_end_to_end import PinUrdf, build
    from reference.pin_reference import urdf_q
    from reference.reference_fk import random_physical_params, random_states

    rel, ees = URDF_ROBOTS[robot_name]
    urdf = robots_dir() / rel
    robot, lib = build(urdf, tmp_path, robot_name, ees, snap=False)
    n = robot.model.ndof
    rng = np.random.default_rng(4)
    worst = {}
    for params in (np.array(robot.values, dtype=float), random_physical_params(robot.model, rng)):
        ref = PinUrdf(urdf, robot.model, params)
        pm, P = ref.pm, np.array(ref.perm)
        qs, vs = random_states(rng, 3, n)
        for q, v in zip(qs, vs):
            a, tau = rng.uniform(-5, 5, n), rng.uniform(-20, 20, n)
            _check_state(robot_name, lib, ref, P, (q, urdf_q(pm, robot.model, q)), v, a, tau, params, worst)
    print(f"\n{robot_name}: max rel err vs Pinocchio " + ", ".join(f"{k}: {v:.1e}" for k, v in worst.items()))


FLOATING = {"tiny": None, "solo12": "solo_description/robots/solo12.urdf",
            "simple_humanoid": "simple_humanoid_description/urdf/simple_humanoid.urdf"}


@pytest.mark.parametrize("robot_name", [
    pytest.param(n, marks=() if n == "tiny" else (pytest.mark.robots, pytest.mark.skipif(
        os.environ.get("KK_FLOATING_ALL") != "1", reason="KK_FLOATING_ALL=1 runs the floating-base robots")))
    for n in FLOATING])
def test_floating_base_against_pinocchio(robot_name, tmp_path):
    """Free-flying base: the q-derivative on the tangent space (Pinocchio's q (+) delta), against
    computeRNEADerivatives / computeABADerivatives of Pinocchio's free-flyer model (random base
    poses, unit quaternions, the default and a random physical parameter set). Solo12 and the
    simple humanoid (minutes of generation and compile each) only with KK_FLOATING_ALL=1."""
    from reference.robot_data import robots_dir
    from reference.floating_reference import PinFreeFlyer, random_base_states
    from reference.reference_fk import random_physical_params
    from tests.test_floating_base import TINY, TINY_EES, build

    own = robot_name == "tiny"
    urdf = TINY if own else robots_dir() / FLOATING[robot_name]
    if not urdf.exists():
        pytest.skip(f"{urdf} is not in this example-robot-data")
    robot, lib = build(tmp_path, urdf, robot_name, TINY_EES if own else [], not own)
    n = robot.model.ndof
    rng = np.random.default_rng(7)
    worst = {}
    for params in (np.array(robot.values, dtype=float), random_physical_params(robot.model, rng)):
        ref = PinFreeFlyer(urdf, robot.model, params, own)
        P = ref.perm
        qs, vs = random_base_states(rng, robot.model, 3)
        for q, v in zip(qs, vs):
            a, tau = rng.uniform(-5, 5, n), rng.uniform(-20, 20, n)
            _check_state(robot_name, lib, ref, P, (q, ref.q(q)), v, a, tau, params, worst)
    print(f"\n{robot_name}: max rel err vs Pinocchio " + ", ".join(f"{k}: {v:.1e}" for k, v in worst.items()))

"""External forces (the *_fext kernels: codegen/derive/rnea.py, dynamics_derivatives.py),
compiled and called through ctypes, against Pinocchio on the same model:

* inverse_dynamics_fext = rnea(model, data, q, v, a, fext) + friction;
* forward_dynamics_fext = aba(model, data, q, v, tau - friction, fext);
* their derivatives = computeRNEADerivatives / computeABADerivatives with fext
  (<= 1e-10 relative; forward dynamics 1e-12 cond(A));
* the kernels without fext equal the _fext ones at fext = 0, and the derivatives
  with fext equal central differences of inverse_dynamics_fext.

fext holds one (force, moment) per body in the body's frame (Pinocchio's LOCAL), the
bodies in Pinocchio's joint order (BODY_NAMES); a fixed-base tree, two arms on the world,
and a free-flyer (its base body first).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reference.abi_ctypes import Library, compile_shared
from reference.ctrl_cases import library, param_sets
from reference.reference_fk import rel_err

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402
from reference.reference_fk import random_physical_params  # noqa: E402

HERE = Path(__file__).resolve().parent
TOL = 1e-10
TINY = HERE / "models" / "floating_tiny.urdf"


def _bodies(model):
    """Our bodies of fext (codegen.derive.symbols.body_frames), as Pinocchio joint names."""
    from codegen.derive.symbols import body_frames
    return [f"joint_{f.key}" for f in body_frames(model)]


def _pin_fext(pm, model, fext):
    names = _bodies(model)
    assert list(pm.names[1:]) == names  # body k is Pinocchio's joint k + 1
    forces = [pin.Force.Zero()]
    for k in range(len(names)):
        forces.append(pin.Force(fext[6 * k:6 * k + 3], fext[6 * k + 3:6 * k + 6]))
    return forces


def _states(model, rng, n):
    out = []
    for _ in range(n):
        q = rng.uniform(-np.pi, np.pi, size=model.nq)
        if model.floating_base:
            quat = rng.normal(size=4)
            q[3:7] = quat / np.linalg.norm(quat)
        out.append((q, rng.uniform(-3, 3, model.ndof), rng.uniform(-5, 5, model.ndof),
                    rng.uniform(-20, 20, model.ndof), rng.uniform(-10, 10, 6 * (model.ndof - 5 * model.floating_base))))
    return out


def _friction(lib, v, p):
    return lib.friction(v, p)


def _check(lib, model, params, seed=3, n=4):
    rng = np.random.default_rng(seed)
    worst = {}
    for label, p in params:
        pm, _ = build_pin_model(model, p)
        data = pm.createData()
        for q, v, a, tau, fext in _states(model, rng, n):
            fr = _friction(lib, v, p)
            fx = _pin_fext(pm, model, fext)
            A = lib.compute_A(q, p)
            ftol = max(TOL, 1e-12 * np.linalg.cond(A))
            dq, dv = (x.copy() for x in pin.computeRNEADerivatives(pm, data, q, v, a, fx)[:2])
            fq, fv, minv = (x.copy() for x in pin.computeABADerivatives(pm, data, q, v, tau - fr, fx))
            minv = np.triu(minv) + np.triu(minv, 1).T
            Fv = np.diag(lib.inverse_dynamics_derivatives(q, v, a, p)[1] - dv)  # diag(Fv): no fext there
            got = {"tau": (lib.inverse_dynamics_fext(q, v, a, p, fext), pin.rnea(pm, data, q, v, a, fx) + fr, TOL),
                   "ddq": (lib.forward_dynamics_fext(q, v, tau, p, fext), pin.aba(pm, data, q, v, tau - fr, fx),
                           ftol)}
            idq, idv = lib.inverse_dynamics_derivatives_fext(q, v, a, p, fext)
            got["dtau_dq"], got["dtau_dv"] = (idq, dq, TOL), (idv, dv + np.diag(Fv), TOL)
            gq, gv, gm = lib.forward_dynamics_derivatives_fext(q, v, tau, p, fext)
            got["dddq_dq"], got["Minv"] = (gq, fq, ftol), (gm, minv, ftol)
            got["dddq_dv"] = (gv, fv - minv @ np.diag(Fv), ftol)
            for key, (ours, ref, tol) in got.items():
                e = rel_err(ours, ref)
                worst[key] = max(worst.get(key, 0.0), e / tol * TOL)
                assert e <= tol, f"{label} {key}: {e:.2e}"
            # without external forces: the plain kernels are the _fext ones at fext = 0
            z = np.zeros_like(fext)
            assert np.array_equal(lib.inverse_dynamics(q, v, a, p), lib.inverse_dynamics_fext(q, v, a, p, z))
            for x, y in zip(lib.inverse_dynamics_derivatives(q, v, a, p),
                            lib.inverse_dynamics_derivatives_fext(q, v, a, p, z)):
                assert np.array_equal(x, y)
    return worst


@pytest.mark.parametrize("name", ["mini", "tree", "forest"])
def test_fixed_base_against_pinocchio(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    _check(lib, lib.model, param_sets(name, n_random=2))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from codegen.read.urdf import load_urdf
    out = tmp_path_factory.mktemp("fext_tiny")
    robot = load_urdf(TINY, name="tiny", end_effectors=["foot"], snap=False)
    cmd = [sys.executable, "-m", "codegen", str(TINY), "--out", str(out), "--name", "tiny", "--no-snap",
           "--end-effector", "foot"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
    assert r.returncode == 0, r.stderr
    lib = Library(robot.model, compile_shared(out / "tiny_kernels.c", out / "libtiny.so"), "tiny")
    return robot, lib


def test_free_flyer_against_pinocchio(tiny):
    robot, lib = tiny
    model = robot.model
    assert model.floating_base
    rng = np.random.default_rng(11)
    params = [("default", np.array(robot.values)), ("random", random_physical_params(model, rng))]
    _check(lib, model, params)


def test_derivatives_match_central_differences(tiny):
    """d tau / dv of inverse_dynamics_fext by differences (q moves on the tangent space: the
    Pinocchio comparison covers dq); the fext force is held fixed in its body."""
    robot, lib = tiny
    model = robot.model
    rng = np.random.default_rng(2)
    p = np.array(robot.values)
    (q, v, a, _, fext), = _states(model, rng, 1)
    _, dv = lib.inverse_dynamics_derivatives_fext(q, v, a, p, fext)
    h = 1e-6
    num = np.column_stack([(lib.inverse_dynamics_fext(q, v + h * e, a, p, fext)
                            - lib.inverse_dynamics_fext(q, v - h * e, a, p, fext)) / (2 * h)
                           for e in np.eye(model.ndof)])
    assert rel_err(dv, num) <= 1e-7
    # and the external force's own effect: d tau / d fext = -J^T, linear
    t0 = lib.inverse_dynamics_fext(q, v, a, p, np.zeros_like(fext))
    t1 = lib.inverse_dynamics_fext(q, v, a, p, fext)
    t2 = lib.inverse_dynamics_fext(q, v, a, p, 2 * fext)
    assert rel_err(t2 - t1, t1 - t0) <= 1e-12 and rel_err(t1 - t0, 0 * t0) > 1e-3

"""Forward dynamics (codegen/derive/forward_dynamics.py: sparse LTDL of A), compiled
and called via ctypes, and an energy-conservation simulation.

* forward_dynamics(q, dq, tau) against Pinocchio's aba (armature included in
  Pinocchio 3+; Pinocchio has no friction, so its torque is tau - friction);
* as the inverse of inverse_dynamics both ways:
  forward_dynamics(inverse_dynamics(ddq)) = ddq and
  inverse_dynamics(forward_dynamics(tau)) = tau.
Solving with A costs accuracy in proportion to its condition number, so the
accelerations are compared to max|ours - ref| <= 1e-12 cond(A) (1 + max|ref|)
(for the torques, a residual, 1e-12 without the condition number).

Physics: with tau = 0 and no friction, RK4 on forward_dynamics for 2 s at
0.1 ms conserves E = 1/2 dq^T A dq + U (U from Pinocchio's
computePotentialEnergy) to 1e-8 relative; with friction and a torque, the
power balance dE/dt = dq^T (tau - friction) holds at every step
(dE/dt by central differences of E along the trajectory).
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.ctrl_cases import cases, library, param_sets, states
from reference.reference_fk import NumericModel, rel_err

pytestmark = pytest.mark.builds

TOL = 1e-12
pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402


@pytest.mark.parametrize("name", cases())
def test_forward_dynamics(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    model = lib.model
    qs, dqs, ddqs = states(model.ndof)
    rng = np.random.default_rng(3)
    worst = {}
    for label, p in param_sets(name):
        pm, _ = build_pin_model(model, p)
        data = pm.createData()
        num = NumericModel(model, p)
        for q, dq, ddq in zip(qs, dqs, ddqs):
            A = lib.compute_A(q, p)
            bound = TOL * np.linalg.cond(A)
            tau = rng.uniform(-20, 20, model.ndof)
            ddq_ours = lib.forward_dynamics(q, dq, tau, p)
            checks = [
                ("ddq vs pin.aba", ddq_ours, pin.aba(pm, data, q, dq, tau - num.friction(dq)), bound),
                ("fd(id(ddq)) vs ddq", lib.forward_dynamics(q, dq, lib.inverse_dynamics(q, dq, ddq, p), p),
                 ddq, bound),
                ("id(fd(tau)) vs tau", lib.inverse_dynamics(q, dq, ddq_ours, p), tau, TOL),
            ]
            for key, got, ref, tol in checks:
                e = rel_err(got, ref)
                worst[key] = max(worst.get(key, 0.0), e / tol * TOL)
                assert e <= tol, f"[{label}] {key}: rel err {e:.2e} > {tol:.2e}\nours {got}\nref  {ref}"
    print(f"\n{name}: max rel err / cond(A) (torques: rel err) " + ", ".join(f"{k}: {v:.1e}" for k, v in worst.items()))


def _rk4(f, x, dt):
    k1 = f(x)
    k2 = f(x + 0.5 * dt * k1)
    k3 = f(x + 0.5 * dt * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _no_friction(model, p):
    p = p.copy()
    for i, n in enumerate(model.param_names):
        if n.startswith(("Fv_", "Fc_")):
            p[i] = 0.0
    return p


def test_energy_conservation_rk4(tmp_path_factory):
    """mini, tau = 0, no friction: 2 s at 0.1 ms, |E - E0| <= 1e-8 |E0|-scale."""
    lib = library("mini", tmp_path_factory)
    model, n = lib.model, lib.model.ndof
    (_, p), = param_sets("mini", n_random=0)
    p = _no_friction(model, p)
    pm, _ = build_pin_model(model, p)
    data = pm.createData()
    zero = np.zeros(n)

    def f(x):
        return np.concatenate([x[n:], lib.forward_dynamics(x[:n], x[n:], zero, p)])

    def energy(x):
        q, dq = x[:n], x[n:]
        return 0.5 * dq @ lib.compute_A(q, p) @ dq + pin.computePotentialEnergy(pm, data, q)

    x = np.concatenate([[0.3, -0.8, 0.05], [1.5, -2.0, 0.7]])
    E0 = energy(x)
    scale = abs(E0) + 0.5 * x[n:] @ lib.compute_A(x[:n], p) @ x[n:]
    drift = 0.0
    for step in range(20000):
        x = _rk4(f, x, 1e-4)
        if step % 500 == 499:
            drift = max(drift, abs(energy(x) - E0))
    print(f"\nmini RK4 2 s: max |E - E0| / scale = {drift / scale:.1e} (E0 = {E0:.4g})")
    assert drift <= 1e-8 * scale, (drift, scale)
    assert np.abs(x[n:]).max() > 0.1  # it did move


def test_power_balance(tmp_path_factory):
    """With friction and a torque: dE/dt = dq^T (tau - friction) along an RK4 trajectory."""
    lib = library("tree", tmp_path_factory)
    model, n = lib.model, lib.model.ndof
    (_, p), = param_sets("tree", n_random=1)
    pm, _ = build_pin_model(model, p)
    data = pm.createData()
    num = NumericModel(model, p)
    rng = np.random.default_rng(11)
    tau = rng.uniform(-5, 5, n)
    dt = 1e-4

    def f(x):
        return np.concatenate([x[n:], lib.forward_dynamics(x[:n], x[n:], tau, p)])

    def energy(x):
        q, dq = x[:n], x[n:]
        return 0.5 * dq @ lib.compute_A(q, p) @ dq + pin.computePotentialEnergy(pm, data, q)

    xs = [np.concatenate([rng.uniform(-1, 1, n), rng.uniform(-2, 2, n)])]
    for _ in range(400):
        xs.append(_rk4(f, xs[-1], dt))
    worst = 0.0
    for k in range(1, len(xs) - 1, 20):
        dE = (energy(xs[k + 1]) - energy(xs[k - 1])) / (2 * dt)
        dq = xs[k][n:]
        power = dq @ (tau - num.friction(dq))
        e = abs(dE - power) / (1 + abs(power))
        worst = max(worst, e)
        # central differences of a smooth trajectory: O(dt^2) error
        assert e <= 1e-6, (k, dE, power)
    print(f"\ntree power balance: max |dE/dt - dq.(tau - friction)| / (1 + |power|) = {worst:.1e}")


@pytest.mark.parametrize("lam", [[-1, 0, 1, 2], [-1, 0, 1, 0, 3, -1, 5, 5], [-1, 0, 1, 2, 3, 4, 5, 5, 7, 5]])
def test_inverse_from_the_factors_is_the_inverse(lam):
    """forward_dynamics.inverse (forward_dynamics_derivatives' Minv) on numbers: a random
    matrix with a tree's pattern (A = L^T D L, a chain, a forest of two trees, a
    free-flyer-like trunk of six with branches), against numpy's inverse, zero exactly
    between root subtrees."""
    import sympy as sp

    from codegen.derive import forward_dynamics as fd
    from codegen.derive.program import Program

    rng = np.random.default_rng(len(lam))
    n = len(lam)
    L = np.eye(n)
    for i in range(n):
        for j in fd.chain(lam, lam[i]):
            L[i, j] = rng.uniform(-1, 1)
    A = L.T @ np.diag(rng.uniform(0.5, 2, n)) @ L
    prog = Program()
    Lf, Dinv = fd.ltdl(prog, sp.Matrix(A.tolist()), lam)
    got = np.array(fd.inverse(prog, Lf, Dinv, lam).tolist(), dtype=float)
    ref = np.linalg.inv(A)
    assert np.max(np.abs(got - ref)) <= 1e-12 * np.linalg.cond(A) * np.max(np.abs(ref))
    roots = [fd.chain(lam, i)[-1] for i in range(n)]  # the outermost ancestor-or-self
    assert all(got[i, j] == 0 for i in range(n) for j in range(n) if roots[i] != roots[j])

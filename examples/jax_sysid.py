"""Identify a payload on Panda's hand by jax.grad through 1 s of simulation, against the same fit with
finite differences.

    python -m examples.jax_sysid            (from the repository root; needs jax: pip install "jax[cpu]")
    python -m examples.jax_sysid --short    (0.2 s of simulation, a few iterations: what CI runs)

The robot: Panda from example-robot-data through codegen.import_urdf (as examples/ilqr.py), its kernels
as JAX functions by krang_kernels.jax.wrap (XLA FFI calls with derivative rules, docs/jax.md). The
payload: a point mass m at c (link 7's frame, where the hand is fixed), which adds m to link 7's mass,
m c to its first moments and m (|c|^2 I - c c^T) to its inertia about the frame origin (the
parameter vector's m, MX..MZ, XX..ZZ of panda_link7; Khalil-Dombre's standard parameters).
The experiment: the arm tracks a sum of sines under a PD controller (5 Hz, critically damped per joint) with gravity compensation from the
nominal model (no payload), 1 s at 1 kHz, semi-implicit Euler (v+ = v + dt ddq, q+ = q + dt v+); the
"measurement" is the joint trajectory of the true payload plus 1e-4 rad of noise. The fit minimizes the
mean squared joint error over x = (m in kg, c in dm) by BFGS with a backtracking line search, its gradient
either jax.grad of the jitted rollout (one forward and one reverse pass: forward_dynamics' rule is the
derivative kernels, the parameters' the regressor's columns) or central differences of the same jitted
loss (2 x 4 rollouts). Prints both fits' estimates, iterations and times, and the two gradients'
agreement at the start; then the gradient in all the parameters the dynamics are linear in (every
link's inertial parameters, rotor inertia and friction) both ways: jax.grad's time does not depend on
their number, central differences take two rollouts per parameter.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from examples.ilqr import EE, Q0, load_robot

LINK = "panda_link7"
X_TRUE = np.array([1.2, 0.3, -0.2, 1.0])  # payload mass (kg) and centre (dm) in link 7's frame
X_START = np.array([0.5, 0.0, 0.0, 0.5])
DT = 1e-3
BANDWIDTH = 2 * np.pi * 5.0  # rad/s: the PD loop of each joint, critically damped on A(Q0)'s diagonal
NOISE = 1e-4  # rad
FD_H = 1e-6  # central differences on x


def payload_params(jnp, p0, index, x):
    """The parameter vector with the payload x = (m, c / 0.1 m) added to link 7 (a point mass)."""
    m, c = x[0], 0.1 * x[1:4]
    inertia = m * (jnp.dot(c, c) * jnp.eye(3) - jnp.outer(c, c))
    add = jnp.concatenate([m[None], m * c, inertia[jnp.array([0, 0, 0, 1, 1, 2]), jnp.array([0, 1, 2, 1, 2, 2])]])
    return p0.at[index].add(add)


def make_problem(robot, module, seconds: float):
    """(loss(x), loss_p(p), the parameter vector at x): the rollout's mean squared joint error as a
    function of the payload x and of the whole parameter vector p, jitted."""
    import jax
    import jax.numpy as jnp

    names = module.PARAM_NAMES
    index = jnp.array([names.index(f"{k}_{LINK}") for k in ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")])
    p0 = jnp.asarray(module.default_params())
    steps = int(round(seconds / DT))
    t = DT * np.arange(steps)
    arm = np.arange(module.N_DOF) < 7  # the fingers hold their opening
    ref = Q0 + arm * (0.3 * np.sin(2 * np.pi * 1.0 * t)[:, None] + 0.2 * np.sin(2 * np.pi * 2.3 * t + 1.0)[:, None])
    ref = jnp.asarray(ref)
    zero = jnp.zeros(module.N_DOF)
    # gains from the joint's own inertia (a light wrist or finger with an arm's gains is unstable at 1 kHz)
    inertia = np.diag(module.compute_A(Q0))
    kp, kd = jnp.asarray(BANDWIDTH ** 2 * inertia), jnp.asarray(2 * BANDWIDTH * inertia)

    def rollout_p(p):
        def step(carry, q_ref):
            q, v = carry
            tau = kp * (q_ref - q) - kd * v + robot.inverse_dynamics(q, zero, zero, p0)  # nominal gravity
            v = v + DT * robot.forward_dynamics(q, v, tau, p)
            q = q + DT * v
            return (q, v), q
        return jax.lax.scan(step, (jnp.asarray(Q0), zero), ref)[1]

    def params(x):
        return payload_params(jnp, p0, index, x)

    rng = np.random.default_rng(0)
    measured = np.asarray(jax.jit(rollout_p)(params(jnp.asarray(X_TRUE))))
    measured = jnp.asarray(measured + NOISE * rng.normal(size=(steps, module.N_DOF)))

    def loss_p(p):
        return jnp.mean((rollout_p(p) - measured) ** 2) / NOISE ** 2
    return jax.jit(lambda x: loss_p(params(x))), jax.jit(loss_p), jax.jit(params)


def central_gradient(loss, x):
    return np.array([(float(loss(x + FD_H * e)) - float(loss(x - FD_H * e))) / (2 * FD_H) for e in np.eye(len(x))])


def bfgs(f, grad, x, iterations: int, tol: float = 1e-6):
    """BFGS (Nocedal and Wright 2006, algorithm 6.1) with a backtracking (Armijo) line search; returns
    (x, iterations done, gradient evaluations)."""
    fx, g = float(f(x)), grad(x)
    H = np.eye(len(x)) * (0.5 / np.linalg.norm(g))  # a first step of 0.5 in x: the loss's scale is arbitrary
    evaluations = 1
    for k in range(iterations):
        if np.linalg.norm(g) < tol:
            return x, k, evaluations
        d = -H @ g
        step = 1.0
        # not (<=): a step that makes the simulation diverge (NaN) is shortened too
        while not float(f(x + step * d)) <= fx + 1e-4 * step * (g @ d) and step > 1e-8:
            step *= 0.5
        s = step * d
        x = x + s
        fx, g_new = float(f(x)), grad(x)
        evaluations += 1
        y = g_new - g
        if s @ y > 1e-12:  # the curvature condition: keep H positive definite
            if k == 0:  # Nocedal and Wright (6.20): the first update's scale from the step taken
                H = np.eye(len(x)) * (s @ y) / (y @ y)
            rho = 1.0 / (s @ y)
            V = np.eye(len(x)) - rho * np.outer(s, y)
            H = V @ H @ V.T + rho * np.outer(s, s)
        g = g_new
    return x, iterations, evaluations


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="0.2 s of simulation, 3 iterations (CI)")
    args = ap.parse_args(argv)
    import jax
    jax.config.update("jax_enable_x64", True)
    import krang_kernels.jax as kj

    module = load_robot()
    t0 = time.perf_counter()
    robot = kj.wrap(module, differentiate_geometry=False)  # the payload changes inertial parameters only
    print(f"Panda ({module.N_DOF} DOF, end effector {EE}); wrap: {time.perf_counter() - t0:.1f} s "
          "(the first time: compiling its C)")
    seconds, iterations = (0.2, 3) if args.short else (1.0, 40)
    loss, loss_p, params = make_problem(robot, module, seconds)
    grad = jax.jit(jax.grad(loss))
    x0 = X_START.astype(float)
    loss(x0), grad(x0)  # compile both first: the timings are of the fits alone
    g_ad, g_fd = np.asarray(grad(x0)), central_gradient(loss, x0)
    print(f"{seconds:g} s at {1 / DT:g} Hz; gradient at the start, jax.grad vs central differences: "
          f"max relative difference {np.abs(g_ad - g_fd).max() / np.abs(g_fd).max():.1e}")
    one = {"jax.grad": lambda: grad(x0).block_until_ready(), "central differences": lambda: central_gradient(loss, x0)}
    for label, gradient in (("jax.grad", lambda x: np.asarray(grad(x))), ("central differences",
                                                                       lambda x: central_gradient(loss, x))):
        per = min(_time(one[label]) for _ in range(3))
        t0 = time.perf_counter()
        x, k, evaluations = bfgs(loss, gradient, x0, iterations)
        total = time.perf_counter() - t0
        print(f"{label:>20}: m = {x[0]:.4f} kg, c = ({', '.join(f'{0.1 * c:+.4f}' for c in x[1:])}) m "
              f"(true {X_TRUE[0]:g} kg, ({', '.join(f'{0.1 * c:+g}' for c in X_TRUE[1:])}) m); "
              f"{k} iterations, {evaluations} gradients of {per * 1e3:.1f} ms, {total:.2f} s in all")
    # The same gradient in every parameter the dynamics are linear in (all links' inertial parameters,
    # rotor inertias, friction): jax.grad's cost does not grow with their number, differences' does.
    linear = np.asarray(module.REGRESSOR_PARAM_INDEX)
    p = np.asarray(params(X_TRUE))
    grad_p = jax.jit(jax.grad(loss_p))
    grad_p(p)
    g_ad = np.asarray(grad_p(p))[linear]
    t_ad = min(_time(lambda: grad_p(p).block_until_ready()) for _ in range(3))
    t0 = time.perf_counter()
    g_fd = np.array([(float(loss_p(p + FD_H * e)) - float(loss_p(p - FD_H * e))) / (2 * FD_H)
                     for e in np.eye(len(p))[linear]])
    t_fd = time.perf_counter() - t0
    print(f"gradient in all {len(linear)} linear parameters: jax.grad {t_ad * 1e3:.1f} ms, central differences "
          f"{t_fd * 1e3:.0f} ms ({2 * len(linear)} rollouts); max difference {np.abs(g_ad - g_fd).max():.1e} "
          f"(largest entry {np.abs(g_fd).max():.1e})")


def _time(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()

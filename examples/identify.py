"""Identify Krang's base parameters from a simulated excitation experiment.

    python -m examples.identify            (from the repository root; `make examples`)
    python -m examples.identify --short    (fewer samples: what CI runs)

The "true" robot differs from the model's defaults: every link's mass, first
moments and inertia scaled by its own factor in [0.7, 1.3] (a uniformly
denser or lighter link: still physically consistent) and every joint's
viscous and Coulomb friction drawn anew. It is excited by a finite
Fourier series (Swevers et al. 1997) within the joint and velocity limits,
at random and optimized for the condition number of the stacked base
regressor (krang_kernels.identification.optimized_excitation); the torques it needs (inverse_dynamics with the true parameters)
get Gaussian measurement noise (1 % of each joint's RMS torque). The base
parameters are estimated by least squares on the generated base regressor
(krang_kernels.identification.identify), then checked:

* relative error of the estimate against base_params(true), overall and
  per parameter (median), with the condition number of the stacked
  base regressor, for the random and the optimized excitation;
* the torque RMS error on a separate validation trajectory, predicted by
  the identified base parameters and by the defaults.

Saves a PNG of one joint's validation torques (matplotlib: `pip install
krang-kernels[examples]`; without it the plot is skipped with a message).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import krang_kernels as kk
from krang_kernels import identification as ident
from examples.plotting import pyplot, save

NOISE = 0.01  # of each joint's RMS torque


def true_params(rng):
    """The defaults with every link scaled by a factor in [0.7, 1.3] and new friction."""
    p = kk.default_params()
    names = kk.PARAM_NAMES
    for key in sorted({n.split("_", 1)[1] for n in names if n.startswith("m_")}):  # sorted: a set's order varies by process
        k = rng.uniform(0.7, 1.3)
        for kind in ident.INERTIAL_KINDS:
            p[names.index(f"{kind}_{key}")] *= k
    for i, n in enumerate(names):
        if n.startswith(("Fv_", "Fc_")):
            p[i] = rng.uniform(0.05, 0.5)
    return p


def limits():
    lim = kk.JOINT_LIMITS
    vel = np.where(np.isfinite(lim["velocity"]), lim["velocity"], 2.0)
    return lim["lower"], lim["upper"], np.minimum(vel, 2.0)


def trajectory(n, seed):
    """A random Fourier excitation of n samples over 20 s within the limits."""
    lower, upper, dq_max = limits()
    (q, dq, ddq), _ = ident.random_excitation(kk.N_DOF, lower, upper, np.linspace(0, 20, n), harmonics=5,
                                              omega=2 * np.pi / 20, rng=np.random.default_rng(seed),
                                              dq_max=dq_max)
    return q, dq, ddq


def optimized_trajectory(n, seed, iterations):
    """The same kind of excitation, optimized for the condition number of the stacked base
    regressor on 400 of the samples (the optimizer's cost), then sampled n times."""
    lower, upper, dq_max = limits()
    ex = ident.optimized_excitation(kk, lower, upper, np.linspace(0, 20, min(n, 400)), harmonics=5,
                                    omega=2 * np.pi / 20, dq_max=dq_max, candidates=4, iterations=iterations,
                                    rng=np.random.default_rng(seed))
    return ident.fourier_trajectory(np.linspace(0, 20, n), ex.a, ex.b, ex.q0, ex.omega)


def plot(t, tau_true, tau_id, tau_default, joint, path):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    name = kk.JOINT_NAMES[joint]
    ax.plot(t, tau_true[:, joint], "k", lw=1.5, label="true")
    ax.plot(t, tau_id[:, joint], "C0--", lw=1, label="identified")
    ax.plot(t, tau_default[:, joint], "C3:", lw=1, label="default parameters")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"torque of {name} (N m)")
    ax.set_title("Krang: validation trajectory, torque predicted by identified vs default parameters")
    ax.legend()
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", action="store_true", help="fewer samples (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/identify.png"))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(2026)
    p_default, p_true = kk.default_params(), true_params(rng)
    n = 400 if args.short else 4000
    beta_true = kk.base_params(p_true)

    def estimate(q, dq, ddq):
        """Weighted least squares on noisy torques: each joint's rows divided by its noise level."""
        tau = kk.inverse_dynamics(q, dq, ddq, p_true)
        sigma = NOISE * np.sqrt(np.mean(tau ** 2, axis=0))
        measured = tau + rng.normal(size=tau.shape) * sigma
        _, fit = ident.identify(kk, q, dq, ddq, measured, weights=np.tile(1 / np.maximum(sigma, 1e-9), len(q)))
        return fit, np.linalg.norm(fit.beta - beta_true) / np.linalg.norm(beta_true)

    def condition(q, dq, ddq):  # the optimizer's criterion: unweighted, on the whole trajectory
        return ident.excitation_condition(kk, q, dq, ddq, p_default, ident.base_parameters(kk))

    random, optimized = trajectory(n, seed=1), optimized_trajectory(n, seed=1, iterations=30 if args.short else 100)
    (_, rel_random), (fit, rel) = estimate(*random), estimate(*optimized)
    cond_random, cond = condition(*random), condition(*optimized)
    per = np.abs(fit.beta - beta_true) / np.maximum(np.abs(beta_true), 1e-12)
    print(f"Krang: {kk.N_BASE} base parameters of {kk.N_PI} standard ones, {n} samples, noise {NOISE:.0%} of "
          f"RMS torque")
    print(f"random excitation:    condition number {cond_random:.3e}, base parameter relative error "
          f"{rel_random:.3e}")
    print(f"optimized excitation: condition number {cond:.3e}, base parameter relative error {rel:.3e} "
          f"(median per parameter {np.median(per):.3e})")
    print(f"within 3 std: {np.mean(np.abs(fit.beta - beta_true) <= 3 * fit.std):.0%}")
    qv, dqv, ddqv = trajectory(n // 2, seed=2)
    t = np.linspace(0, 20, n // 2)
    tau_v = kk.inverse_dynamics(qv, dqv, ddqv, p_true)
    tau_id = kk.base_regressor(qv, dqv, ddqv, p_default) @ fit.beta
    tau_def = kk.inverse_dynamics(qv, dqv, ddqv, p_default)
    rms = lambda e: float(np.sqrt(np.mean(e ** 2)))  # noqa: E731
    print(f"validation torque RMS error: identified {rms(tau_id - tau_v):.3e} N m, "
          f"default parameters {rms(tau_def - tau_v):.3e} N m")
    joint = int(np.argmax(np.sqrt(np.mean((tau_def - tau_v) ** 2, axis=0))))
    plot(t, tau_v, tau_id, tau_def, joint, args.png)


if __name__ == "__main__":
    main()

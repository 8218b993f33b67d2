"""Exciting trajectories for identification: finite Fourier series within joint
and velocity limits (Swevers, Ganseman, Tukel, De Schutter and Van Brussel 1997,
"Optimal robot excitation and identification"), at random or optimized for
the condition number of the stacked base regressor, the usual criterion
(Swevers et al. 1997, sec. IV; Khalil and Dombre 2002, sec. 12.5.3): the
smaller it is, the less the noise on tau is amplified in the estimate.

Fixed-base joints only: q has N_DOF entries (a floating base's pose is not a
Fourier series of its coordinates).
"""
from __future__ import annotations

import dataclasses

import numpy as np


def fourier_trajectory(t, a, b, q0, omega):
    """q, dq, ddq, each of shape (len(t), NDOF), of the finite Fourier series of
    Swevers et al. (1997): q_i(t) = q0_i + sum_l a_il/(l w) sin(l w t) - b_il/(l w) cos(l w t);
    t: times (s), a, b: coefficients of shape (NDOF, L) (rad/s or m/s), q0: shape (NDOF,)
    (rad or m), omega: the base frequency w (rad/s)."""
    t = np.asarray(t, float)[:, None, None]
    ll = np.arange(1, a.shape[1] + 1)[None, None, :] * omega
    s, c = np.sin(ll * t), np.cos(ll * t)
    q = q0 + np.sum(a / ll * s - b / ll * c, axis=2)
    dq = np.sum(a * c + b * s, axis=2)
    ddq = np.sum(-a * ll * s + b * ll * c, axis=2)
    return q, dq, ddq


def _limits(lower, upper):
    lo = np.where(np.isfinite(lower), lower, -np.pi)
    up = np.where(np.isfinite(upper), upper, np.pi)
    return lo, up


def _within_limits(a, b, t, lo, up, omega, dq_max):
    """The coefficients scaled per joint so that q stays within 90 % of [lo, up]
    about their middle and |dq| within 90 % of dq_max: (a, b, q0)."""
    q0 = (lo + up) / 2
    q, dq, _ = fourier_trajectory(t, a, b, q0, omega)
    amp = np.max(np.abs(q - q0), axis=0)
    k = 0.9 * ((up - lo) / 2) / np.maximum(amp, 1e-12)
    if dq_max is not None:
        k = np.minimum(k, 0.9 * np.asarray(dq_max, float) / np.maximum(np.max(np.abs(dq), axis=0), 1e-12))
    return a * k[:, None], b * k[:, None], q0


def random_excitation(ndof, lower, upper, t, harmonics=5, omega=2 * np.pi / 10, rng=None, dq_max=None):
    """Random Fourier coefficients scaled so that q stays within [lower, upper]
    (shape (NDOF,) each, rad or m; infinite limits taken as +-pi) and |dq| <= dq_max
    (shape (NDOF,), rad/s or m/s): ((q, dq, ddq), (a, b, q0)), shapes as in
    fourier_trajectory; t: times (s), omega: base frequency (rad/s)."""
    rng = np.random.default_rng(0) if rng is None else rng
    lo, up = _limits(lower, upper)
    a = rng.normal(size=(ndof, harmonics))
    b = rng.normal(size=(ndof, harmonics))
    a, b, q0 = _within_limits(a, b, t, lo, up, omega, dq_max)
    return fourier_trajectory(t, a, b, q0, omega), (a, b, q0)


@dataclasses.dataclass(frozen=True)
class Excitation:
    """An exciting trajectory: q, dq, ddq of shape (len(t), NDOF) (rad, rad/s,
    rad/s^2 or m, m/s, m/s^2), its Fourier coefficients a, b (NDOF, L) and q0
    (NDOF,) at base frequency omega (rad/s), the condition number of its stacked
    base regressor, and that of the best random start it was optimized from."""
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    omega: float
    condition: float
    start_condition: float


def excitation_condition(module, q, dq, ddq, params, base) -> float:
    """cond of the base regressor stacked over the samples (q, dq, ddq of shape (N, NDOF))."""
    from .identification import stacked_regressor

    W = base.base_regressor(stacked_regressor(module, q, dq, ddq, params))
    # from the eigenvalues of the Gram matrix W^T W (one matrix product, then a small
    # symmetric eigenproblem: ~10x less work than the SVD of a tall W); their relative
    # accuracy, eps cond(W)^2, is ample for a criterion while cond(W) << 1e8
    ev = np.linalg.eigvalsh(W.T @ W)
    return float(np.sqrt(ev[-1] / ev[0])) if ev[0] > ev[-1] * 1e-15 else np.inf


def optimized_excitation(module, lower, upper, t, harmonics=5, omega=2 * np.pi / 10, dq_max=None, params=None,
                         base=None, candidates=8, iterations=150, rng=None) -> Excitation:
    """A Fourier excitation within the limits (as random_excitation) whose stacked
    base regressor has a small condition number: the best of `candidates` random
    ones, then `iterations` steps of a (1+1) evolution strategy on the
    coefficients with the 1/5th success rule (Rechenberg 1973; each candidate
    rescaled into the limits, kept if its condition number is lower). Deterministic
    for a given rng. module: any generated fixed-base module (its `regressor`);
    params shape (N_PARAMS,) (default: the module's), base: BaseParameters (default:
    base_parameters(module, params)); lower, upper, dq_max shape (NDOF,)."""
    from .identification import base_parameters

    if getattr(module, "N_Q", module.N_DOF) != module.N_DOF:
        raise ValueError("optimized_excitation: fixed-base joints only (this module has a floating base)")
    rng = np.random.default_rng(0) if rng is None else rng
    params = module.default_params() if params is None else np.asarray(params, float)
    base = base_parameters(module, params) if base is None else base
    lo, up = _limits(lower, upper)
    t = np.asarray(t, float)

    def condition(a, b, q0):
        value = excitation_condition(module, *fourier_trajectory(t, a, b, q0, omega), params, base)
        return value if np.isfinite(value) else np.inf

    best, best_cond = None, np.inf
    for _ in range(max(1, int(candidates))):
        coeffs = _within_limits(rng.normal(size=(module.N_DOF, harmonics)),
                                rng.normal(size=(module.N_DOF, harmonics)), t, lo, up, omega, dq_max)
        c = condition(*coeffs)
        if c < best_cond or best is None:
            best, best_cond = coeffs, c
    start = best_cond
    sigma = 0.3  # step, relative to each joint's coefficient scale
    for _ in range(max(0, int(iterations))):
        a, b, _ = best
        scale = np.sqrt(np.mean(a * a + b * b, axis=1, keepdims=True)) + 1e-12
        trial = _within_limits(a + sigma * scale * rng.normal(size=a.shape),
                               b + sigma * scale * rng.normal(size=b.shape), t, lo, up, omega, dq_max)
        c = condition(*trial)
        if c < best_cond:
            best, best_cond, sigma = trial, c, sigma * 1.5
        else:
            sigma *= 1.5 ** -0.25
    a, b, q0 = best
    q, dq, ddq = fourier_trajectory(t, a, b, q0, omega)
    return Excitation(q, dq, ddq, a, b, q0, float(omega), float(best_cond), float(start))

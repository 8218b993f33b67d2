"""Exciting trajectories for identification: finite Fourier series within joint
and velocity limits (Swevers, Ganseman, Tukel, De Schutter and Van Brussel 1997,
"Optimal robot excitation and identification"), at random or optimized for
the condition number of the stacked base regressor, the usual criterion
(Swevers et al. 1997, sec. IV; Khalil and Dombre 2002, sec. 12.5.3): the
smaller it is, the less the noise on tau is amplified in the estimate.

Fixed-base joints only: q has N_DOF entries (a floating base's pose is not a
Fourier series of its coordinates).

Inputs are checked (ValueError naming the bad one): the base frequency omega
positive and finite, the number of harmonics and of joints positive integers,
the times t finite and spanning a positive duration, the coefficients' shapes,
lower below upper for every joint (NaN or infinite limits mean none, as in a
module's JOINT_LIMITS, and are taken as -pi and pi), dq_max positive.
"""
from __future__ import annotations

import dataclasses

import numpy as np


# ---- checks of the inputs -----------------------------------------------------------

def _array(x, name, where):
    try:
        return np.asarray(x, float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {name} is not an array of numbers ({exc})") from None


def _integer(x, name, where, minimum=1):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < minimum:
        raise ValueError(f"{where}: {name} must be an integer >= {minimum}, got {x!r}")
    return int(x)


def _omega(omega, where):
    try:
        w = float(omega)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: omega (the base frequency, rad/s) must be a number, got {omega!r}") from None
    if not (np.isfinite(w) and w > 0):
        raise ValueError(f"{where}: omega (the base frequency, rad/s) must be positive and finite, got {omega!r}")
    return w


def _finite(a, name, where):
    bad = np.flatnonzero(~np.isfinite(a).ravel())
    if len(bad):
        index = np.unravel_index(bad[0], a.shape)
        raise ValueError(f"{where}: {name}[{', '.join(map(str, index))}] is {a[index]}: {name} must be finite")
    return a


def _times(t, where, sampled=False):
    """t, 1-D and finite (sampled: at least 2 times spanning a positive duration,
    from which the trajectory's amplitudes are measured)."""
    t = _array(t, "t", where)
    if t.ndim != 1:
        raise ValueError(f"{where}: t (the sampling times, s) must be 1-D, got shape {t.shape}")
    _finite(t, "t", where)
    if sampled and (len(t) < 2 or not np.max(t) > np.min(t)):
        raise ValueError(f"{where}: t (the sampling times, s) must hold at least 2 times spanning a positive "
                         f"duration, got {len(t)} time(s)" + (f" from {np.min(t)} to {np.max(t)} s" if len(t) else ""))
    return t


def _per_joint(x, name, ndof, where):
    a = _array(x, name, where)
    if a.shape not in ((), (ndof,)):
        raise ValueError(f"{where}: {name} has shape {a.shape}; expected ({ndof},), one value per joint, or a scalar")
    return np.broadcast_to(a, (ndof,))


def _bounds(lower, upper, ndof, where):
    """(lo, up) of shape (ndof,): NaN or infinite limits taken as -pi, pi; lo < up."""
    lo, up = _limits(_per_joint(lower, "lower", ndof, where), _per_joint(upper, "upper", ndof, where))
    bad = np.flatnonzero(~(lo < up))
    if len(bad):
        j = int(bad[0])
        raise ValueError(f"{where}: lower ({lo[j]:g}) is not below upper ({up[j]:g}) at joint {j} (NaN or infinite "
                         "limits are taken as -pi and pi)")
    return lo, up


def _dq_max(dq_max, ndof, where):
    if dq_max is None:
        return None
    v = _per_joint(dq_max, "dq_max", ndof, where)
    bad = np.flatnonzero(~(v > 0))  # NaN too; inf: no velocity limit
    if len(bad):
        j = int(bad[0])
        raise ValueError(f"{where}: dq_max must be positive (rad/s or m/s, inf for none) at every joint; "
                         f"joint {j} has {v[j]}")
    return v


# ---- trajectories ---------------------------------------------------------------------

def fourier_trajectory(t, a, b, q0, omega):
    """q, dq, ddq, each of shape (len(t), NDOF), of the finite Fourier series of
    Swevers et al. (1997): q_i(t) = q0_i + sum_l a_il/(l w) sin(l w t) - b_il/(l w) cos(l w t);
    t: times (s), shape (N,), a, b: coefficients of shape (NDOF, L) (rad/s or m/s), q0:
    shape (NDOF,) (rad or m), omega: the base frequency w (rad/s), positive. ValueError
    on wrong shapes, non-finite values or omega <= 0."""
    where = "fourier_trajectory"
    omega = _omega(omega, where)
    t = _times(t, where)
    a = _finite(_array(a, "a", where), "a", where)
    if a.ndim != 2 or a.shape[1] < 1:
        raise ValueError(f"{where}: a has shape {a.shape}; expected (NDOF, L), L >= 1 harmonics")
    b = _finite(_array(b, "b", where), "b", where)
    if b.shape != a.shape:
        raise ValueError(f"{where}: b has shape {b.shape}; expected {a.shape}, the shape of a")
    q0 = _finite(_array(q0, "q0", where), "q0", where)
    if q0.shape != (a.shape[0],):
        raise ValueError(f"{where}: q0 has shape {q0.shape}; expected ({a.shape[0]},), one per joint (a's rows)")
    return _fourier(t, a, b, q0, omega)


def _fourier(t, a, b, q0, omega):
    """fourier_trajectory without the checks (inputs already checked)."""
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
    q, dq, _ = _fourier(t, a, b, q0, omega)
    amp = np.max(np.abs(q - q0), axis=0)
    k = 0.9 * ((up - lo) / 2) / np.maximum(amp, 1e-12)
    if dq_max is not None:
        k = np.minimum(k, 0.9 * np.asarray(dq_max, float) / np.maximum(np.max(np.abs(dq), axis=0), 1e-12))
    return a * k[:, None], b * k[:, None], q0


def random_excitation(ndof, lower, upper, t, harmonics=5, omega=2 * np.pi / 10, rng=None, dq_max=None):
    """Random Fourier coefficients scaled so that q stays within [lower, upper]
    (shape (NDOF,) each, rad or m; infinite limits taken as +-pi) and |dq| <= dq_max
    (shape (NDOF,), rad/s or m/s): ((q, dq, ddq), (a, b, q0)), shapes as in
    fourier_trajectory; t: times (s), at least 2 spanning a positive duration, omega: base
    frequency (rad/s), positive, harmonics: a positive integer. ValueError on bad inputs
    (see the module's docstring)."""
    where = "random_excitation"
    ndof = _integer(ndof, "ndof", where)
    harmonics = _integer(harmonics, "harmonics", where)
    omega = _omega(omega, where)
    t = _times(t, where, sampled=True)
    lo, up = _bounds(lower, upper, ndof, where)
    dq_max = _dq_max(dq_max, ndof, where)
    rng = np.random.default_rng(0) if rng is None else rng
    a = rng.normal(size=(ndof, harmonics))
    b = rng.normal(size=(ndof, harmonics))
    a, b, q0 = _within_limits(a, b, t, lo, up, omega, dq_max)
    return _fourier(t, a, b, q0, omega), (a, b, q0)


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
    base_parameters(module, params)); lower, upper, dq_max shape (NDOF,); candidates >= 1
    and iterations >= 0 integers. ValueError on bad inputs (see the module's docstring)."""
    from .identification import _params, base_parameters

    where = "optimized_excitation"
    if getattr(module, "N_Q", module.N_DOF) != module.N_DOF:
        raise ValueError("optimized_excitation: fixed-base joints only (this module has a floating base)")
    harmonics = _integer(harmonics, "harmonics", where)
    candidates = _integer(candidates, "candidates", where)
    iterations = _integer(iterations, "iterations", where, minimum=0)
    omega = _omega(omega, where)
    t = _times(t, where, sampled=True)
    lo, up = _bounds(lower, upper, module.N_DOF, where)
    dq_max = _dq_max(dq_max, module.N_DOF, where)
    rng = np.random.default_rng(0) if rng is None else rng
    params = _params(module, params, where)
    base = base_parameters(module, params) if base is None else base

    def condition(a, b, q0):
        value = excitation_condition(module, *_fourier(t, a, b, q0, omega), params, base)
        return value if np.isfinite(value) else np.inf

    best, best_cond = None, np.inf
    for _ in range(candidates):
        coeffs = _within_limits(rng.normal(size=(module.N_DOF, harmonics)),
                                rng.normal(size=(module.N_DOF, harmonics)), t, lo, up, omega, dq_max)
        c = condition(*coeffs)
        if c < best_cond or best is None:
            best, best_cond = coeffs, c
    start = best_cond
    sigma = 0.3  # step, relative to each joint's coefficient scale
    for _ in range(iterations):
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
    q, dq, ddq = _fourier(t, a, b, q0, omega)
    return Excitation(q, dq, ddq, a, b, q0, omega, float(best_cond), float(start))

"""Identification of the dynamic parameters from measured motion (pure numpy).

Generic over any generated module (krang_kernels or one built by
`python -m codegen ... --python`): it needs `regressor`, `params`-style
vectors and REGRESSOR_PARAM_INDEX / REGRESSOR_PARAMS.

    tau = Y(q, dq, ddq) pi                       (the regressor kernel)
    Y W = Y_b K_b,  beta = K_b pi                (base parameters)

Base parameters: numerically (Gautier 1990, "Numerical calculation of the
base inertial parameters of robots"; Khalil and Dombre 2002, sec. 12.4):
the regressor stacked over random states is factored by QR with column
pivoting; its first r pivoted columns are independent and the others are
exact combinations of them, Y_2 = Y_1 K, so that

    Y pi = Y_1 (pi_1 + K pi_2) = Y_1 beta.

K is computed from states with the geometry of `params` (the base
combinations depend on the link lengths); coefficients within 1e-9 of a
small rational are snapped to it. A change of geometry needs a new
BaseParameters (`base_parameters(module, params)` again).

Fitting: ordinary or weighted least squares on the stacked base regressor
with the standard deviations of Gautier and Khalil (1990, sec. 12.5.2),
sigma_beta^2 = diag((W^T W)^-1) ||tau - W beta||^2 / (m - r), and the
condition number of W.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np


@dataclasses.dataclass(frozen=True)
class BaseParameters:
    """beta = K_b pi: `columns` (the independent regressor columns, indices into
    pi, NBASE of them), `combination` (shape (NBASE, NPI), the matrix K_b; each base
    parameter a combination of standard ones, in their units: kg, kg m, kg m^2 about
    the link frame's origin, N m s/rad, N m), `names` readable (REGRESSOR_PARAMS names)."""
    columns: tuple
    combination: np.ndarray
    names: tuple

    @property
    def nbase(self) -> int:
        return len(self.columns)

    def base_params(self, pi):
        """beta of a standard parameter vector pi, shape (NPI,) (regressor_pi), or of
        several, shape (N, NPI): shape (NBASE,) or (N, NBASE)."""
        return np.asarray(pi, float) @ self.combination.T

    def base_regressor(self, Y):
        """Y_b = Y[..., columns] of a regressor Y of shape (..., NPI) (one state's
        (NV, NPI), or stacked): shape (..., NBASE), Y_b beta = Y pi (N m or N)."""
        return np.asarray(Y)[..., list(self.columns)]


def _snap(x, tol=1e-9, max_den=1000):
    f = Fraction(x).limit_denominator(max_den)
    return float(f) if abs(float(f) - x) <= tol * max(1.0, abs(x)) else x


def random_states(ndof, n, rng, scale=(np.pi, 3.0, 5.0)):
    """q, dq, ddq, each of shape (n, ndof), uniform in +-scale (rad, rad/s, rad/s^2 for
    revolute joints; m, m/s, m/s^2 for prismatic ones) from the numpy Generator rng."""
    return tuple(rng.uniform(-s, s, size=(n, ndof)) for s in scale)


def stacked_regressor(module, q, dq, ddq, params):
    """Y of every state, stacked: q, dq, ddq of shape (N, NV) (q: (N, NQ)) or one
    state's (NV,), params shape (N_PARAMS,) -> shape (N * NV, NPI), row i * NV + j
    joint j of state i (units: the regressor kernel's)."""
    Y = module.regressor(np.atleast_2d(q), np.atleast_2d(dq), np.atleast_2d(ddq), params)
    return Y.reshape(-1, Y.shape[-1])


def numerical_rank(A, rtol=None):
    """The rank of matrix A (shape (m, n)): its singular values above rtol (default 1e-9)
    times the largest."""
    s = np.linalg.svd(A, compute_uv=False)
    rtol = 1e-9 if rtol is None else rtol  # exact dependencies leave ~1e-15 relative
    return int(np.sum(s > s[0] * rtol))


def _pivoted_qr(A):
    """Householder QR with column pivoting (Businger-Golub); returns R and the permutation."""
    A = np.array(A, float)
    m, n = A.shape
    perm = np.arange(n)
    norms = np.sum(A * A, axis=0)
    for k in range(min(m, n)):
        j = k + int(np.argmax(norms[k:]))
        A[:, [k, j]], perm[[k, j]], norms[[k, j]] = A[:, [j, k]], perm[[j, k]], norms[[j, k]]
        x = A[k:, k]
        alpha = -np.copysign(np.linalg.norm(x), x[0] if x[0] != 0 else 1.0)
        v = x.copy()
        v[0] -= alpha
        vn = np.linalg.norm(v)
        if vn > 0:
            v /= vn
            A[k:, k:] -= 2.0 * np.outer(v, v @ A[k:, k:])
        norms[k + 1:] = np.sum(A[k + 1:, k + 1:] ** 2, axis=0)
    return np.triu(A[:min(m, n)]), perm


def base_parameters(module, params=None, n_states=None, seed=0) -> BaseParameters:
    """The base parameters of `module` at the geometry of `params` (shape (N_PARAMS,), SI
    units; default: module.default_params()), from the regressor stacked over n_states
    random states (default: enough for 3 NPI rows and more; seed: their numpy seed)."""
    params = module.default_params() if params is None else np.asarray(params, float)
    npi = len(module.REGRESSOR_PARAMS)
    rng = np.random.default_rng(seed)
    n = n_states or max(20, 3 * npi // module.N_DOF + 10)
    W = stacked_regressor(module, *random_states(module.N_DOF, n, rng), params)
    return _base_of(W, module.REGRESSOR_PARAMS)


def _base_of(W, param_names) -> BaseParameters:
    """The base parameters of a stacked regressor W (N, NPI)."""
    npi = W.shape[1]
    # columns scaled to unit norm so that the pivoting ranks directions, not units
    scale = np.linalg.norm(W, axis=0)
    # columns of round-off only (a parameter with no effect: 1e-17 from cancellations) are zero
    live = scale > 1e-10 * np.max(scale)
    Ws = np.where(live, W / np.where(live, scale, 1.0), 0.0)
    R, perm = _pivoted_qr(Ws)
    r = numerical_rank(Ws)
    indep, dep = perm[:r], perm[r:]
    # Y_dep = Y_indep K from the pivoted factor: K = R11^-1 R12 (in scaled units)
    K = np.linalg.solve(R[:r, :r], R[:r, r:]) if r < npi else np.zeros((r, 0))
    order = np.argsort(indep)  # base parameters in p order of their leading column
    indep, K = indep[order], K[order]
    comb = np.zeros((r, npi))
    comb[np.arange(r), indep] = 1.0
    for jj, j in enumerate(dep):
        if not live[j]:
            continue
        for i in range(r):
            comb[i, j] = _snap(K[i, jj] * scale[j] / scale[indep[i]])
    names = tuple(_name(comb[i], param_names) for i in range(r))
    return BaseParameters(tuple(int(i) for i in indep), comb, names)


def _name(row, names):
    terms = []
    for c, n in zip(row, names):
        if c == 0:
            continue
        mag = abs(c)
        coef = "" if mag == 1 else f"{mag:.6g}*"
        terms.append((" - " if c < 0 else " + ") + coef + n)
    s = "".join(terms)
    return s[3:] if s.startswith(" + ") else "-" + s[3:]


def regressor_pi(module, params):
    """pi, shape (NPI,): the regressor's standard parameters taken from a parameter
    vector `params` of shape (N_PARAMS,) (pi[k] = params[REGRESSOR_PARAM_INDEX[k]], same units)."""
    return np.asarray(params, float)[list(module.REGRESSOR_PARAM_INDEX)]


@dataclasses.dataclass(frozen=True)
class Fit:
    """A least-squares fit: beta and std of shape (NBASE,), in the base parameters'
    units; residual_rms in the units of tau (N m or N)."""
    beta: np.ndarray  # estimated base parameters
    std: np.ndarray  # their standard deviations
    condition: float  # condition number of the stacked (weighted) base regressor
    residual_rms: float


def least_squares(W, tau, weights=None) -> Fit:
    """beta minimizing ||diag(weights) (W beta - tau)||, with standard deviations
    (Khalil and Dombre 2002, sec. 12.5.2) and cond(W). W: shape (m, NBASE) (a stacked
    base regressor), tau and weights: m entries (any shape, flattened; tau in N m or N)."""
    W, tau = np.asarray(W, float), np.asarray(tau, float).ravel()
    if weights is not None:
        w = np.asarray(weights, float).ravel()
        W, tau = W * w[:, None], tau * w
    beta, *_ = np.linalg.lstsq(W, tau, rcond=None)
    res = tau - W @ beta
    m, r = W.shape
    sigma2 = res @ res / max(m - r, 1)
    cov = sigma2 * np.linalg.inv(W.T @ W)
    s = np.linalg.svd(W, compute_uv=False)
    return Fit(beta, np.sqrt(np.diag(cov)), float(s[0] / s[-1]), float(np.sqrt(np.mean(res ** 2))))


def identify(module, q, dq, ddq, tau, params=None, base=None, weights=None):
    """(BaseParameters, Fit) from N samples: q of shape (N, NQ), dq and ddq (N, NV) (rad,
    rad/s, rad/s^2; m, m/s, m/s^2 for prismatic joints), tau (N, NV) measured joint
    torques (N m) or forces (N); params shape (N_PARAMS,) gives the geometry (default:
    module.default_params()); base: reuse a BaseParameters; weights: N * NV entries."""
    params = module.default_params() if params is None else np.asarray(params, float)
    base = base or base_parameters(module, params)
    W = base.base_regressor(stacked_regressor(module, q, dq, ddq, params))
    return base, least_squares(W, tau, weights)


def identify_gravity(module, q, tau, params=None, base=None):
    """The gravity-only variant (static poses: tau = Y_g beta_g, Y_g = Y(q, 0, 0)
    without the friction columns, sign(0) = 0): (BaseParameters, Fit) from q of shape
    (N, NQ) (rad, m) and tau of shape (N, NV) (N m, N); params shape (N_PARAMS,)."""
    q = np.atleast_2d(np.asarray(q, float))
    params = module.default_params() if params is None else np.asarray(params, float)
    zero = np.zeros_like(q)
    if base is None:
        rng = np.random.default_rng(0)
        qs = rng.uniform(-np.pi, np.pi, size=(max(40, len(module.REGRESSOR_PARAMS)), module.N_DOF))
        base = _base_of(stacked_regressor(module, qs, 0 * qs, 0 * qs, params), module.REGRESSOR_PARAMS)
    W = base.base_regressor(stacked_regressor(module, q, zero, zero, params))
    return base, least_squares(W, tau)


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


def random_excitation(ndof, lower, upper, t, harmonics=5, omega=2 * np.pi / 10, rng=None, dq_max=None):
    """Random Fourier coefficients scaled so that q stays within [lower, upper]
    (shape (NDOF,) each, rad or m; infinite limits taken as +-pi) and |dq| <= dq_max
    (shape (NDOF,), rad/s or m/s): ((q, dq, ddq), (a, b, q0)), shapes as in
    fourier_trajectory; t: times (s), omega: base frequency (rad/s)."""
    rng = np.random.default_rng(0) if rng is None else rng
    lo = np.where(np.isfinite(lower), lower, -np.pi)
    up = np.where(np.isfinite(upper), upper, np.pi)
    q0 = (lo + up) / 2
    a = rng.normal(size=(ndof, harmonics))
    b = rng.normal(size=(ndof, harmonics))
    q, dq, _ = fourier_trajectory(t, a, b, q0, omega)
    amp = np.max(np.abs(q - q0), axis=0)
    k = 0.9 * ((up - lo) / 2) / np.maximum(amp, 1e-12)
    if dq_max is not None:
        k = np.minimum(k, 0.9 * np.asarray(dq_max) / np.maximum(np.max(np.abs(dq), axis=0), 1e-12))
    a, b = a * k[:, None], b * k[:, None]
    return fourier_trajectory(t, a, b, q0, omega), (a, b, q0)

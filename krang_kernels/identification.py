"""Identification of the dynamic parameters from measured motion (pure numpy).

Generic over any generated module (krang_kernels or one built by
`python -m codegen ... --python`): it needs `regressor`, `params`-style
vectors and REGRESSOR_PARAM_INDEX / REGRESSOR_PARAMS.

    tau = Y(q, dq, ddq) pi                       (the regressor kernel)
    Y W = Y_b K_b,  beta = K_b pi                (base parameters)

Base parameters: numerically (Gautier 1990, "Numerical calculation of the
base inertial parameters of robots"; Khalil and Dombre 2002, sec. 12.4),
by the generator's own procedure (krang_kernels/base_columns.py): the
regressor stacked over random states, its independent columns chosen in
the textbook order, the others exact combinations of them, Y_2 = Y_1 K,

    Y pi = Y_1 (pi_1 + K pi_2) = Y_1 beta.

A generated module carries the base set of its default geometry
(base_regressor, base_params, BASE_PARAM_NAMES); `base_parameters(module,
params)` recomputes it for the geometry of any `params`.

Fitting: ordinary or weighted least squares on the stacked base regressor
with the standard deviations of Gautier and Khalil (1990, sec. 12.5.2),
sigma_beta^2 = diag((W^T W)^-1) ||tau - W beta||^2 / (m - r), and the
condition number of W. Exciting trajectories (random or optimized for that
condition number): krang_kernels.excitation, re-exported here.

The data are checked before any fit (ValueError naming what is wrong): the
shapes (q (N, N_Q), dq, ddq, tau (N, N_DOF), tau also flattened (N * N_DOF,),
so that tau.T is caught unless N = N_DOF), finite values (the first bad row
named), more equations than base parameters, positive finite weights, and
the rank of the stacked base regressor: data that leave directions of beta
unidentifiable (one state repeated, a joint that never moves) are an error
naming the numerical rank, the number of base parameters and the base
parameters most involved, not a fit of arbitrary numbers.
"""
from __future__ import annotations

import dataclasses
import warnings
import numpy as np

from .base_columns import RANK_RTOL, base_of, readable, textbook_order
from .base_columns import numerical_rank  # noqa: F401 - re-exported

# the exciting trajectories live in .excitation; re-exported here, where the workflow is
from .excitation import (Excitation, excitation_condition, fourier_trajectory, optimized_excitation,  # noqa: F401
                         random_excitation)


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


# ---- checks of the data ------------------------------------------------------------

def _array(x, name, where):
    try:
        return np.asarray(x, float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {name} is not an array of numbers ({exc})") from None


def _finite(a, name, where):
    """a, or a ValueError naming its first row (a 1-D array's entry) holding NaN or inf."""
    bad = ~np.isfinite(a)
    if not bad.any():
        return a
    k = int(np.flatnonzero(bad.ravel())[0])
    cols = a.shape[-1] if a.ndim == 2 else 1
    row, col = divmod(k, cols)
    rows = len(np.unique(np.flatnonzero(bad.ravel()) // cols))
    entry = f"{name}[{row}, {col}]" if a.ndim == 2 else f"{name}[{k}]"
    raise ValueError(f"{where}: {name} is not finite in row {row} ({entry} is {a.ravel()[k]}); "
                     f"{rows} row(s) hold NaN or inf: remove or repair them")


def _configurations(module, q, where, single=False):
    """q as a float array of shape (N, N_Q), checked (single: a 1-D q is one state)."""
    nq = getattr(module, "N_Q", module.N_DOF)
    q = _array(q, "q", where)
    if single and q.shape == (nq,):
        q = q[None]
    if q.ndim != 2 or q.shape[1] != nq:
        raise ValueError(f"{where}: q has shape {q.shape}; expected (N, {nq}): N samples of N_Q = {nq} coordinates")
    return _finite(q, "q", where)


def _states(module, q, dq, ddq, where, single=False):
    """q (N, N_Q), dq and ddq (N, N_DOF) as float arrays, checked (single: a 1-D
    q, dq, ddq is one state, N = 1)."""
    q = _configurations(module, q, where, single)
    n, nv = len(q), module.N_DOF
    out = [q]
    for name, x in (("dq", dq), ("ddq", ddq)):
        a = _array(x, name, where)
        if single and a.shape == (nv,):
            a = a[None]
        if a.shape != (n, nv):
            raise ValueError(f"{where}: {name} has shape {a.shape}; expected ({n}, {nv}): as many samples as q "
                             f"({n}), N_DOF = {nv} columns")
        out.append(_finite(a, name, where))
    return out


def _per_sample(x, name, n, nv, where):
    """tau or weights of N samples: shape (N, NV), or (N * NV,) flattened sample by
    sample; returned with shape (N, NV)."""
    a = _array(x, name, where)
    if a.shape == (n, nv) or a.shape == (n * nv,):
        return a.reshape(n, nv)
    hint = f" ({name}.T passed?)" if a.shape == (nv, n) else ""
    raise ValueError(f"{where}: {name} has shape {a.shape}; expected ({n}, {nv}) (N = {n} samples, as q, "
                     f"by N_DOF = {nv} joints) or ({n * nv},) flattened sample by sample{hint}")


def _positive_weights(w, where):
    """w (any shape), or a ValueError naming the first row with a weight <= 0, NaN or inf."""
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        cols = w.shape[-1] if w.ndim == 2 else 1
        row, col = divmod(k, cols)
        entry = f"weights[{row}, {col}]" if w.ndim == 2 else f"weights[{k}]"
        raise ValueError(f"{where}: weights must be positive and finite; row {row} is not ({entry} = "
                         f"{w.ravel()[k]}); leave a row out of the data rather than weighting it 0")
    return w


def _params(module, params, where):
    """params (default: module.default_params()), shape (N_PARAMS,), finite."""
    if params is None:
        return module.default_params()
    p = _array(params, "params", where)
    npar = getattr(module, "N_PARAMS", None) or len(module.default_params())
    if p.shape != (npar,):
        raise ValueError(f"{where}: params has shape {p.shape}; expected ({npar},) (N_PARAMS, PARAM_NAMES order)")
    bad = np.flatnonzero(~np.isfinite(p))
    if len(bad):
        names = getattr(module, "PARAM_NAMES", None)
        label = f" ({names[bad[0]]})" if names is not None else ""
        raise ValueError(f"{where}: params[{bad[0]}]{label} is {p[bad[0]]}: parameters must be finite")
    return p


def _enough_samples(n, nv, nbase, where):
    if n == 0:
        raise ValueError(f"{where}: no samples (q has 0 rows)")
    if n * nv <= nbase:
        raise ValueError(f"{where}: {n} samples give {n * nv} equations ({n} x N_DOF = {nv}), not more than the "
                         f"{nbase} base parameters: need at least {nbase // nv + 1} samples, many more for a "
                         "useful fit")


def _short(name, width=60):
    return name if len(name) <= width else name[:width].rstrip() + " ..."


def _check_rank(W, names, where):
    """ValueError unless W (m, r) has full column rank: names the numerical rank (of W's
    columns scaled to unit norm, so that units do not count; singular values below RANK_RTOL
    times the largest are zero, as for the base set), r and the base parameters with the
    largest weight in the null space (1: not identifiable at all from these data)."""
    m, r = W.shape
    norms = np.sqrt(np.sum(W * W, axis=0))
    Ws = W / np.where(norms > 0, norms, 1.0)
    _, s, vt = np.linalg.svd(np.linalg.qr(Ws, mode="r"))  # R: r x r, W's singular values and right vectors
    rank = int(np.sum(s > s[0] * RANK_RTOL)) if s.size and s[0] > 0 else 0
    if rank == r:
        return
    weight = np.sum(vt[rank:] ** 2, axis=0)  # per base parameter, in [0, 1]; they sum to r - rank
    order = [int(k) for k in np.argsort(-weight, kind="stable") if weight[k] >= 1e-3]
    label = (lambda k: f"beta[{k}]") if names is None else (lambda k: f"beta[{k}] = {_short(names[k])}")
    shown = ", ".join(f"{label(k)} (weight {weight[k]:.2f})" for k in order[:6])
    more = f", and {len(order) - 6} more" if len(order) > 6 else ""
    raise ValueError(
        f"{where}: rank-deficient data: the stacked base regressor ({m} x {r}) has numerical rank {rank}, "
        f"less than the {r} base parameters, so {r - rank} direction(s) of beta are not identifiable from "
        f"these samples (repeated states, joints that never move?); the base parameters with the largest "
        f"weight in those directions: {shown}{more}. Excite every joint with more distinct states "
        "(random_excitation, optimized_excitation)")


# ---- the stacked regressor and the base parameters --------------------------------

def random_states(ndof, n, rng, scale=(np.pi, 3.0, 5.0)):
    """q, dq, ddq, each of shape (n, ndof), uniform in +-scale (rad, rad/s, rad/s^2 for
    revolute joints; m, m/s, m/s^2 for prismatic ones) from the numpy Generator rng."""
    return tuple(rng.uniform(-s, s, size=(n, ndof)) for s in scale)


def stacked_regressor(module, q, dq, ddq, params):
    """Y of every state, stacked: q, dq, ddq of shape (N, NV) (q: (N, NQ)) or one
    state's (NV,), params shape (N_PARAMS,) -> shape (N * NV, NPI), row i * NV + j
    joint j of state i (units: the regressor kernel's). ValueError on a wrong shape or a
    non-finite value."""
    q, dq, ddq = _states(module, q, dq, ddq, "stacked_regressor", single=True)
    params = _params(module, params, "stacked_regressor")
    Y = module.regressor(q, dq, ddq, params)
    return Y.reshape(-1, Y.shape[-1])


def generated_base(module) -> BaseParameters:
    """The base set the generator chose (module.BASE_COLUMNS, base_params,
    BASE_PARAM_NAMES), valid at the geometry of module.default_params(); its
    combination matrix has shape (N_BASE, N_PI)."""
    p0 = module.default_params()
    idx = list(module.REGRESSOR_PARAM_INDEX)
    comb = np.zeros((module.N_BASE, len(idx)))
    for k, i in enumerate(idx):  # K's columns: base_params of unit standard parameters
        e = p0.copy()
        e[idx] = 0.0
        e[i] = 1.0
        comb[:, k] = module.base_params(e)
    return BaseParameters(tuple(module.BASE_COLUMNS), comb, tuple(module.BASE_PARAM_NAMES))


def _default_geometry(module, params) -> bool:
    first = min(module.REGRESSOR_PARAM_INDEX)
    return bool(np.array_equal(np.asarray(params, float)[:first], module.default_params()[:first]))


def base_parameters(module, params=None, n_states=None, seed=0) -> BaseParameters:
    """The base parameters of `module` at the geometry of `params` (shape (N_PARAMS,), SI
    units; default: module.default_params()): the generated set when the geometry is the
    default one and the module has it, else computed here by the generator's procedure
    from the regressor stacked over n_states random states (default: enough for 3 NPI rows
    and more; at least NPI rows: n_states * N_DOF >= NPI; seed: their numpy seed)."""
    params = _params(module, params, "base_parameters")
    if hasattr(module, "N_BASE") and n_states is None and _default_geometry(module, params):
        return generated_base(module)
    npi = len(module.REGRESSOR_PARAMS)
    if n_states is not None:
        if isinstance(n_states, (bool, np.bool_)) or not isinstance(n_states, (int, np.integer)) or n_states < 1:
            raise ValueError(f"base_parameters: n_states must be a positive integer, got {n_states!r}")
        if n_states * module.N_DOF < npi:
            raise ValueError(f"base_parameters: n_states = {n_states} states give {n_states * module.N_DOF} rows "
                             f"for {npi} standard parameters: too few to find the rank; need n_states >= "
                             f"{-(-npi // module.N_DOF)}")
    rng = np.random.default_rng(seed)
    n = n_states or max(20, 3 * npi // module.N_DOF + 10)
    W = stacked_regressor(module, *random_states(module.N_DOF, n, rng), params)
    return _base_of(W, module.REGRESSOR_PARAMS)


def _base_of(W, param_names) -> BaseParameters:
    """The base parameters of a stacked regressor W (N, NPI), columns chosen
    in the generator's textbook order (krang_kernels/base_columns.py)."""
    columns, comb = base_of(W, textbook_order(param_names))
    return BaseParameters(columns, comb, tuple(readable(row, param_names) for row in comb))


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


def least_squares(W, tau, weights=None, names=None) -> Fit:
    """beta minimizing ||diag(weights) (W beta - tau)||, with standard deviations
    (Khalil and Dombre 2002, sec. 12.5.2) and cond(W). W: shape (m, NBASE) (a stacked
    base regressor), tau and weights: m entries (any shape, flattened; tau in N m or N);
    names: the NBASE base parameters' names, for the error on rank-deficient data.
    ValueError unless W and tau are finite, weights positive and finite, m > NBASE and
    W (weighted) has full column rank (the error names the numerical rank)."""
    return _fit(W, tau, weights, names, "least_squares")


def _fit(W, tau, weights, names, where) -> Fit:
    W = _array(W, "W", where)
    if W.ndim != 2:
        raise ValueError(f"{where}: W has shape {W.shape}; expected (m, NBASE), a stacked base regressor")
    m, r = W.shape
    if r == 0:
        raise ValueError(f"{where}: W has no columns (no base parameters to fit)")
    if m <= r:
        raise ValueError(f"{where}: {m} equations, not more than the {r} base parameters (W has shape {W.shape})")
    _finite(W, "W", where)
    tau = _array(tau, "tau", where).ravel()
    if tau.size != m:
        raise ValueError(f"{where}: tau has {tau.size} entries; expected {m}, one per row of W {W.shape}")
    _finite(tau, "tau", where)
    if weights is not None:
        w = _array(weights, "weights", where).ravel()
        if w.size != m:
            raise ValueError(f"{where}: weights has {w.size} entries; expected {m}, one per row of W {W.shape}")
        _positive_weights(w, where)
        W, tau = W * w[:, None], tau * w
    _check_rank(W, names, where)
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
    torques (N m) or forces (N), or flattened (N * NV,) sample by sample; params shape
    (N_PARAMS,) gives the geometry (default: module.default_params()); base: reuse a
    BaseParameters; weights: positive, shape (N, NV) or (N * NV,), one per equation.
    ValueError on bad data (see the module's docstring): wrong shapes (tau.T), NaN or
    inf, too few samples, rank-deficient data."""
    where = "identify"
    q, dq, ddq = _states(module, q, dq, ddq, where)
    n, nv = len(q), module.N_DOF
    tau = _finite(_per_sample(tau, "tau", n, nv, where), "tau", where).ravel()
    if weights is not None:
        weights = _positive_weights(_per_sample(weights, "weights", n, nv, where), where).ravel()
    params = _params(module, params, where)
    base = base or base_parameters(module, params)
    _enough_samples(n, nv, base.nbase, where)
    W = base.base_regressor(stacked_regressor(module, q, dq, ddq, params))
    return base, _fit(W, tau, weights, base.names, where)


def identify_gravity(module, q, tau, params=None, base=None):
    """The gravity-only variant (static poses: tau = Y_g beta_g, Y_g = Y(q, 0, 0)
    without the friction columns, sign(0) = 0): (BaseParameters, Fit) from q of shape
    (N, NQ) (rad, m) and tau of shape (N, NV) (N m, N) or (N * NV,); params shape
    (N_PARAMS,). ValueError on bad data, as identify."""
    where = "identify_gravity"
    q = _configurations(module, q, where)
    n, nv = len(q), module.N_DOF
    tau = _finite(_per_sample(tau, "tau", n, nv, where), "tau", where).ravel()
    params = _params(module, params, where)
    zero = np.zeros((n, nv))
    if base is None:
        rng = np.random.default_rng(0)
        qs = rng.uniform(-np.pi, np.pi, size=(max(40, len(module.REGRESSOR_PARAMS)), module.N_DOF))
        base = _base_of(stacked_regressor(module, qs, 0 * qs, 0 * qs, params), module.REGRESSOR_PARAMS)
    _enough_samples(n, nv, base.nbase, where)
    W = base.base_regressor(stacked_regressor(module, q, zero, zero, params))
    return base, _fit(W, tau, None, base.names, where)


# ---- physically consistent standard parameters -----------------------------------

INERTIAL_KINDS = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")


def pseudo_inertia(m, h, J):
    """The 4 x 4 pseudo-inertia [[Sigma, h], [h^T, m]], Sigma = tr(J)/2 I - J
    (J about the link frame origin, h = m c): the link's parameters are
    physically consistent (a mass density exists, so m >= 0 and the
    principal moments satisfy the triangle inequalities) iff it is positive
    semidefinite (Wensing, Kim and Slotine 2017, "Linear matrix inequalities
    for physically consistent inertial parameter identification"). m in kg,
    h shape (3,) in kg m, J shape (3, 3) in kg m^2; returns shape (4, 4)."""
    J = np.asarray(J, float)
    S = 0.5 * np.trace(J) * np.eye(3) - J
    return np.block([[S, np.reshape(h, (3, 1))], [np.reshape(h, (1, 3)), np.array([[m]])]])


def links_of(param_names):
    """{link key: {kind: index into pi}} of the regressor's columns (`param_names`, shape (N_PI,))."""
    links = {}
    for i, n in enumerate(param_names):
        kind, key = n.split("_", 1)
        links.setdefault(key, {})[kind] = i
    return links


def physically_consistent(base: BaseParameters, fit: Fit, param_names, prior, epsilon=1e-6, weight=1e-4):
    """Standard parameters pi (NPI) whose base parameters reproduce the fit and
    that are physically consistent: every link's pseudo-inertia >= epsilon I
    (LMI, Wensing et al. 2017), Ia, Fv, Fc >= 0. Solved with cvxpy (the
    [identify] extra): minimize ||(K pi - beta) / std||^2 / NBASE + weight
    ||(pi - prior) / max(|prior|, 1e-3)||^2 / NPI, the second term choosing
    among the standard sets with the same base parameters the one nearest the
    prior (e.g. the model's defaults). prior: shape (N_PI,), SI units.
    Returns (pi of shape (N_PI,), max |K pi - beta| / std)."""
    import cvxpy as cp

    npi = len(param_names)
    prior = np.asarray(prior, float)
    pi = cp.Variable(npi)
    cons = []
    for key, idx in links_of(param_names).items():
        if set(INERTIAL_KINDS) <= set(idx):
            v = {k: pi[idx[k]] for k in INERTIAL_KINDS}
            tr = (v["XX"] + v["YY"] + v["ZZ"]) / 2
            P = cp.bmat([[tr - v["XX"], -v["XY"], -v["XZ"], v["MX"]],
                         [-v["XY"], tr - v["YY"], -v["YZ"], v["MY"]],
                         [-v["XZ"], -v["YZ"], tr - v["ZZ"], v["MZ"]],
                         [v["MX"], v["MY"], v["MZ"], v["m"]]])
            cons.append(0.5 * (P + P.T) >> epsilon * np.eye(4))
        cons += [pi[idx[k]] >= 0 for k in ("Ia", "Fv", "Fc") if k in idx]
    std = np.maximum(fit.std, 1e-12 * max(1.0, float(np.max(np.abs(fit.beta)))))
    K = base.combination
    scale = np.maximum(np.abs(prior), 1e-3)
    # both terms O(1) per entry (Clarabel reports inaccurate solutions on badly scaled ones)
    objective = cp.sum_squares(cp.multiply(1 / std, K @ pi - fit.beta)) / len(fit.beta) + \
        weight * cp.sum_squares(cp.multiply(1 / scale, pi - prior)) / npi
    problem = cp.Problem(cp.Minimize(objective), cons)
    with warnings.catch_warnings():
        # "optimal_inaccurate" (Clarabel's AlmostSolved) is common when the fit is itself
        # reachable (objective ~ 0); the result is checked below instead: K pi against beta
        warnings.filterwarnings("ignore", "Solution may be inaccurate")
        problem.solve(solver=cp.CLARABEL if "CLARABEL" in cp.installed_solvers() else cp.SCS)
    if pi.value is None or problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"physically consistent fit: solver status {problem.status}")
    out = np.asarray(pi.value, float)
    return out, float(np.max(np.abs(K @ out - fit.beta) / std))

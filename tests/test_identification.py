"""krang_kernels.identification: base parameters, least squares, on compiled kernels.

The planar 2R arm's base set is compared with the grouped set derived by
hand (Khalil and Dombre 2002, sec. 12.4.2 rules for parallel revolute axes,
with the tool frame "3" welded at l2 along x_2 grouped by the parallel-axis
theorem): the two sets must span the same row space of the standard
parameters, whatever columns the pivoting chose.
"""
from __future__ import annotations

import numpy as np
import pytest

from codegen.emit.abi import regressor_columns
from krang_kernels import identification as ident
from reference.ctrl_cases import library, param_sets

pytestmark = pytest.mark.builds


class _Module:
    """The module interface identification needs, over a ctypes Library."""

    def __init__(self, lib, p):
        self.lib, self.p = lib, p
        self.N_DOF = lib.model.ndof
        self.REGRESSOR_PARAM_INDEX = regressor_columns(lib.model)
        self.REGRESSOR_PARAMS = tuple(lib.model.param_names[i] for i in self.REGRESSOR_PARAM_INDEX)

    def default_params(self):
        return self.p.copy()

    def regressor(self, q, dq, ddq, params=None):
        p = self.p if params is None else params
        return np.array([self.lib.regressor(*s, p) for s in zip(q, dq, ddq)])


def _rank(A):
    return ident.numerical_rank(np.asarray(A, float), rtol=1e-9)


@pytest.mark.parametrize("name", ["planar2r", "pr", "tree"])
def test_base_regressor_times_base_params_is_inverse_dynamics(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    sets = param_sets(name, n_random=3)
    p0 = sets[-1][1]
    mod = _Module(lib, p0)
    base = ident.base_parameters(mod)
    q, dq, ddq = ident.random_states(mod.N_DOF, 30, np.random.default_rng(5))
    W = ident.stacked_regressor(mod, q, dq, ddq, p0)
    assert base.nbase == ident.numerical_rank(W)
    Wb = base.base_regressor(W)
    assert ident.numerical_rank(Wb) == base.nbase  # full column rank
    first = regressor_columns(lib.model)[0]
    for _, p in sets:
        p = p.copy()
        p[:first] = p0[:first]  # the base set is that of p0's geometry
        tau = np.concatenate([lib.inverse_dynamics(*s, p) for s in zip(q, dq, ddq)])
        got = Wb @ base.base_params(ident.regressor_pi(mod, p))
        assert np.max(np.abs(got - tau)) <= 1e-10 * (1 + np.max(np.abs(tau)))


def test_planar2r_textbook_base_set(tmp_path_factory):
    lib = library("planar2r", tmp_path_factory)
    model = lib.model
    (_, p), = param_sets("planar2r", n_random=1)[-1:]
    mod = _Module(lib, p)
    l1, l2 = p[model.param_names.index("l1")], p[model.param_names.index("l2")]
    names = mod.REGRESSOR_PARAMS
    col = {n: k for k, n in enumerate(names)}
    # hand-derived grouped set (gravity in the plane, all axes along z)
    expected = [
        {"ZZ_1": 1, "Ia_1": 1, "m_2": l1 ** 2, "m_3": l1 ** 2},
        {"MX_1": 1, "m_2": l1, "m_3": l1},
        {"MY_1": 1},
        {"ZZ_2": 1, "ZZ_3": 1, "MX_3": 2 * l2, "m_3": l2 ** 2},
        {"MX_2": 1, "MX_3": 1, "m_3": l2},
        {"MY_2": 1, "MY_3": 1},
        {"Ia_2": 1}, {"Fv_1": 1}, {"Fc_1": 1}, {"Fv_2": 1}, {"Fc_2": 1},
    ]
    K = np.zeros((len(expected), len(names)))
    for i, row in enumerate(expected):
        for n, c in row.items():
            K[i, col[n]] = c
    base = ident.base_parameters(mod)
    assert base.nbase == len(expected)
    assert _rank(K) == len(expected)
    assert _rank(np.vstack([K, base.combination])) == len(expected)  # same row space
    print("\nplanar2r base parameters:\n  " + "\n  ".join(base.names))


def _excited(lib, p_true, rng, n):
    """q, dq, ddq of a random Fourier excitation over 10 s (n samples) and the torques of p_true."""
    ndof = lib.model.ndof
    lim = np.full(ndof, np.pi)
    (q, dq, ddq), _ = ident.random_excitation(ndof, -lim, lim, np.linspace(0, 10, n), rng=rng)
    return q, dq, ddq, np.concatenate([lib.inverse_dynamics(*s, p_true) for s in zip(q, dq, ddq)])


def test_least_squares_recovers_base_params(tmp_path_factory):
    lib = library("planar2r", tmp_path_factory)
    sets = param_sets("planar2r", n_random=2)
    p_true = sets[-1][1].copy()
    p_guess = sets[-2][1].copy()
    first = regressor_columns(lib.model)[0]
    p_guess[:first] = p_true[:first]
    mod = _Module(lib, p_guess)
    rng = np.random.default_rng(11)
    q, dq, ddq, tau = _excited(lib, p_true, rng, 200)
    noise = 1e-3
    base, fit = ident.identify(mod, q, dq, ddq, tau + rng.normal(scale=noise, size=tau.shape))
    beta_true = base.base_params(ident.regressor_pi(mod, p_true))
    assert np.all(np.abs(fit.beta - beta_true) <= 5 * fit.std + 1e-9)  # within 5 sigma
    assert 0.5 * noise < fit.residual_rms < 2 * noise
    assert np.isfinite(fit.condition) and fit.condition >= 1
    # gravity-only: static poses
    qs = rng.uniform(-np.pi, np.pi, size=(30, mod.N_DOF))
    taus = np.concatenate([lib.inverse_dynamics(s, 0 * s, 0 * s, p_true) for s in qs])
    gbase, gfit = ident.identify_gravity(mod, qs, taus)
    assert np.allclose(gfit.beta, gbase.base_params(ident.regressor_pi(mod, p_true)), atol=1e-9)
    assert gbase.nbase == 4  # MX_1 + l1 (m_2 + m_3), MY_1, MX_2 + MX_3 + l2 m_3, MY_2 + MY_3


def test_optimized_excitation_lowers_the_condition_number(tmp_path_factory):
    """The optimized Fourier excitation stays within the joint and velocity limits,
    is the Fourier series of its coefficients, reports the condition number of its
    stacked base regressor (recomputed here from the C regressor), and improves on
    its random start and on random excitations of the same size."""
    lib = library("tree", tmp_path_factory)
    p0 = param_sets("tree", n_random=1)[-1][1]
    mod = _Module(lib, p0)
    ndof = mod.N_DOF
    lower, upper, dq_max = np.full(ndof, -2.0), np.full(ndof, 1.5), np.full(ndof, 3.0)
    t, omega = np.linspace(0, 10, 60), 2 * np.pi / 10
    ex = ident.optimized_excitation(mod, lower, upper, t, harmonics=3, omega=omega, dq_max=dq_max,
                                    candidates=4, iterations=40, rng=np.random.default_rng(3))
    q, dq, ddq = ident.fourier_trajectory(t, ex.a, ex.b, ex.q0, ex.omega)
    assert np.array_equal(q, ex.q) and np.array_equal(dq, ex.dq) and np.array_equal(ddq, ex.ddq)
    assert np.all((lower <= q) & (q <= upper)) and np.all(np.abs(dq) <= dq_max)
    base = ident.base_parameters(mod)

    def cond(q, dq, ddq):
        return np.linalg.cond(base.base_regressor(np.concatenate([lib.regressor(*s, p0) for s in zip(q, dq, ddq)])))

    assert ex.condition == pytest.approx(cond(q, dq, ddq), rel=1e-6)
    assert ex.condition < ex.start_condition
    random = [cond(*ident.random_excitation(ndof, lower, upper, t, harmonics=3, omega=omega, dq_max=dq_max,
                                            rng=np.random.default_rng(seed))[0]) for seed in range(5)]
    assert ex.condition < np.median(random)
    with pytest.raises(ValueError, match="fixed-base"):
        floating = _Module(lib, p0)
        floating.N_Q = ndof + 1
        ident.optimized_excitation(floating, lower, upper, t)


def test_physically_consistent_standard_parameters(tmp_path_factory):
    """From a noisy fit, the LMI solution (Wensing et al. 2017) has every
    link's pseudo-inertia positive semidefinite and non-negative Ia, Fv, Fc,
    and its base parameters reproduce the fit within its standard
    deviations, even from a prior with negative masses and inertias."""
    pytest.importorskip("cvxpy")
    lib = library("planar2r", tmp_path_factory)
    sets = param_sets("planar2r", n_random=2)
    p_true = sets[-1][1].copy()
    mod = _Module(lib, p_true)
    rng = np.random.default_rng(3)
    q, dq, ddq, tau = _excited(lib, p_true, rng, 300)
    base, fit = ident.identify(mod, q, dq, ddq, tau + rng.normal(scale=1e-3, size=tau.shape))
    names = mod.REGRESSOR_PARAMS
    prior = -np.abs(ident.regressor_pi(mod, p_true))  # unphysical: every mass and inertia negative
    pi, dev = ident.physically_consistent(base, fit, names, prior)
    for key, idx in ident.links_of(names).items():
        v = {k: pi[i] for k, i in idx.items()}
        if "m" in v:
            J = np.array([[v["XX"], v["XY"], v["XZ"]], [v["XY"], v["YY"], v["YZ"]], [v["XZ"], v["YZ"], v["ZZ"]]])
            P = ident.pseudo_inertia(v["m"], [v["MX"], v["MY"], v["MZ"]], J)
            assert np.min(np.linalg.eigvalsh(P)) >= -1e-8, key
            # the triangle inequalities of the principal moments about the centre of mass
            c = np.array([v["MX"], v["MY"], v["MZ"]]) / v["m"]
            Jc = J - v["m"] * (c @ c * np.eye(3) - np.outer(c, c))
            e = np.sort(np.linalg.eigvalsh(Jc))
            assert e[0] + e[1] >= e[2] - 1e-6, key
        for k in ("Ia", "Fv", "Fc"):
            if k in v:
                assert v[k] >= -1e-8, (key, k)
    assert dev < 3, dev  # K pi within 3 standard deviations of the fit
    assert np.all(np.abs(base.base_params(pi) - fit.beta) <= 3 * fit.std + 1e-9)


def test_identify_command_on_krang(tmp_path):
    """python -m krang_kernels.identify on simulated Krang samples (no noise):
    the estimate equals base_params(p_true) of the compiled module, whose
    base set the command uses."""
    kk = pytest.importorskip("krang_kernels")
    from krang_kernels import identify

    rng = np.random.default_rng(4)
    p_true = kk.default_params()
    idx = list(kk.REGRESSOR_PARAM_INDEX)
    p_true[idx] *= rng.uniform(0.8, 1.2, size=len(idx))  # scaled: still physically consistent
    n = 3 * kk.N_PI // kk.N_DOF + 20
    q, dq, ddq = (rng.uniform(-s, s, size=(n, kk.N_DOF)) for s in (np.pi, 2.0, 4.0))
    tau = kk.inverse_dynamics(q, dq, ddq, p_true)
    np.savez(tmp_path / "samples.npz", q=q, v=dq, a=ddq, tau=tau)
    assert identify.main([str(tmp_path / "samples.npz"), "--out", str(tmp_path / "est.npz")]) == 0
    est = np.load(tmp_path / "est.npz")
    beta = kk.base_params(p_true)
    assert est["beta"].shape == (kk.N_BASE,) and list(est["names"]) == list(kk.BASE_PARAM_NAMES)
    assert np.max(np.abs(est["beta"] - beta)) <= 1e-8 * (1 + np.max(np.abs(beta)))
    assert np.isfinite(est["condition"]) and est["condition"] >= 1

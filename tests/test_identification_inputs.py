"""krang_kernels.identification and .excitation reject bad data with a ValueError that
says what is wrong, instead of fitting it silently or failing deep inside numpy
("Singular matrix", a broadcasting error, NaN results).

Module under test: the built-in Krang module (17 DOF, 160 base parameters).

* identify, identify_gravity, least_squares, stacked_regressor, base_parameters:
  shapes (tau.T passed by mistake), finite values (the first bad row named), enough
  equations for the base parameters, the rank of the stacked base regressor (a
  repeated state, a joint that never moves: the numerical rank, the number of base
  parameters and the unidentifiable base parameters named), positive finite weights;
* fourier_trajectory, random_excitation, optimized_excitation: the base frequency,
  the number of harmonics, the sampling times, the limits and dq_max.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import krang_kernels as kk
from krang_kernels import identification as ident

pytestmark = pytest.mark.module

NDOF, NBASE = kk.N_DOF, kk.N_BASE
LIM = np.full(NDOF, 1.5)
T = np.linspace(0, 10, 30)


@pytest.fixture(scope="module")
def data():
    """q, dq, ddq (N, 17) of N random states, tau (N, 17) of the default parameters, the generated base set."""
    rng = np.random.default_rng(8)
    n = 3 * kk.N_PI // NDOF + 20
    q, dq, ddq = (rng.uniform(-s, s, size=(n, NDOF)) for s in (np.pi, 2.0, 4.0))
    return q, dq, ddq, kk.inverse_dynamics(q, dq, ddq), ident.base_parameters(kk)


def test_good_data_fits(data):
    """The reference case the others spoil: exact torques give the default base parameters."""
    q, dq, ddq, tau, base = data
    _, fit = ident.identify(kk, q, dq, ddq, tau, base=base)
    assert np.allclose(fit.beta, kk.base_params(kk.default_params()), atol=1e-8)
    _, fit = ident.identify(kk, q, dq, ddq, tau.ravel(), base=base, weights=np.ones(tau.size))  # flat tau, weights
    assert np.allclose(fit.beta, kk.base_params(kk.default_params()), atol=1e-8)


# ---- shapes ----------------------------------------------------------------------

def test_transposed_tau_names_expected_and_received_shapes(data):
    q, dq, ddq, tau, base = data
    n = len(q)
    with pytest.raises(ValueError, match=re.escape(f"({NDOF}, {n})")) as e:
        ident.identify(kk, q, dq, ddq, tau.T, base=base)
    assert f"({n}, {NDOF})" in str(e.value) and "tau" in str(e.value)


def test_tau_with_a_row_missing(data):
    q, dq, ddq, tau, base = data
    with pytest.raises(ValueError, match=r"tau.*\(%d, %d\)" % (len(q) - 1, NDOF)):
        ident.identify(kk, q, dq, ddq, tau[:-1], base=base)


def test_dq_with_fewer_rows_than_q(data):
    q, dq, ddq, tau, base = data
    with pytest.raises(ValueError, match=r"dq.*\(%d, %d\)" % (len(q) - 2, NDOF)):
        ident.identify(kk, q, dq[:-2], ddq, tau, base=base)


def test_weights_of_the_wrong_shape(data):
    q, dq, ddq, tau, base = data
    with pytest.raises(ValueError, match=r"weights.*\(%d,\)" % len(q)):
        ident.identify(kk, q, dq, ddq, tau, base=base, weights=np.ones(len(q)))  # one per sample, not per row


def test_identify_gravity_transposed_tau(data):
    q, _, _, _, _ = data
    tau = kk.compute_Q(q)
    with pytest.raises(ValueError, match=re.escape(f"({NDOF}, {len(q)})")):
        ident.identify_gravity(kk, q, tau.T)


def test_least_squares_tau_of_the_wrong_size(data):
    q, dq, ddq, tau, base = data
    W = base.base_regressor(ident.stacked_regressor(kk, q, dq, ddq, kk.default_params()))
    with pytest.raises(ValueError, match=r"tau.*%d" % W.shape[0]):
        ident.least_squares(W, tau[:-1])


# ---- finite values ---------------------------------------------------------------

def test_nan_row_in_tau_is_named(data):
    q, dq, ddq, tau, base = data
    tau = tau.copy()
    tau[7, 3] = np.nan
    with pytest.raises(ValueError, match=r"tau.*row 7"):
        ident.identify(kk, q, dq, ddq, tau, base=base)


def test_inf_in_flattened_tau_names_its_sample(data):
    q, dq, ddq, tau, base = data
    flat = tau.ravel().copy()
    flat[5 * NDOF + 2] = np.inf  # sample 5, joint 2
    with pytest.raises(ValueError, match=r"tau.*row 5.*inf"):
        ident.identify(kk, q, dq, ddq, flat, base=base)


def test_nan_in_q_is_named(data):
    q, dq, ddq, tau, base = data
    q = q.copy()
    q[11, 0] = np.nan
    with pytest.raises(ValueError, match=r"q.*\b11\b"):
        ident.identify(kk, q, dq, ddq, tau, base=base)


def test_nan_in_least_squares_regressor():
    W = np.random.default_rng(0).normal(size=(20, 3))
    W[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"W.*row 4"):
        ident.least_squares(W, np.ones(20))


# ---- enough data, rank -----------------------------------------------------------

def test_empty_data(data):
    *_, base = data
    empty = np.zeros((0, NDOF))
    with pytest.raises(ValueError, match="no samples"):
        ident.identify(kk, empty, empty, empty, empty, base=base)


def test_too_few_samples_for_the_base_parameters(data):
    q, dq, ddq, tau, base = data
    with pytest.raises(ValueError, match=r"%d equations.*%d base parameters" % (5 * NDOF, NBASE)):
        ident.identify(kk, q[:5], dq[:5], ddq[:5], tau[:5], base=base)


def test_repeated_state_names_the_rank(data):
    """One state repeated: as many equations as needed, but rank NDOF: the error names the
    numerical rank, the number of base parameters and unidentifiable base parameters."""
    q, dq, ddq, tau, base = data
    n = len(q)
    rep = [np.repeat(x[:1], n, axis=0) for x in (q, dq, ddq, tau)]
    with pytest.raises(ValueError, match=r"rank %d\b.*%d base parameters" % (NDOF, NBASE)) as e:
        ident.identify(kk, *rep, base=base)
    assert "Singular matrix" not in str(e.value)
    assert any(name[:40] in str(e.value) for name in kk.BASE_PARAM_NAMES)


def test_joint_at_rest_names_its_friction_parameters(data):
    """dq of one joint always 0: its viscous and Coulomb friction cannot be identified
    (their columns dq and sign(dq) vanish); the error names exactly them."""
    q, dq, ddq, _, base = data
    dq = dq.copy()
    dq[:, 5] = 0.0
    tau = kk.inverse_dynamics(q, dq, ddq)
    dead = np.flatnonzero(np.all(kk.base_regressor(q, dq, ddq) == 0, axis=(0, 1)))
    names = [kk.BASE_PARAM_NAMES[i] for i in dead]
    assert len(names) == 2 and {n[:3] for n in names} == {"Fv_", "Fc_"}, names
    with pytest.raises(ValueError, match=r"rank %d\b.*%d base parameters" % (NBASE - 2, NBASE)) as e:
        ident.identify(kk, q, dq, ddq, tau, base=base)
    for name in names:
        assert re.search(rf"\b{re.escape(name)}\b", str(e.value)), (name, str(e.value))


def test_static_data_is_not_exciting(data):
    """Every state at rest at q = 0: a clear rank error, not numpy's "Singular matrix"."""
    q, *_, base = data
    zero = np.zeros_like(q)
    with pytest.raises(ValueError, match=r"rank \d+.*%d base parameters" % NBASE) as e:
        ident.identify(kk, zero, zero, zero, kk.inverse_dynamics(zero, zero, zero), base=base)
    assert "Singular matrix" not in str(e.value)


def test_base_parameters_needs_enough_states():
    with pytest.raises(ValueError, match="n_states"):
        ident.base_parameters(kk, n_states=1)
    with pytest.raises(ValueError, match="n_states"):
        ident.base_parameters(kk, n_states=0)


def test_params_of_the_wrong_length(data):
    q, dq, ddq, tau, base = data
    with pytest.raises(ValueError, match=r"params.*\(%d,\)" % kk.N_PARAMS):
        ident.stacked_regressor(kk, q, dq, ddq, kk.default_params()[:-1])


# ---- weights ---------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_weights_positive_and_finite(data, bad):
    q, dq, ddq, tau, base = data
    w = np.ones(tau.shape)
    w[3, 4] = bad
    with pytest.raises(ValueError, match=r"weights.*positive.*row 3"):
        ident.identify(kk, q, dq, ddq, tau, base=base, weights=w)


# ---- excitation ------------------------------------------------------------------

@pytest.mark.parametrize("omega", [0.0, -1.0, np.nan, np.inf])
def test_omega_positive_and_finite(omega):
    with pytest.raises(ValueError, match="omega"):
        ident.random_excitation(NDOF, -LIM, LIM, T, omega=omega)
    with pytest.raises(ValueError, match="omega"):
        ident.fourier_trajectory(T, np.ones((NDOF, 2)), np.ones((NDOF, 2)), np.zeros(NDOF), omega)
    with pytest.raises(ValueError, match="omega"):
        ident.optimized_excitation(kk, -LIM, LIM, T, omega=omega, candidates=1, iterations=0)


@pytest.mark.parametrize("harmonics", [0, -2, 2.5, True])
def test_harmonics_a_positive_integer(harmonics):
    with pytest.raises(ValueError, match="harmonics"):
        ident.random_excitation(NDOF, -LIM, LIM, T, harmonics=harmonics)


@pytest.mark.parametrize("t", [np.array([]), np.array([1.0]), np.full(5, 2.0), np.array([0, 1, np.nan]),
                               np.zeros((3, 2))])
def test_sampling_times(t):
    """At least two finite times spanning a positive duration, one-dimensional."""
    with pytest.raises(ValueError, match=r"\bt\b"):
        ident.random_excitation(NDOF, -LIM, LIM, t)


def test_nan_bound_lower_above_upper():
    """NaN or infinite limits mean "none" (JOINT_LIMITS' convention, taken as +-pi),
    but a NaN lower limit with an upper one below -pi leaves an empty range."""
    lower, upper = np.full(NDOF, np.nan), LIM.copy()
    (q, _, _), _ = ident.random_excitation(NDOF, lower, upper, T)  # documented: -pi
    assert np.all((-np.pi <= q) & (q <= LIM))
    upper[4] = -4.0
    with pytest.raises(ValueError, match=r"joint 4"):
        ident.random_excitation(NDOF, lower, upper, T)


def test_lower_above_upper():
    lower = -LIM.copy()
    lower[2] = 2.0
    with pytest.raises(ValueError, match=r"lower.*upper.*joint 2"):
        ident.random_excitation(NDOF, lower, LIM, T)


def test_bounds_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"lower.*\(%d,\).*\(%d,\)" % (NDOF - 1, NDOF)):
        ident.random_excitation(NDOF, -LIM[:-1], LIM, T)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan])
def test_dq_max_positive(bad):
    dq_max = np.full(NDOF, 2.0)
    dq_max[6] = bad
    with pytest.raises(ValueError, match=r"dq_max.*joint 6"):
        ident.random_excitation(NDOF, -LIM, LIM, T, dq_max=dq_max)


@pytest.mark.parametrize("ndof", [0, -3, 2.0])
def test_ndof_a_positive_integer(ndof):
    with pytest.raises(ValueError, match="ndof"):
        ident.random_excitation(ndof, -1.0, 1.0, T)


def test_fourier_coefficients_shapes():
    a = np.ones((NDOF, 3))
    with pytest.raises(ValueError, match=r"b.*\(%d, 2\).*\(%d, 3\)" % (NDOF, NDOF)):
        ident.fourier_trajectory(T, a, np.ones((NDOF, 2)), np.zeros(NDOF), 1.0)
    with pytest.raises(ValueError, match=r"q0.*\(%d,\)" % (NDOF - 1)):
        ident.fourier_trajectory(T, a, a, np.zeros(NDOF - 1), 1.0)


@pytest.mark.parametrize("candidates, iterations, bad", [(0, 0, "candidates"), (1.5, 0, "candidates"),
                                                        (1, -1, "iterations")])
def test_optimizer_counts(candidates, iterations, bad):
    with pytest.raises(ValueError, match=bad):
        ident.optimized_excitation(kk, -LIM, LIM, T, candidates=candidates, iterations=iterations)

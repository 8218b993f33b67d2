"""krang_kernels.jax's contact functions (docs/jax.md, docs/contact-dynamics.md) on Solo12 with its
four point feet (the build tests/test_contact_dynamics.py uses, from the module cache): values equal
the module's, constrained_dynamics and impulse_dynamics equal Pinocchio's constraintDynamics and
impulseDynamics, jacfwd/jacrev equal constrained_dynamics_derivatives, impulse_dynamics_derivatives and
central differences (also in the parameters), derivatives without a rule are refused, jit and vmap with a traced contact mask (a
gait schedule), grad of a rollout against central differences.
Skipped without JAX."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")

SOLO = "solo_description/robots/solo12.urdf"
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
EXACT = 1e-14


def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.abs(b).max()))
    assert float(np.abs(a - b).max()) <= tol * scale, float(np.abs(a - b).max()) / scale


@pytest.fixture(scope="module")
def solo():
    import codegen
    import krang_kernels.jax as kj
    from codegen.read.urdf import load_urdf
    from reference.robot_data import robots_dir
    kk = codegen.import_urdf(robots_dir() / SOLO, floating_base=True, contacts=list(FEET), quiet=True)
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    return kk, kj.wrap(kk), model


def _state(rng):
    q = rng.uniform(-1.0, 1.0, 19)
    q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.standard_normal(18), rng.standard_normal(18) * 3, rng.uniform(-0.5, 0.5, 12)


def test_values_equal_the_module(solo):
    kk, r, _ = solo
    q, v, tau, ref = _state(np.random.default_rng(1))
    for mask in (0b1111, 0b0110, 0):
        close(r.contact_jacobian(q, mask), kk.contact_jacobian(q, mask), EXACT)
        close(r.contact_drift(q, v, mask), kk.contact_drift(q, v, mask), EXACT)
        for got, want in zip(r.constrained_dynamics(q, v, tau, mask, 20.0, 3.0, ref=ref),
                             kk.constrained_dynamics(q, v, tau, mask, 20.0, 3.0, ref=ref)):
            close(got, want, EXACT)
        for got, want in zip(r.constrained_dynamics_derivatives(q, v, tau, mask, 20.0, 3.0, ref=ref),
                             kk.constrained_dynamics_derivatives(q, v, tau, mask, 20.0, 3.0, ref=ref)):
            close(got, want, EXACT)
        for got, want in zip(r.impulse_dynamics(q, v, mask, 0.4), kk.impulse_dynamics(q, v, mask, restitution=0.4)):
            close(got, want, EXACT)
        for got, want in zip(r.impulse_dynamics_derivatives(q, v, mask, 0.4),
                             kk.impulse_dynamics_derivatives(q, v, mask, restitution=0.4)):
            close(got, want, EXACT)
    # masks as names and flags; damping
    close(r.constrained_dynamics(q, v, tau, ["FL_FOOT", "HL_FOOT"])[0], kk.constrained_dynamics(q, v, tau, 0b0101)[0],
          EXACT)
    close(r.constrained_dynamics(q, v, tau, [1, 1, 0, 1], mu=1e-6)[1],
          kk.constrained_dynamics(q, v, tau, 0b1011, mu=1e-6)[1], EXACT)


def test_against_pinocchio(solo):
    from reference.pin_reference import build_pin_model
    from tests.test_contact_dynamics import _constraints
    kk, r, model = solo
    pm, frames = build_pin_model(model, kk.default_params())
    data = pm.createData()
    rng = np.random.default_rng(2)
    q, v, tau, ref = _state(rng)
    placements = [pin.SE3(np.eye(3), ref[3 * k:3 * k + 3]) for k in range(4)]
    for mask in (0b1111, 0b1001, 0b0010):
        m = 3 * bin(mask).count("1")
        cms, cds = _constraints(pm, frames, model, mask, 30.0, 4.0, placements)
        pin.initConstraintDynamics(pm, data, cms, cds)
        a = pin.constraintDynamics(pm, data, q, v, tau, cms, cds)
        ddq, lam = jax.jit(r.constrained_dynamics, static_argnums=3)(q, v, tau, mask, 30.0, 4.0, 0.0, ref)
        close(ddq, a, 1e-10)
        close(lam[:m], data.lambda_c, 1e-10)
        pin.computeConstraintDynamicsDerivatives(pm, data, cms, cds)
        J = jax.jacfwd(lambda x: r.constrained_dynamics(q, x, tau, mask, 30.0, 4.0, ref=ref))(v)
        close(J[0], data.ddq_dv, 1e-10)
        close(J[1][:m], data.dlambda_dv, 1e-10)
        cms, cds = _constraints(pm, frames, model, mask)
        pin.initConstraintDynamics(pm, data, cms, cds)
        vp = pin.impulseDynamics(pm, data, q, v, cms, cds, 0.4)
        v_plus, imp = r.impulse_dynamics(q, v, mask, 0.4)
        close(v_plus, vp, 1e-10)
        close(imp[:m], data.impulse_c, 1e-10)
        pin.computeImpulseDynamicsDerivatives(pm, data, cms, cds, 0.4)
        (vq, vv), (iq, iv) = jax.jacfwd(lambda x, y: r.impulse_dynamics(x, y, mask, 0.4), argnums=(0, 1))(q, v)
        close(vv - np.eye(18), data.ddq_dv, 1e-10)  # Pinocchio's: the jump's
        close(iv[:m], data.dlambda_dv, 1e-10)
        close(vq[:, 7:], data.ddq_dq[:, 6:], 1e-10)  # the joints' columns (q's base: the tangent map)
        close(iq[:m, 7:], data.dlambda_dq[:, 6:], 1e-10)


def _central(f, x, h=1e-6):
    return np.stack([(np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h) for e in np.eye(len(x))], -1)


def test_jacobians_equal_the_kernel_and_central_differences(solo):
    """d (ddq, lambda) / d (q, v, tau) by jacfwd and jacrev: the kernel's blocks (q mapped to the N_Q
    coordinates, the joints' columns the kernel's) and central differences, with Baumgarte gains."""
    kk, r, _ = solo
    q, v, tau, ref = _state(np.random.default_rng(3))
    mask = 0b1011

    def f(q_, v_, t_):
        return jnp.concatenate(r.constrained_dynamics(q_, v_, t_, mask, 20.0, 3.0, ref=ref))

    def g(q_, v_, t_):
        return np.concatenate(kk.constrained_dynamics(q_, v_, t_, mask, 20.0, 3.0, ref=ref))
    D = kk.constrained_dynamics_derivatives(q, v, tau, mask, 20.0, 3.0, ref=ref)
    for jac in (jax.jacfwd, jax.jacrev):
        Jq, Jv, Jt = jac(f, argnums=(0, 1, 2))(q, v, tau)
        close(Jv, np.vstack([D[1], D[4]]), 1e-13)
        close(Jt, np.vstack([D[2], D[5]]), 1e-13)
        close(Jq[:, 7:], np.vstack([D[0], D[3]])[:, 6:], 1e-13)
        close(Jq, _central(lambda x: g(x, v, tau), q), 1e-6)
        close(Jv, _central(lambda x: g(q, x, tau), v), 1e-6)
    # the impact: d (v_plus, impulse) / d (q, v) by impulse_dynamics_derivatives
    D = kk.impulse_dynamics_derivatives(q, v, mask, restitution=0.3)

    def h(q_, v_):
        return jnp.concatenate(r.impulse_dynamics(q_, v_, mask, 0.3))

    def k(q_, v_):
        return np.concatenate(kk.impulse_dynamics(q_, v_, mask, restitution=0.3))
    for jac in (jax.jacfwd, jax.jacrev):
        Jq, Jv = jac(h, argnums=(0, 1))(q, v)
        close(Jv, np.vstack([D[1], D[3]]), 1e-13)
        close(Jq[:, 7:], np.vstack([D[0], D[2]])[:, 6:], 1e-13)
        close(Jq, _central(lambda x: k(x, v), q), 1e-6)
        close(Jv, _central(lambda x: k(q, x), v), 1e-7)


def test_parameter_jacobian_equals_central_differences(solo):
    """d (ddq, lambda) / dp by jacfwd and jacrev (the regressor through d/dtau, g by central differences)
    against central differences of the module over every parameter, with Baumgarte gains; with
    differentiate_geometry=False the columns outside the regressor's (g) are zero, the others the same."""
    import krang_kernels.jax as kj
    kk, r, _ = solo
    q, v, tau, ref = _state(np.random.default_rng(9))
    p, mask = kk.default_params(), 0b0111

    def f(robot):
        return lambda p_: jnp.concatenate(robot.constrained_dynamics(q, v, tau, mask, 20.0, 3.0, ref=ref, p=p_))

    def g(p_):
        return np.concatenate(kk.constrained_dynamics(q, v, tau, mask, 20.0, 3.0, ref=ref, params=p_))
    # a step relative to each parameter, at least 1e-7 (ddq goes as 1/inertia, so a fixed step is too
    # coarse for a light link's; a zero friction's or rotor inertia's needs one above rounding), each
    # column compared on its own scale
    h = 1e-4 * np.maximum(np.abs(p), 1e-3)
    want = np.stack([(g(p + hk * e) - g(p - hk * e)) / (2 * hk) for hk, e in zip(h, np.eye(len(p)))], -1)

    def columns_close(got):
        got = np.asarray(got)
        for k in range(len(p)):
            close(got[:, k], want[:, k], 1e-6)
    for jac in (jax.jacfwd, jax.jacrev):
        columns_close(jac(f(r))(p))
    plain = np.asarray(jax.jacfwd(f(kj.wrap(kk, differentiate_geometry=False)))(p))
    assert len(r.other_index) and not plain[:, r.other_index].any()
    columns_close(np.where(np.isin(np.arange(len(p)), r.other_index), want, plain))


def test_derivatives_without_a_rule_are_refused(solo):
    kk, r, _ = solo
    q, v, tau, ref = _state(np.random.default_rng(4))
    with pytest.raises(NotImplementedError, match="kp"):
        jax.grad(lambda k: r.constrained_dynamics(q, v, tau, 0b1111, k, 3.0, ref=ref)[0].sum())(20.0)
    with pytest.raises(NotImplementedError, match="ref"):
        jax.grad(lambda x: r.constrained_dynamics(q, v, tau, 0b1111, 20.0, ref=x)[0].sum())(ref)
    with pytest.raises(NotImplementedError, match="restitution"):
        jax.grad(lambda e: r.impulse_dynamics(q, v, 0b1111, e)[0].sum())(0.3)
    # the mask is piecewise constant: its derivative is zero, exactly
    flags = jnp.array([1.0, 0.0, 1.0, 1.0])
    assert not np.asarray(jax.grad(lambda f: r.constrained_dynamics(q, v, tau, f)[0].sum())(flags)).any()


def test_masks_gains_and_refs_are_checked(solo):
    kk, r, _ = solo
    q, v, tau, _ = _state(np.random.default_rng(5))
    for bad, exc in ((16, ValueError), (-1, ValueError), ("FL_FOOT", TypeError), (["nope"], ValueError),
                     ([1, 1, 1], ValueError), (True, TypeError), ([1, 0.5, 0, 0], ValueError)):
        with pytest.raises(exc):
            r.constrained_dynamics(q, v, tau, bad)
    with pytest.raises(ValueError):
        r.constrained_dynamics(q, v, tau, 1, kp=-1.0)
    with pytest.raises(ValueError):
        r.constrained_dynamics(q, v, tau, 1, ref=np.zeros(11))
    with pytest.raises(ValueError):
        r.impulse_dynamics(q, v, 1, restitution=1.5)
    # traced values are checked in the call: a flag that is not 0 or 1, a negative gain
    with pytest.raises(Exception, match="not 0 or 1"):
        jax.jit(lambda f: r.constrained_dynamics(q, v, tau, f)[0])(jnp.array([1.0, 0.5, 0.0, 0.0])).block_until_ready()
    with pytest.raises(Exception, match="negative or not finite"):
        jax.jit(lambda k: r.constrained_dynamics(q, v, tau, 1, k)[0])(-1.0).block_until_ready()


def test_jit_vmap_and_a_gait_schedule(solo):
    """A batch of states with one mask; a lax.scan over a gait whose mask changes every step (a traced
    flags array), equal to the module called step by step."""
    kk, r, _ = solo
    rng = np.random.default_rng(6)
    states = [_state(rng) for _ in range(5)]
    Q, V, T = (np.stack([s[i] for s in states]) for i in range(3))
    ddq, lam = jax.jit(jax.vmap(lambda a, b, c: r.constrained_dynamics(a, b, c, 0b0110)))(Q, V, T)
    want = kk.constrained_dynamics(Q, V, T, 0b0110)
    close(ddq, want[0], EXACT)
    close(lam, want[1], EXACT)
    close(r.constrained_dynamics(Q, V, T, 0b0110)[0], want[0], EXACT)  # a batch given directly
    gait = jnp.array([[1.0, 0, 0, 1], [1, 1, 1, 1], [0, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]])

    def step(carry, flags):
        q, v = carry
        a, _ = r.constrained_dynamics(q, v, jnp.zeros(18), flags, 0.0, 10.0)
        v = v + 1e-3 * a
        return (q, v), a  # q held: the mask alone changes from step to step
    (_, v_end), accs = jax.jit(lambda q, v: jax.lax.scan(step, (q, v), gait))(Q[0], V[0])
    v_ref = V[0].copy()
    for k, flags in enumerate(np.asarray(gait)):
        mask = int(sum(int(x) << j for j, x in enumerate(flags)))
        a = kk.constrained_dynamics(Q[0], v_ref, np.zeros(18), mask, 0.0, 10.0)[0]
        close(accs[k], a, EXACT)
        v_ref = v_ref + 1e-3 * a
    close(v_end, v_ref, EXACT)


def test_grad_of_a_rollout_equals_central_differences(solo):
    """jax.grad of a cost after 20 semi-implicit Euler steps on two feet, with respect to the torques
    and the initial configuration, against central differences of the same rollout on the module."""
    kk, r, _ = solo
    q0, v0, _, _ = _state(np.random.default_rng(7))
    taus = np.random.default_rng(8).standard_normal((20, 18))
    dt, mask = 1e-3, 0b0110

    def rollout(q, taus, step_ddq):
        v = v0
        for tau in taus:
            v = v + dt * step_ddq(q, v, tau)
            q = q + dt * jnp.concatenate([v[:3], jnp.zeros(1), v[3:]])  # a smooth map of v into q's entries
        return jnp.sum(q ** 2) + jnp.sum(v ** 2)

    def cost(q, taus):
        def step(carry, tau):
            q, v = carry
            v = v + dt * r.constrained_dynamics(q, v, tau, mask, 0.0, 5.0)[0]
            return (q + dt * jnp.concatenate([v[:3], jnp.zeros(1), v[3:]]), v), None
        (q, v), _ = jax.lax.scan(step, (q, v0), taus)
        return jnp.sum(q ** 2) + jnp.sum(v ** 2)

    def cost_np(q, taus):
        return float(rollout(q, taus, lambda q_, v_, t_: kk.constrained_dynamics(
            np.asarray(q_), np.asarray(v_), t_, mask, 0.0, 5.0)[0]))
    g_q, g_t = jax.jit(jax.grad(cost, argnums=(0, 1)))(q0, taus)
    h = 1e-6
    for k in (0, 5, 12):  # a few torques of the first and last steps
        for i in (0, 19):
            e = np.zeros_like(taus)
            e[i, k] = h
            num = (cost_np(q0, taus + e) - cost_np(q0, taus - e)) / (2 * h)
            assert abs(g_t[i, k] - num) <= 1e-6 * (1 + abs(num)), (i, k)
    for k in (2, 4, 10):  # the base's height, a quaternion entry, a joint
        e = np.zeros(19)
        e[k] = h
        num = (cost_np(q0 + e, taus) - cost_np(q0 - e, taus)) / (2 * h)
        assert abs(g_q[k] - num) <= 1e-6 * (1 + abs(num)), k

"""krang_kernels.jax: a robot's kernels as XLA FFI calls with derivative rules (docs/jax.md).

Values equal the module's (the same C, compiled with the module's native flags, so to rounding:
1e-14); jacfwd/jacrev equal the derivative kernels and central differences; jit, vmap (a C loop in the
handler) and grad of a 100-step rollout agree with plain NumPy loops over the module. The small fixed-base
robot (tests/models/merge_fixed.urdf, 2 DOF) is the builds tier; the floating-base tree and Krang's 17 DOF
are the robots tier (their builds take tens of seconds).
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXACT = 1e-14  # relative, the same C to rounding


def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.abs(b).max()))
    assert float(np.abs(a - b).max()) <= tol * scale, float(np.abs(a - b).max()) / scale


def central(f, x, eps):
    """Central differences of f at x, one column per entry of x (last axis)."""
    cols = [(np.asarray(f(x + eps * e)) - np.asarray(f(x - eps * e))) / (2 * eps) for e in np.eye(len(x))]
    return np.stack(cols, axis=-1)


def richardson(f, x, eps=1e-4):
    """Central differences extrapolated (h, h/2): truncation error O(h^4), for steps large against rounding."""
    return (4 * central(f, x, eps / 2) - central(f, x, eps)) / 3


@pytest.fixture(scope="module")
def arm():
    import codegen
    import krang_kernels.jax as kj
    module = codegen.import_urdf(HERE / "models" / "merge_fixed.urdf", end_effectors=["tcp", "l1"], quiet=True)
    return module, kj.wrap(module)


@pytest.fixture(scope="module")
def state(arm):
    m, _ = arm
    rng = np.random.default_rng(3)
    q, v, u = rng.uniform(-1.5, 1.5, size=(3, m.N_DOF))
    return q, v, u


def test_values_equal_the_module(arm, state):
    m, r = arm
    q, v, u = state
    close(r.forward_dynamics(q, v, u), m.forward_dynamics(q, v, u), EXACT)
    close(r.inverse_dynamics(q, v, u), m.inverse_dynamics(q, v, u), EXACT)
    close(r.compute_A(q), m.compute_A(q), EXACT)
    close(r.regressor(q, v, u), m.regressor(q, v, u), EXACT)
    for ee in m.END_EFFECTORS:
        close(r.fk(q, ee), m.fk(q, ee), EXACT)
        close(r.jacobian(q, ee), m.jacobian(q, ee), EXACT)
        close(r.jacobian(q, ee, "local"), m.jacobian(q, ee, "local"), EXACT)
    for a, b in zip(r.forward_dynamics_derivatives(q, v, u), m.forward_dynamics_derivatives(q, v, u)):
        close(a, b, EXACT)
    for a, b in zip(r.inverse_dynamics_derivatives(q, v, u), m.inverse_dynamics_derivatives(q, v, u)):
        close(a, b, EXACT)
    p = m.default_params() * 1.1  # parameters passed at run time
    close(r.forward_dynamics(q, v, u, p), m.forward_dynamics(q, v, u, p), EXACT)


def test_jit_equals_eager_and_the_module(arm, state):
    m, r = arm
    q, v, u = state
    close(jax.jit(r.forward_dynamics)(q, v, u), m.forward_dynamics(q, v, u), EXACT)
    close(jax.jit(r.fk, static_argnums=1)(q, "tcp"), m.fk(q, "tcp"), EXACT)
    close(jax.jit(r.inverse_dynamics)(q, v, u, m.default_params()), m.inverse_dynamics(q, v, u), EXACT)


def test_vmap_and_batches_equal_a_loop(arm):
    m, r = arm
    rng = np.random.default_rng(4)
    Q, V, U = rng.uniform(-1, 1, size=(3, 6, m.N_DOF))
    loop = np.stack([m.forward_dynamics(a, b, c) for a, b, c in zip(Q, V, U)])
    close(jax.vmap(r.forward_dynamics)(Q, V, U), loop, EXACT)
    close(jax.jit(jax.vmap(r.forward_dynamics))(Q, V, U), loop, EXACT)
    close(r.forward_dynamics(Q, V, U), loop, EXACT)  # a batch given directly
    # one argument mapped, the others shared; nested maps; params mapped
    close(jax.vmap(r.forward_dynamics, in_axes=(0, None, None))(Q, V[0], U[0]),
          [m.forward_dynamics(a, V[0], U[0]) for a in Q], EXACT)
    nested = jax.vmap(jax.vmap(r.inverse_dynamics, in_axes=(0, 0, None)), in_axes=(None, None, 0))(Q, V, U)
    close(nested, [[m.inverse_dynamics(a, b, c) for a, b in zip(Q, V)] for c in U], EXACT)
    P = m.default_params() * rng.uniform(0.9, 1.1, size=(6, len(m.PARAM_NAMES)))
    close(jax.vmap(r.forward_dynamics)(Q, V, U, P), [m.forward_dynamics(*a) for a in zip(Q, V, U, P)], EXACT)
    close(jax.vmap(r.fk, in_axes=(0, None))(Q, "tcp"), m.fk(Q, "tcp"), EXACT)
    derivs = jax.vmap(r.forward_dynamics_derivatives)(Q, V, U)
    for a, b in zip(derivs, m.forward_dynamics_derivatives(Q, V, U)):
        close(a, b, EXACT)


def test_vmap_maps_onto_the_batch_kernels(arm):
    """A vmap of forward/inverse dynamics, bias and A with one parameter vector is one call of the
    module's NAME_*_batch kernel (kernel_call.cc's batch_fn); with mapped parameters, a loop of the
    scalar kernel. Both equal the module (the batch kernels: to rounding)."""
    import dataclasses
    m, r = arm
    rng = np.random.default_rng(8)
    Q, V, U = rng.uniform(-1, 1, size=(3, 11, m.N_DOF))
    p = np.asarray(m.default_params())
    for name, args in (("forward_dynamics", (Q, V, U)), ("inverse_dynamics", (Q, V, U)), ("bias", (Q, V)),
                       ("compute_A", (Q,))):
        kernel = r.kernels[name]
        assert kernel.batch != 0, name
        axes = [0] * len(args) + [None]
        batched = jax.jit(jax.vmap(kernel, in_axes=axes))(*args, p)
        looped = jax.jit(jax.vmap(dataclasses.replace(kernel, batch=0), in_axes=axes))(*args, p)
        close(batched, looped, 1e-13)
        close(batched, getattr(m, name)(*args), 1e-13)
    close(jax.vmap(r.bias)(Q, V), m.bias(Q, V), 1e-13)
    close(jax.jacfwd(r.bias, argnums=(0, 1))(Q[0], V[0])[0], central(lambda x: m.bias(x, V[0]), Q[0], 1e-6), 1e-7)
    P = p * rng.uniform(0.9, 1.1, size=(11, len(p)))  # mapped parameters: the scalar loop
    close(jax.vmap(r.bias)(Q, V, P), [m.bias(a, b, c) for a, b, c in zip(Q, V, P)], EXACT)


def test_jacobians_equal_the_derivative_kernels(arm, state):
    m, r = arm
    q, v, u = state
    d_q, d_v, d_u = m.forward_dynamics_derivatives(q, v, u)
    for jac in (jax.jacfwd, jax.jacrev):
        got = jac(r.forward_dynamics, argnums=(0, 1, 2))(q, v, u)
        for a, b in zip(got, (d_q, d_v, d_u)):
            close(a, b, 1e-13)
        got = jac(r.inverse_dynamics, argnums=(0, 1, 2))(q, v, u)
        for a, b in zip(got, (*m.inverse_dynamics_derivatives(q, v, u), m.compute_A(q))):
            close(a, b, 1e-13)


def test_jacobians_equal_central_differences(arm, state):
    m, r = arm
    q, v, u = state
    close(jax.jacrev(r.forward_dynamics)(q, v, u), central(lambda x: m.forward_dynamics(x, v, u), q, 1e-6), 1e-7)
    close(jax.jacfwd(r.forward_dynamics, argnums=1)(q, v, u),
          central(lambda x: m.forward_dynamics(q, x, u), v, 1e-6), 1e-7)
    for ee in m.END_EFFECTORS:
        close(jax.jacfwd(r.fk)(q, ee), central(lambda x: m.fk(x, ee), q, 1e-6), 1e-8)
        close(jax.jacrev(r.fk)(q, ee), central(lambda x: m.fk(x, ee), q, 1e-6), 1e-8)


def test_parameter_derivatives_equal_central_differences(arm, state):
    """The regressor columns (masses, first moments, inertias, Ia, Fv, Fc) and the central-difference
    columns (g, geometry) both, for forward and inverse dynamics and the pose."""
    m, r = arm
    q, v, u = state
    p = m.default_params()
    want = richardson(lambda x: m.forward_dynamics(q, v, u, x), p)
    close(jax.jacfwd(r.forward_dynamics, argnums=3)(q, v, u, p), want, 1e-8)
    close(jax.jacrev(r.forward_dynamics, argnums=3)(q, v, u, p), want, 1e-8)
    close(jax.jacrev(r.inverse_dynamics, argnums=3)(q, v, u, p),
          richardson(lambda x: m.inverse_dynamics(q, v, u, x), p), 1e-8)
    close(jax.jacfwd(r.fk, argnums=2)(q, "tcp", p), richardson(lambda x: m.fk(q, "tcp", x), p), 1e-8)


def test_geometry_left_out_of_the_derivatives(arm, state):
    """differentiate_geometry=False: the regressor's columns as before, zero for g and the lengths."""
    import krang_kernels.jax as kj
    m, r = arm
    q, v, u = state
    lean = kj.wrap(m, differentiate_geometry=False)
    full, part = (jax.jacrev(f.forward_dynamics, argnums=3)(q, v, u, m.default_params()) for f in (r, lean))
    close(np.asarray(part)[:, r.regressor_index], np.asarray(full)[:, r.regressor_index], EXACT)
    assert not np.asarray(part)[:, r.other_index].any() and np.asarray(full)[:, r.other_index].any()


def test_addresses_from_the_module_need_no_compile(arm, state, monkeypatch):
    """A module with C_FUNCTIONS (name -> address; the proposed template change) is wrapped from it, its C
    never read: here a stand-in module whose table holds the addresses of the compiled library's kernels."""
    import types

    import krang_kernels.jax as kj
    m, r = arm
    q, v, u = state
    stem, c_text, h_text = kj._sources(m)
    lib = kj._build.robot_library(stem, c_text, h_text)  # built for `arm` already: from the process's table
    names = ("compute_A", "regressor", "forward_dynamics", "inverse_dynamics", "forward_dynamics_derivatives",
             "inverse_dynamics_derivatives", "fk", "jacobian", "bias")
    fake = types.SimpleNamespace(**{k: getattr(m, k) for k in ("N_DOF", "N_Q", "PARAM_NAMES", "END_EFFECTORS",
                                                               "REGRESSOR_PARAM_INDEX", "default_params")},
                                 C_FUNCTIONS={n: kj._address(getattr(lib, f"merge_fixed_{n}")) for n in names})
    monkeypatch.setattr(kj, "_sources", lambda module: pytest.fail("the C was read"))
    robot = kj.wrap(fake)
    close(robot.forward_dynamics(q, v, u), m.forward_dynamics(q, v, u), EXACT)
    close(jax.jacrev(robot.fk)(q, "tcp"), jax.jacrev(r.fk)(q, "tcp"), EXACT)
    del fake.C_FUNCTIONS["regressor"]
    with pytest.raises(AttributeError, match="no regressor"):
        kj.wrap(fake)


def rollout_numpy(m, q, v, taus, p, dt):
    for tau in taus:
        v = v + dt * m.forward_dynamics(q, v, tau, p)
        q = q + dt * v
    return q, v


def test_grad_of_a_rollout_equals_central_differences(arm, state):
    """100 steps of semi-implicit Euler through forward dynamics, differentiated in the initial state, the
    torques and the parameters (a payload mass: the last link's m)."""
    m, r = arm
    q0, v0, _ = state
    dt, steps = 1e-2, 100
    taus = 0.5 * np.sin(np.linspace(0, 3, steps))[:, None] * np.ones(m.N_DOF)
    target = np.full(m.N_DOF, 0.3)

    def rollout(q, v, taus, p):
        def step(carry, tau):
            q, v = carry
            v = v + dt * r.forward_dynamics(q, v, tau, p)
            return (q + dt * v, v), None
        return jax.lax.scan(step, (q, v), taus)[0]

    def cost(q, v, taus, p):
        qf, vf = rollout(q, v, taus, p)
        return jnp.sum((qf - target) ** 2) + 0.1 * jnp.sum(vf ** 2)

    def cost_np(q, v, taus, p):
        qf, vf = rollout_numpy(m, q, v, taus, p, dt)
        return np.sum((qf - target) ** 2) + 0.1 * np.sum(vf ** 2)

    p = m.default_params()
    close(jax.jit(cost)(q0, v0, taus, p), cost_np(q0, v0, taus, p), 1e-12)
    g_q, g_v, g_p = jax.jit(jax.grad(cost, argnums=(0, 1, 3)))(q0, v0, taus, p)
    close(g_q, central(lambda x: cost_np(x, v0, taus, p), q0, 1e-6), 1e-7)
    close(g_v, central(lambda x: cost_np(q0, x, taus, p), v0, 1e-6), 1e-7)
    mass = m.PARAM_NAMES.index("m_l2")
    e = np.eye(len(p))[mass]
    want = (cost_np(q0, v0, taus, p + 1e-6 * e) - cost_np(q0, v0, taus, p - 1e-6 * e)) / 2e-6
    close(g_p[mass], want, 1e-7)
    g_tau = jax.grad(cost, argnums=2)(q0, v0, taus, p)
    k = 37  # one torque sample
    bump = np.zeros_like(taus)
    bump[k, 1] = 1e-6
    close(g_tau[k, 1], (cost_np(q0, v0, taus + bump, p) - cost_np(q0, v0, taus - bump, p)) / 2e-6, 1e-7)


def test_errors_name_the_problem(arm, state):
    m, r = arm
    q, v, u = state
    with pytest.raises(ValueError, match="end effector"):
        r.fk(q, "nowhere")
    with pytest.raises(ValueError, match="shape"):
        r.forward_dynamics(q[:1], v, u)


@pytest.mark.module
def test_krang_kernels_does_not_import_jax():
    code = "import sys, krang_kernels; assert 'jax' not in sys.modules and 'jaxlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.unit
def test_an_untrusted_cache_is_not_used(tmp_path, monkeypatch):
    from krang_kernels.jax import _build
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("KRANG_KERNELS_CACHE", str(shared))
    monkeypatch.setattr(_build, "_PRIVATE", [])
    with pytest.warns(_build.CacheWarning, match="writable by group or others"):
        where = _build._directory()
    assert shared not in where.parents and os.stat(where).st_mode & 0o077 == 0
    os.rmdir(where)


@pytest.mark.unit
def test_a_tampered_library_is_not_loaded(tmp_path):
    from krang_kernels.jax import _build
    (tmp_path / "k.so").write_bytes(b"\x7fELF not really")
    os.chmod(tmp_path / "k.so", 0o700)
    (tmp_path / "k.sha256").write_text("0" * 64 + "\n")
    assert _build._load_checked(tmp_path, "k") is None
    assert not (tmp_path / "k.so").exists()  # removed, to be rebuilt
    (tmp_path / "j.so").write_bytes(b"x")
    os.chmod(tmp_path / "j.so", 0o766)
    assert _build._load_checked(tmp_path, "j") is None  # writable by others: never loaded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _build._load_checked(tmp_path, "missing") is None


# ---- the robots tier ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def floating():
    import codegen
    import krang_kernels.jax as kj
    module = codegen.import_urdf(HERE / "models" / "floating_tiny.urdf", end_effectors=["tool"], quiet=True)
    return module, kj.wrap(module)


@pytest.mark.robots
def test_floating_base_values_and_derivatives(floating):
    """q holds a quaternion (x y z w, here not of unit norm): the JAX derivative in q is the tangent-space
    one mapped back to q's coordinates, which central differences in q reproduce (the norm reads nothing)."""
    m, r = floating
    rng = np.random.default_rng(5)
    q = rng.uniform(-1, 1, size=m.N_Q)
    q[3:7] *= 1.3 / np.linalg.norm(q[3:7])
    v, u = rng.uniform(-1, 1, size=(2, m.N_DOF))
    close(r.forward_dynamics(q, v, u), m.forward_dynamics(q, v, u), EXACT)
    close(r.fk(q, "tool"), m.fk(q, "tool"), EXACT)
    close(jax.jacfwd(r.forward_dynamics)(q, v, u), central(lambda x: m.forward_dynamics(x, v, u), q, 1e-6), 1e-7)
    close(jax.jacrev(r.inverse_dynamics)(q, v, u), central(lambda x: m.inverse_dynamics(x, v, u), q, 1e-6), 1e-7)
    close(jax.jacrev(r.fk)(q, "tool"), central(lambda x: m.fk(x, "tool"), q, 1e-6), 1e-8)
    # the tangent-space kernels: d/dq through to_tangent's inverse direction (a base twist) is theirs
    d_q = m.forward_dynamics_derivatives(q, v, u)[0]
    close(jax.jacfwd(r.forward_dynamics)(q, v, u)[:, 7:], d_q[:, 6:], 1e-13)
    Q, V, U = np.tile(q, (3, 1)), np.tile(v, (3, 1)), np.tile(u, (3, 1))
    close(jax.vmap(r.forward_dynamics)(Q, V, U), m.forward_dynamics(Q, V, U), EXACT)


@pytest.mark.robots
def test_krang_module():
    import krang_kernels as kk
    import krang_kernels.jax as kj
    r = kj.wrap(kk)
    rng = np.random.default_rng(6)
    q, v, u = rng.uniform(-1, 1, size=(3, kk.N_DOF))
    close(jax.jit(r.forward_dynamics)(q, v, u), kk.forward_dynamics(q, v, u), EXACT)
    close(r.inverse_dynamics(q, v, u), kk.inverse_dynamics(q, v, u), EXACT)
    for ee in kk.END_EFFECTORS:
        close(r.fk(q, ee), kk.fk(q, ee), EXACT)
    for a, b in zip(jax.jacrev(r.forward_dynamics, argnums=(0, 1, 2))(q, v, u), kk.forward_dynamics_derivatives(q, v, u)):
        close(a, b, 1e-12)


@pytest.mark.system
def test_sysid_example_runs():
    """examples/jax_sysid.py --short (Panda from example-robot-data): both gradients agree, both fits
    land on the same estimate."""
    pytest.importorskip("pinocchio")
    run = subprocess.run([sys.executable, "-m", "examples.jax_sysid", "--short"], cwd=ROOT, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    agree = next(ln for ln in lines if "max relative difference" in ln)
    assert float(agree.rsplit(" ", 1)[1]) < 1e-6, agree
    fits = [ln.split(";")[0].split(":", 1)[1] for ln in lines if ln.strip().startswith(("jax.grad:", "central"))]
    assert len(fits) == 2 and fits[0] == fits[1], fits

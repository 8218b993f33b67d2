"""rollout (NAME_rollout, NAME_rollout_rk4, templates/c/kernels.c.j2; the Python wrapper in
templates/python/module.pyx.j2): n states stepped by semi-implicit Euler,
v' = v + dt forward_dynamics(q, v, tau_k), q' = integrate(q, v', dt), or by RK4 (method="rk4").

* against Pinocchio: pin.aba and pin.integrate stepping the same scheme on the same
  model and parameters (Krang: reference.pin_reference.build_pin_model; Panda and
  Solo12 on a free-flying base: Pinocchio's own model of the URDF, in the robots tier);
* against a Python loop of the module's own single-state forward_dynamics and integrate
  (the batch kernel's lanes equal the scalar kernel to rounding: 1e-12);
* the orders of accuracy (1 and 4) as dt halves;
* threads split the states without changing a bit; one state without a batch axis;
* bad inputs rejected with one clear error.
"""
from __future__ import annotations

import numpy as np
import pytest

from reference.reference_fk import NumericModel, rel_err

pytestmark = pytest.mark.module

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import build_pin_model  # noqa: E402

DT, STEPS = 1e-3, 12


def _step(fd, integrate, q, v, tau, dt, method):
    """One step of the scheme (NAME_rollout's or NAME_rollout_rk4's, the ABI's documentation),
    with any forward dynamics fd(q, v, tau) and integrate(q, v, dt)."""
    if method == "euler":
        v = v + dt * fd(q, v, tau)
        return integrate(q, v, dt), v
    k1 = fd(q, v, tau)
    v2 = v + 0.5 * dt * k1
    k2 = fd(integrate(q, v, 0.5 * dt), v2, tau)
    v3 = v + 0.5 * dt * k2
    k3 = fd(integrate(q, v2, 0.5 * dt), v3, tau)
    v4 = v + dt * k3
    k4 = fd(integrate(q, v3, dt), v4, tau)
    return integrate(q, (v + 2 * v2 + 2 * v3 + v4) / 6, dt), v + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _scalar_loop(kk, q0, v0, tau, dt, p, method="euler"):
    """The scheme with the module's single-state kernels, state by state."""
    n, steps = tau.shape[:2]
    qs, vs = np.empty((n, steps, q0.shape[1])), np.empty((n, steps, v0.shape[1]))
    fd = lambda q, v, t: kk.forward_dynamics(q, v, t, p)  # noqa: E731
    for i in range(n):
        q, v = q0[i].copy(), v0[i].copy()
        for k in range(steps):
            q, v = _step(fd, kk.integrate, q, v, tau[i, k], dt, method)
            qs[i, k], vs[i, k] = q, v
    return qs, vs


def _inputs(rng, n, nq, nv, steps=STEPS, floating=False):
    q0 = rng.uniform(-1.5, 1.5, (n, nq))
    if floating:
        quat = rng.normal(size=(n, 4))
        q0[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q0, rng.uniform(-1, 1, (n, nv)), rng.uniform(-5, 5, (n, steps, nv))


@pytest.fixture(scope="module")
def krang():
    import krang_kernels as kk
    from codegen.read.model import load_model
    return kk, load_model("models/krang.toml")


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_krang_matches_pinocchio(krang, method):
    """Each step of each state: pin.aba (friction subtracted from tau, as our forward dynamics
    does) and pin.integrate, to 1e-10 relative over the trajectory."""
    kk, model = krang
    rng = np.random.default_rng(3)
    p = kk.default_params()
    pm, _ = build_pin_model(model, p)
    data, fr = pm.createData(), NumericModel(model, p)
    q0, v0, tau = _inputs(rng, 5, kk.N_Q, kk.N_DOF)
    qs, vs = kk.rollout(q0, v0, tau, DT, p, method=method)
    assert qs.shape == (5, STEPS, kk.N_Q) and vs.shape == (5, STEPS, kk.N_DOF)
    fd = lambda q, v, t: pin.aba(pm, data, q, v, t - fr.friction(v))  # noqa: E731
    integrate = lambda q, v, h: pin.integrate(pm, q, v * h)  # noqa: E731
    for i in range(5):
        q, v = q0[i].copy(), v0[i].copy()
        for k in range(STEPS):
            q, v = _step(fd, integrate, q, v, tau[i, k], DT, method)
            assert rel_err(vs[i, k], v) <= 1e-10 and rel_err(qs[i, k], q) <= 1e-10, (i, k)


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_krang_matches_the_scalar_loop(krang, method):
    """n = 70: two whole chunks of 32 states and a tail of 6 (lanes and the scalar tail)."""
    kk, _ = krang
    rng = np.random.default_rng(5)
    q0, v0, tau = _inputs(rng, 70, kk.N_Q, kk.N_DOF)
    p = kk.default_params()
    got = kk.rollout(q0, v0, tau, DT, p, method=method)
    want = _scalar_loop(kk, q0, v0, tau, DT, p, method)
    for g, w in zip(got, want):
        assert rel_err(g, w) <= 1e-12


def test_threads_give_the_same_bits(krang):
    kk, _ = krang
    rng = np.random.default_rng(6)
    q0, v0, tau = _inputs(rng, 101, kk.N_Q, kk.N_DOF, steps=4)
    one = kk.rollout(q0, v0, tau, DT)
    for threads in (2, 3, 8):
        got = kk.rollout(q0, v0, tau, DT, threads=threads)
        assert all(np.array_equal(g, w) for g, w in zip(got, one)), threads
    rk4 = kk.rollout(q0, v0, tau, DT, method="rk4")
    assert all(np.array_equal(g, w) for g, w in zip(kk.rollout(q0, v0, tau, DT, threads=2, method="rk4"), rk4))


def test_orders_of_accuracy(krang):
    """Halving dt divides the error at a fixed time (against RK4 at dt / 16) by about 2 (Euler)
    and 16 (RK4): a check of each scheme that needs no reference implementation."""
    kk, _ = krang
    rng = np.random.default_rng(9)
    q0, v0 = rng.uniform(-1, 1, (1, kk.N_Q)), rng.uniform(-0.5, 0.5, (1, kk.N_DOF))
    tau0 = rng.uniform(-2, 2, kk.N_DOF)
    T, h = 0.064, 0.008

    def end(dt, method):
        steps = round(T / dt)
        q, v = kk.rollout(q0, v0, np.broadcast_to(tau0, (1, steps, kk.N_DOF)), dt, method=method)
        return np.concatenate([q[0, -1], v[0, -1]])

    ref = end(h / 64, "rk4")
    for method, order in (("euler", 1), ("rk4", 4)):
        e1, e2 = (np.abs(end(dt, method) - ref).max() for dt in (h, h / 2))
        assert 0.7 * 2 ** order <= e1 / e2 <= 1.4 * 2 ** order, (method, e1, e2)


def test_one_state_and_input_conversions(krang):
    """One state without the batch axis equals row 0 of a batch of one; lists, float32 and
    non-contiguous inputs are converted; n = 0 gives empty results."""
    kk, _ = krang
    rng = np.random.default_rng(7)
    q0, v0, tau = _inputs(rng, 1, kk.N_Q, kk.N_DOF, steps=3)
    v0 = v0.astype(np.float32).astype(np.float64)  # float32 below converts exactly
    q, v = kk.rollout(q0[0], v0[0], tau[0], DT)
    qb, vb = kk.rollout(q0, v0, tau, DT)
    assert q.shape == (3, kk.N_Q) and np.array_equal(q, qb[0]) and np.array_equal(v, vb[0])
    wide = np.zeros((1, 3, 2 * kk.N_DOF))
    wide[:, :, ::2] = tau
    q2, _ = kk.rollout(q0.tolist(), v0.astype(np.float32), wide[:, :, ::2], DT)
    assert np.array_equal(q2, qb)
    q3, v3 = kk.rollout(np.zeros((0, kk.N_Q)), np.zeros((0, kk.N_DOF)), np.zeros((0, 2, kk.N_DOF)), DT)
    assert q3.shape == (0, 2, kk.N_Q) and v3.shape == (0, 2, kk.N_DOF)


@pytest.mark.parametrize("change, error, match", [
    (dict(dt=0.0), ValueError, "dt"), (dict(dt=-1e-3), ValueError, "dt"), (dict(dt=float("nan")), ValueError, "dt"),
    (dict(dt="0.01"), TypeError, "dt"), (dict(threads=0), ValueError, "threads"),
    (dict(threads=1.5), ValueError, "threads"), (dict(threads=True), ValueError, "threads"),
    (dict(tau=np.zeros((2, 0, 17))), ValueError, "steps >= 1"), (dict(tau=np.zeros((3, 4, 17))), ValueError, "tau_sequence"),
    (dict(tau=np.zeros((2, 4, 16))), ValueError, "tau_sequence"), (dict(tau=np.zeros((2, 17))), ValueError, "tau_sequence"),
    (dict(tau=np.full((2, 4, 17), "x")), TypeError, "tau_sequence"), (dict(tau=np.full((2, 4, 17), np.inf)), ValueError, "finite"),
    (dict(q0=np.zeros((2, 16))), ValueError, "q0"), (dict(v0=np.zeros((3, 17))), ValueError, "v0"),
    (dict(q0=np.full((2, 17), np.nan)), ValueError, "finite"), (dict(params=np.zeros(3)), ValueError, "params"),
    (dict(method="rk2"), ValueError, "method"), (dict(method=None), ValueError, "method"),
])
def test_bad_inputs_are_rejected(krang, change, error, match):
    kk, _ = krang
    args = dict(q0=np.zeros((2, 17)), v0=np.zeros((2, 17)), tau=np.zeros((2, 4, 17)), dt=1e-3, params=None, threads=1,
                method="euler")
    args.update(change)
    with pytest.raises(error, match=match):
        kk.rollout(args["q0"], args["v0"], args["tau"], args["dt"], args["params"], threads=args["threads"],
                   method=args["method"])


ROBOTS = {"panda": ("panda_description/urdf/panda.urdf", False), "solo12": ("solo_description/robots/solo12.urdf", True)}


@pytest.mark.robots
@pytest.mark.filterwarnings("ignore:no end effector given")
@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_urdf_robot_matches_pinocchio_and_the_scalar_loop(name):
    """Panda (fixed base) and Solo12 (free-flying base: integrate's SE(3) exponential) built
    from example-robot-data's URDFs (core kernels, friction off, no snapping), against
    Pinocchio's model of the same URDF stepping the same scheme (pin.aba, pin.integrate),
    and the module's own scalar loop; threads=2 the same bits as threads=1."""
    import codegen
    from reference.pin_reference import urdf_q
    from reference.robot_data import robots_dir
    from tests.test_urdf_end_to_end import PinUrdf
    from reference.floating_reference import PinFreeFlyer
    from codegen.read.urdf import load_urdf

    rel, floating = ROBOTS[name]
    urdf = robots_dir() / rel
    opts = dict(floating_base=floating, mimic="independent", friction=False, snap=False, kernels=())
    kk = codegen.import_urdf(urdf, quiet=True, **opts)
    model = load_urdf(urdf, floating_base=floating, mimic="independent", snap=False).model
    p = kk.default_params()
    rng = np.random.default_rng(8)
    n = 37
    q0, v0, tau = _inputs(rng, n, kk.N_Q, kk.N_DOF, floating=floating)
    tau *= 0.2
    runs = {m: kk.rollout(q0, v0, tau, DT, method=m) for m in ("euler", "rk4")}
    for m, (qs, vs) in runs.items():
        for g, w in zip((qs, vs), _scalar_loop(kk, q0, v0, tau, DT, p, m)):
            assert rel_err(g, w) <= 1e-12, m
        assert all(np.array_equal(g, w) for g, w in zip(kk.rollout(q0, v0, tau, DT, threads=2, method=m), (qs, vs)))
    if floating:
        ref = PinFreeFlyer(urdf, model, p, own_root_joint=False)
        pq, P = ref.q, ref.perm
    else:
        ref = PinUrdf(urdf, model, p)
        pq, P = (lambda q: urdf_q(ref.pm, model, q)), np.array(ref.perm)
    pm, data = ref.pm, ref.data
    integrate = lambda q, v, h: pin.integrate(pm, q, v * h)  # noqa: E731
    for m, (qs, vs) in runs.items():
        for i in range(0, n, 9):
            q, v = pq(q0[i]), np.zeros(pm.nv)
            v[P] = v0[i]
            t = np.zeros(pm.nv)
            for k in range(STEPS):
                t[P] = tau[i, k]
                q, v = _step(lambda q_, v_, t_: pin.aba(pm, data, q_, v_, t_), integrate, q, v, t, DT, m)
                assert rel_err(vs[i, k], v[P]) <= 1e-10 and rel_err(pq(qs[i, k]), q) <= 1e-10, (m, i, k)

"""Rollouts against MuJoCo's: `python -m benchmarks.rollout_vs_mujoco` -> benchmarks/results/rollout.md.

Panda (example-robot-data's URDF) in both: our module (codegen.import_urdf: core kernels, friction
off, no snapping) and MuJoCo's model of the same URDF (mujoco.MjModel.from_xml_string on the URDF with
its visual and collision elements removed and a <mujoco><compiler> that neither balances inertias nor
fuses static bodies). MuJoCo: contacts and every other constraint (joint limits) off, joint damping,
friction loss and armature zero, its Euler integrator (semi-implicit: qvel first, then qpos with the new
qvel), our gravity and time step, torques as qfrc_applied (control_spec mjSTATE_QFRC_APPLIED). Before
timing, the two models are checked: total mass, the inertia matrix and the bias forces at random states
against Pinocchio's model of the URDF, and one trajectory of 100 steps against ours (tolerances in
CHECK_TOL). The same for RK4 (MuJoCo's mjINT_RK4: the stages of rollout_rk4). Timing: n states x
STEPS steps per call (wall clock), the median of --rounds rounds (each
the best of --repeats calls), as states x steps per second per core (threads counted as cores). The
`mujoco` package: `pip install mujoco` (the `bench` extra).
"""
from __future__ import annotations

import argparse
import datetime
import platform
import re
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

from .env import cpu_flags, cpu_model, loadavg

STEPS, SIZES, DT = 100, (64, 1024), 1e-3
# relative: max |a - b| / (1 + max |b|)
CHECK_TOL = {"mass": 1e-12, "M": 1e-9, "bias": 1e-9, "trajectory euler": 1e-9, "trajectory rk4": 1e-9}
PANDA = "panda_description/urdf/panda.urdf"
OUT = Path(__file__).resolve().parent / "results" / "rollout.md"


def rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / (1.0 + np.max(np.abs(b))))


def mujoco_model(urdf: Path, g: float, dt: float, method: str = "euler"):
    """MuJoCo's model of the URDF: no meshes (collision is off anyway), inertias as written;
    its Euler (semi-implicit) or RK4 integrator."""
    import mujoco
    text = re.sub(r"<visual>.*?</visual>|<collision>.*?</collision>", "", urdf.read_text(), flags=re.S)
    text = text.replace("</robot>", '<mujoco><compiler balanceinertia="false" discardvisual="true" '
                        'fusestatic="false"/></mujoco></robot>')
    m = mujoco.MjModel.from_xml_string(text)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER if method == "euler" else mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = dt
    m.opt.gravity[:] = (0.0, 0.0, -g)
    m.dof_damping[:] = 0.0
    m.dof_frictionloss[:] = 0.0
    m.dof_armature[:] = 0.0
    return m


def checks(kk, m, urdf: Path, rng, m_rk4) -> dict:
    """Largest relative differences: MuJoCo's model against Pinocchio's and ours, one trajectory."""
    import mujoco
    import pinocchio as pin
    pm = pin.buildModelFromUrdf(str(urdf))
    pd, d = pm.createData(), mujoco.MjData(m)
    assert [m.joint(i).name for i in range(m.njnt)] == list(pm.names[1:]) == list(kk.JOINT_NAMES)
    out = {"mass": rel(sum(m.body_mass), sum(i.mass for i in pm.inertias)), "M": 0.0, "bias": 0.0}
    for _ in range(5):
        q, v = rng.uniform(-1.5, 1.5, m.nq), rng.uniform(-1, 1, m.nv)
        q[7:] = rng.uniform(0, 0.04, 2)  # the fingers, within their travel
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        try:
            mujoco.mj_fullM(m, d, M)  # MuJoCo 4
        except TypeError:
            mujoco.mj_fullM(m, M, d.qM)  # MuJoCo 3
        Mp = pin.crba(pm, pd, q)
        out["M"] = max(out["M"], rel(M, np.triu(Mp) + np.triu(Mp, 1).T), rel(M, kk.compute_A(q)))
        out["bias"] = max(out["bias"], rel(d.qfrc_bias, pin.nonLinearEffects(pm, pd, q, v)), rel(d.qfrc_bias, kk.bias(q, v)))
    q0, v0 = rng.uniform(-1, 1, (1, m.nq)), rng.uniform(-0.5, 0.5, (1, m.nv))
    tau = rng.uniform(-2, 2, (1, STEPS, m.nv))
    nq = m.nq
    for method, model in (("euler", m), ("rk4", m_rk4)):
        qs, vs = kk.rollout(q0, v0, tau, DT, method=method)
        state, _ = mujoco_rollout(model, [mujoco.MjData(model)], q0, v0, tau)
        out[f"trajectory {method}"] = max(rel(state[..., 1:1 + nq], qs), rel(state[..., 1 + nq:1 + nq + m.nv], vs))
    for k, e in out.items():
        if not e <= CHECK_TOL[k]:
            raise AssertionError(f"MuJoCo's Panda differs from Pinocchio's/ours: {k} {e:.1e} > {CHECK_TOL[k]:.0e}")
    return out


def initial_states(m, q0, v0):
    import mujoco
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d = mujoco.MjData(m)
    out = np.empty((len(q0), mujoco.mj_stateSize(m, spec)))
    for i, (q, v) in enumerate(zip(q0, v0)):
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_getState(m, d, out[i], spec)
    return out


def mujoco_rollout(m, datas, q0, v0, tau, state=None):
    """MuJoCo's rollout of the states (q0, v0) under the torques tau (n x steps x nv) as
    qfrc_applied: (state, sensordata), state n x steps x [time, qpos, qvel, ...]."""
    import mujoco
    from mujoco import rollout
    return rollout.rollout(m, datas, initial_states(m, q0, v0), tau, control_spec=mujoco.mjtState.mjSTATE_QFRC_APPLIED,
                           state=state, persistent_pool=len(datas) > 1)


def best(f, repeats: int) -> float:
    t = []
    for _ in range(repeats):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t)


def main(argv=None) -> int:
    import mujoco
    import codegen
    from reference.robot_data import robots_dir
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="1,2", help="thread counts to time, comma-separated")
    ap.add_argument("--methods", default="euler,rk4", help="integrators to time: euler, rk4")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    urdf = robots_dir() / PANDA
    with warnings.catch_warnings():  # no end effector: rollout needs none
        warnings.simplefilter("ignore", UserWarning)
        kk = codegen.import_urdf(urdf, mimic="independent", friction=False, snap=False, kernels=(), quiet=True)
    g = float(kk.default_params()[list(kk.PARAM_NAMES).index("g")])
    models = {method: mujoco_model(urdf, g, DT, method) for method in ("euler", "rk4")}
    m = models["euler"]
    rng = np.random.default_rng(0)
    found = checks(kk, m, urdf, rng, models["rk4"])
    threads = [int(t) for t in args.threads.split(",")]
    methods = args.methods.split(",")
    datas = {method: [mujoco.MjData(models[method]) for _ in range(max(threads))] for method in methods}
    rows = {}
    for _ in range(args.rounds):
        for n in SIZES:
            q0, v0 = rng.uniform(-1, 1, (n, m.nq)), rng.uniform(-0.5, 0.5, (n, m.nv))
            tau = rng.uniform(-2, 2, (n, STEPS, m.nv))
            x0 = initial_states(m, q0, v0)
            state = np.empty((n, STEPS, x0.shape[1]))
            for method in methods:
                for t in threads:
                    ours = best(lambda: kk.rollout(q0, v0, tau, DT, threads=t, method=method), args.repeats)
                    theirs = best(lambda: mujoco.rollout.rollout(
                        models[method], datas[method][:t], x0, tau, control_spec=mujoco.mjtState.mjSTATE_QFRC_APPLIED,
                        state=state, persistent_pool=t > 1), args.repeats)
                    rows.setdefault((method, n, t), []).append((n * STEPS / ours / t, n * STEPS / theirs / t))
    date = datetime.datetime.now().isoformat(timespec="seconds")
    lines = ["# Rollouts: ours vs MuJoCo's `rollout` (Panda, contacts off)", "",
             f"Machine: {platform.node()}, {cpu_model()} ({cpu_flags()}); Python {platform.python_version()}, "
             f"mujoco {mujoco.__version__}; date: {date}; load average at the end: {loadavg()}.", "",
             f"Panda from example-robot-data's URDF in both ({kk.N_DOF} DOF, fingers independent), semi-implicit "
             f"Euler (both sides' `euler`: MuJoCo's Euler integrator) and RK4 (`rollout(method='rk4')`, MuJoCo's "
             f"RK4 integrator), dt = {DT} s, {STEPS} steps, random states and torques. Ours: `rollout` of the module "
             "`codegen.import_urdf` builds (native flags; forward_dynamics_batch, SIMD across states). "
             "MuJoCo: `mujoco.rollout.rollout` (its C++ thread pool), torques as qfrc_applied, contacts and "
             "limits off, no damping or armature. Rate: states x steps per second per core (a run's rate "
             f"divided by its threads), the median of {args.rounds} rounds, each the best of {args.repeats} calls. "
             "The cores are shared with other jobs: ratios are indicative.", "",
             "Checks before timing (relative, max |a - b| / (1 + max |b|)): "
             + ", ".join(f"{k} {v:.1e} (<= {CHECK_TOL[k]:.0e})" for k, v in found.items())
             + " (mass, M(q), bias against Pinocchio's model of the URDF and ours; one 100-step trajectory "
             "per integrator against ours).", "",
             "| integrator | n | threads | ours, steps/s per core | MuJoCo, steps/s per core | ours / MuJoCo |",
             "|---|---:|---:|---:|---:|---:|"]
    for (method, n, t), r in sorted(rows.items(), key=lambda kv: (methods.index(kv[0][0]), kv[0][1:])):
        a, b = statistics.median(x for x, _ in r), statistics.median(y for _, y in r)
        ratio = statistics.median(x / y for x, y in r)
        lines.append(f"| {method} | {n} | {t} | {a:,.0f} | {b:,.0f} | {ratio:.1f} |")
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

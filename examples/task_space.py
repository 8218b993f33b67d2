"""Operational-space control of both of Krang's arms: raise both hands 3 cm and
hold their poses, then push on a wall in front of the robot with a given force.

    python -m examples.task_space            (from the repository root; `make examples`)
    python -m examples.task_space --short    (what CI runs)

Control (Khatib 1987; the Krang report (Zafar 2015), section 3: a force f at
the end effector is the joint torque Gamma = J^T f): both arms' 6-D tasks
stacked, J (12 x 17, world axes), task-space inertia Lambda = (J A^-1 J^T)^-1,

    Gamma = b + J^T (Lambda (a* - Jdot dq) + f_push) + N^T A ddq_0

with b = inverse_dynamics(q, dq, 0) (gravity, Coriolis, friction), a* a PD
law on the pose error (the orientation error from the rotation columns,
Siciliano et al. 2009, eq. 3.85), N^T = 1 - J^T Lambda J A^-1 the
dynamically consistent null space (a posture PD ddq_0 in it). In the push
phase the wall-normal direction of each hand is force controlled (f_push =
F_PUSH along +x, damping only), the other five stay pose controlled. The
plant: RK4 on forward_dynamics at 1 kHz, the wall a stiff spring-damper
acting on each hand through J^T f. Prints pose and force errors and saves a
PNG (matplotlib, optional). The plant carries 0.2 kg in each gripper that the
controller's model lacks.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import krang_kernels as kk
from examples.computed_torque import payload_params
from examples.plotting import pyplot, save

DT = 1e-3
F_PUSH = 20.0  # N, per hand, along +x
K_WALL, C_WALL = 2e4, 100.0  # N/m, N s/m
KP, KD = 900.0, 60.0  # task-space PD (per unit of Lambda): 30 rad/s, critically damped
KD_PUSH = 30.0  # damping of the force-controlled direction
KP0, KD0 = 25.0, 10.0  # posture in the null space
ARM = np.array([0.4, -0.6, 0.3, -1.2, 0.2, 0.5, 0.1])
Q0 = np.concatenate([[0.0, 0.0, 0.0], ARM, -ARM])  # mirrored arms, hands in front of the robot
EES = kk.END_EFFECTORS
N = kk.N_DOF
P = kk.default_params()  # the controller's model
# the plant: 0.2 kg in each gripper that the controller does not know about
P_PLANT = payload_params(payload_params(P, "10l", 0.2), "10r", 0.2)
RAISE = 0.03  # m: the held pose is 3 cm above the start


def hands(q, dq):
    """Per hand: pose T (4x4), world Jacobian J (6xN), velocity J dq (6)."""
    out = []
    for ee in EES:
        T, J = kk.fk(q, ee, P), kk.jacobian(q, ee, "world", P)
        out.append((T, J, J @ dq))
    return out


def wall_forces(q, dq, x_wall):
    """Force of the wall on each hand (world, 3): a one-sided spring-damper along -x."""
    fs = []
    for T, J, v in hands(q, dq):
        pen = T[0, 3] - x_wall
        f = -(K_WALL * pen + C_WALL * v[0]) if pen > 0 else 0.0
        fs.append(np.array([min(f, 0.0), 0.0, 0.0]))
    return fs


def plant(q, dq, tau, x_wall):
    ext = tau.copy()
    for f, (_, J, _) in zip(wall_forces(q, dq, x_wall), hands(q, dq)):
        ext += J[:3].T @ f
    return kk.forward_dynamics(q, dq, ext, P_PLANT)


def rk4(q, dq, tau, x_wall):
    k1q, k1v = dq, plant(q, dq, tau, x_wall)
    k2q, k2v = dq + DT / 2 * k1v, plant(q + DT / 2 * k1q, dq + DT / 2 * k1v, tau, x_wall)
    k3q, k3v = dq + DT / 2 * k2v, plant(q + DT / 2 * k2q, dq + DT / 2 * k2v, tau, x_wall)
    k4q, k4v = dq + DT * k3v, plant(q + DT * k3q, dq + DT * k3v, tau, x_wall)
    return (q + DT / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
            dq + DT / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))


def orientation_error(R, Rd):
    """Siciliano et al. 2009, eq. 3.85: 1/2 sum_i r_i x r_d,i (world axes)."""
    return 0.5 * sum(np.cross(R[:, i], Rd[:, i]) for i in range(3))


def control(q, dq, targets, push):
    A = kk.compute_A(q, P)
    b = kk.inverse_dynamics(q, dq, np.zeros(N), P)
    J = np.empty((12, N))
    a_star, jdq, f_push = np.empty(12), np.empty(12), np.zeros(12)
    for i, (ee, (T, Ji, v), Td) in enumerate(zip(EES, hands(q, dq), targets)):
        s = slice(6 * i, 6 * i + 6)
        J[s] = Ji
        jdq[s] = kk.jdot_qdot(q, dq, ee, P)
        e = np.concatenate([Td[:3, 3] - T[:3, 3], orientation_error(T[:3, :3], Td[:3, :3])])
        a_star[s] = KP * e - KD * v
        if push:  # x: force controlled, damped
            a_star[6 * i] = -KD_PUSH * v[0]
            f_push[6 * i] = F_PUSH
    AiJt = np.linalg.solve(A, J.T)  # A^-1 J^T
    Lam = np.linalg.inv(J @ AiJt)
    ddq0 = KP0 * (Q0 - q) - KD0 * dq
    # N^T A ddq0 = A ddq0 - J^T Lambda J ddq0 (J A^-1 A = J)
    null = A @ ddq0 - J.T @ (Lam @ (J @ ddq0))
    return b + J.T @ (Lam @ (a_star - jdq) + f_push) + null


def simulate(t_hold, t_push):
    q, dq = Q0.copy(), np.zeros(N)
    targets = [T.copy() for T, _, _ in hands(q, dq)]
    for T in targets:
        T[2, 3] += RAISE
    x_wall = max(T[0, 3] for T in targets) + 0.01  # 1 cm in front of the hands
    steps = int(round((t_hold + t_push) / DT))
    log = {k: np.empty((steps, 2)) for k in ("pos_err", "rot_err", "force")}
    log["t"] = np.arange(steps) * DT
    for k in range(steps):
        push = k * DT >= t_hold
        tau = control(q, dq, targets, push)
        for i, ((T, _, _), Td, f) in enumerate(zip(hands(q, dq), targets, wall_forces(q, dq, x_wall))):
            d = Td[:3, 3] - T[:3, 3]
            log["pos_err"][k, i] = np.linalg.norm(d[1:] if push else d)  # in the push: along the wall
            log["rot_err"][k, i] = np.linalg.norm(orientation_error(T[:3, :3], Td[:3, :3]))
            log["force"][k, i] = -f[0]  # the hand's push on the wall
        q, dq = rk4(q, dq, tau, x_wall)
    return log


def plot(log, t_hold, path):
    plt = pyplot()
    if plt is None:
        return
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for i, ee in enumerate(EES):
        a.plot(log["t"], log["pos_err"][:, i] * 1e3, label=f"{ee} position (mm)")
        a.plot(log["t"], log["rot_err"][:, i] * 1e3, "--", label=f"{ee} orientation (mrad)")
        b.plot(log["t"], log["force"][:, i], label=f"{ee} hand")
    b.axhline(F_PUSH, color="k", lw=0.5, ls=":", label="commanded")
    for ax in (a, b):
        ax.axvline(t_hold, color="grey", lw=0.5)
        ax.legend(fontsize=8)
    a.set_ylabel("pose error")
    a.set_title("Krang, both arms: hold, then push on a wall (operational space)")
    b.set_ylabel("force on the wall (N)")
    b.set_xlabel("time (s)")
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", action="store_true", help="0.4 s hold + 0.6 s push instead of 1 s + 2 s (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/task_space.png"))
    args = ap.parse_args(argv)
    t_hold, t_push = (0.4, 0.6) if args.short else (1.0, 2.0)
    t0 = time.perf_counter()
    log = simulate(t_hold, t_push)
    wall = time.perf_counter() - t0
    hold = (log["t"] >= t_hold / 2) & (log["t"] < t_hold)  # after the 3 cm move has settled
    end = log["t"] >= log["t"][-1] - 0.1
    print(f"Krang operational-space control, both arms: {len(log['t'])} ticks of {DT * 1e3:g} ms, "
          f"{wall:.2f} s wall")
    print(f"hold: max position error {log['pos_err'][hold].max():.3e} m, "
          f"orientation {log['rot_err'][hold].max():.3e} rad")
    print(f"push: position error along the wall {log['pos_err'][end].max():.3e} m, "
          f"orientation {log['rot_err'][end].max():.3e} rad")
    print(f"push: force on the wall {', '.join(f'{ee} {f:.3f} N' for ee, f in zip(EES, log['force'][end].mean(0)))}"
          f" (commanded {F_PUSH:g} N)")
    print(f"max force error: {np.abs(log['force'][end] - F_PUSH).max():.3e} N")
    plot(log, t_hold, args.png)


if __name__ == "__main__":
    main()

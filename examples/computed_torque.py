"""Computed-torque control of Krang: all 17 joints track a smooth trajectory
for 5 s at 1 kHz, in a simulation integrated with RK4 on forward_dynamics.

    python -m examples.computed_torque            (from the repository root; `make examples`)
    python -m examples.computed_torque --short    (0.5 s: what CI runs)

Control law (Spong, Hutchinson and Vidyasagar 2006, §8.3): with the desired
q_d(t), the joint-space PD correction is folded into the acceleration,

    tau = inverse_dynamics(q, dq, ddq_d + Kp (q_d - q) + Kd (dq_d - dq))

held for one tick (zero-order hold). The plant is the same robot carrying
a 1 kg payload in the left gripper that the controller does not know about
(the plant's parameters come from link_params), so the PD terms have work to
do. Prints the tracking error and saves a PNG of errors and torques
(matplotlib: `pip install krang-kernels[examples]`; without it the plot is
skipped with a message).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import krang_kernels as kk
from examples.plotting import pyplot, save

DT = 1e-3
KP, KD = 2500.0, 100.0  # critically damped, natural frequency 50 rad/s
AMP = np.r_[0.1, 0.2, 0.2, np.full(kk.N_DOF - 3, 0.4)]  # rad: the base joints move less
FREQ = np.linspace(0.3, 0.8, kk.N_DOF)  # Hz, one per joint


def desired(t):
    """q_d = AMP (1 - cos(w t)): smooth, starting at rest at q = 0."""
    w = 2 * np.pi * FREQ
    return AMP * (1 - np.cos(w * t)), AMP * w * np.sin(w * t), AMP * w * w * np.cos(w * t)


def payload_params(p, key="10l", extra=1.0):
    """p with `extra` kg added at link `key`'s centre of mass (the inertia about
    it scaled with the mass): all ten parameters set with link_params."""
    get = {n: p[kk.PARAM_NAMES.index(f"{n}_{key}")] for n in ("m", "MX", "MY", "MZ", "XX", "XY", "XZ",
                                                               "YY", "YZ", "ZZ")}
    m = get["m"]
    c = np.array([get["MX"], get["MY"], get["MZ"]]) / m
    J = np.array([[get["XX"], get["XY"], get["XZ"]], [get["XY"], get["YY"], get["YZ"]],
                  [get["XZ"], get["YZ"], get["ZZ"]]])
    Ic = J - m * (c @ c * np.eye(3) - np.outer(c, c))
    return kk.params_from_dict(kk.link_params(key, m + extra, c, Ic * (m + extra) / m), base=p)


def rk4(q, dq, tau, p):
    """One RK4 step of (q, dq)' = (dq, forward_dynamics(q, dq, tau))."""
    fd = kk.forward_dynamics
    k1q, k1v = dq, fd(q, dq, tau, p)
    k2q, k2v = dq + DT / 2 * k1v, fd(q + DT / 2 * k1q, dq + DT / 2 * k1v, tau, p)
    k3q, k3v = dq + DT / 2 * k2v, fd(q + DT / 2 * k2q, dq + DT / 2 * k2v, tau, p)
    k4q, k4v = dq + DT * k3v, fd(q + DT * k3q, dq + DT * k3v, tau, p)
    return (q + DT / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
            dq + DT / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))


def simulate(duration):
    model_p = kk.default_params()
    plant_p = payload_params(model_p)
    steps = int(round(duration / DT))
    q, dq = np.zeros(kk.N_DOF), np.zeros(kk.N_DOF)
    q[3:10] += 0.02  # start a little off the trajectory
    err, taus = np.empty((steps, kk.N_DOF)), np.empty((steps, kk.N_DOF))
    tau = np.empty(kk.N_DOF)
    for k in range(steps):
        qd, dqd, ddqd = desired(k * DT)
        e, de = qd - q, dqd - dq
        kk.inverse_dynamics(q, dq, ddqd + KP * e + KD * de, model_p, out=tau)
        err[k], taus[k] = e, tau
        q, dq = rk4(q, dq, tau, plant_p)
    return np.arange(steps) * DT, err, taus


def plot(t, err, taus, path):
    plt = pyplot()
    if plt is None:
        return
    fig, (a, b) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    a.plot(t, err * 1e3, lw=0.8)
    a.set_ylabel("tracking error (mrad)")
    a.set_title("Krang computed-torque tracking, 1 kg unmodelled payload in the left gripper")
    b.plot(t, taus, lw=0.8)
    b.set_ylabel("joint torque (N m)")
    b.set_xlabel("time (s)")
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", action="store_true", help="simulate 0.5 s instead of 5 s (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/computed_torque.png"))
    args = ap.parse_args(argv)
    duration = 0.5 if args.short else 5.0
    t0 = time.perf_counter()
    t, err, taus = simulate(duration)
    wall = time.perf_counter() - t0
    settled = t >= min(0.3, duration / 2)  # after the initial offset has decayed
    print(f"Krang computed torque: {len(t)} ticks of {DT * 1e3:g} ms, RK4 on forward_dynamics, "
          f"{wall:.2f} s wall")
    print(f"initial error: {np.abs(err[0]).max():.3e} rad")
    print(f"max tracking error: {np.abs(err[settled]).max():.3e} rad (after {t[settled][0]:.2f} s)")
    print(f"rms tracking error: {np.sqrt(np.mean(err[settled] ** 2)):.3e} rad")
    print(f"max |tau|: {np.abs(taus).max():.1f} N m")
    plot(t, err, taus, args.png)


if __name__ == "__main__":
    main()

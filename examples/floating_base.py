"""A quadruped in free flight: Solo12 (example-robot-data) on a free-flying base, dropped with a
spin, its twelve joints held at a crouched pose by PD, for 2 s at 1 kHz.

    python -m examples.floating_base            (from the repository root; `make examples`)
    python -m examples.floating_base --short    (0.3 s: what CI runs)

The module comes from the URDF in one call, codegen.import_urdf(..., floating_base=True)
(built on first use, then cached): q = [x, y, z, qx, qy, qz, qw, joints], v = [base linear,
base angular (base axes), joints] (Pinocchio's free-flyer convention). The plant is integrated
with RK4 on forward_dynamics, the configuration stages through `integrate` (the SE(3) exponential
on the base), with zero force and torque on the base (the first six entries of tau).

Nothing but gravity acts from outside, and the PD torques are internal, so (Featherstone 2008,
sec. 2.13; Orin, Goswami and Lee 2013 for the centroidal momentum):
* the centroidal momentum h = centroidal_map(q) v (world axes, angular part about the centre of
  mass) has a constant angular part and a linear part growing by M g t;
* the centre of mass, tracked through `com` (and its velocity through centroidal_map, h_lin / M),
  follows the ballistic parabola of its initial position and velocity;
* the energy balance holds: kinetic (v^T A v / 2) + gravity (-M g.c) + PD springs, plus the energy
  the PD dampers have dissipated (integrated along the way), stays at its initial value.
The example prints the largest deviation of each and saves a PNG of momentum, energy and CoM
height (matplotlib with the Agg backend: `pip install krang-kernels[examples]`; without it the
plot is skipped with a message).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from examples.plotting import pyplot, save
from reference.robot_data import robots_dir

DT = 1e-3
KP, KD = 4.0, 0.05  # N m/rad, N m s/rad: Solo12's legs are light (about 0.15 kg per segment)
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
CROUCH = np.array([0.0, 0.8, -1.6] * 2 + [0.0, -0.8, 1.6] * 2)  # hip abduction, hip and knee flexion, rad


def solo12_urdf() -> Path:
    """Solo12's URDF as example-robot-data installs it (with Pinocchio, `make setup`)."""
    return robots_dir() / "solo_description" / "robots" / "solo12.urdf"


def load_robot():
    import codegen

    return codegen.import_urdf(solo12_urdf(), end_effectors=FEET, floating_base=True, name="solo12_floating")


class Plant:
    """The robot, its parameters and the PD law on the joints; the base is free."""

    def __init__(self, m):
        self.m = m
        self.p = m.default_params()
        self.nv = m.N_DOF
        names = m.PARAM_NAMES
        self.g = self.p[names.index("g")] * np.array([0.0, 0.0, -1.0])  # URDF gravity: -z
        self.mass = float(np.linalg.norm(m.centroidal_map(m.neutral(), self.p)[0:3, 0]))  # M: Ag[0:3, vx] = M R
        self.q_nom = CROUCH

    def tau(self, q, v):
        t = np.zeros(self.nv)
        t[6:] = KP * (self.q_nom - q[7:]) - KD * v[6:]
        return t

    def accel(self, q, v):
        return self.m.forward_dynamics(q, v, self.tau(q, v), self.p)

    def rk4(self, q, v):
        """One RK4 step of (q, v)' = (v, forward_dynamics); a stage's configuration is q (+) dt c v
        through `integrate`, so the quaternion stays unit."""
        ig = self.m.integrate
        k1v, k1a = v, self.accel(q, v)
        q2, v2 = ig(q, k1v, DT / 2), v + DT / 2 * k1a
        k2v, k2a = v2, self.accel(q2, v2)
        q3, v3 = ig(q, k2v, DT / 2), v + DT / 2 * k2a
        k3v, k3a = v3, self.accel(q3, v3)
        q4, v4 = ig(q, k3v, DT), v + DT * k3a
        k4v, k4a = v4, self.accel(q4, v4)
        return (ig(q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, DT),
                v + DT / 6 * (k1a + 2 * k2a + 2 * k3a + k4a))

    def energy(self, q, v):
        """kinetic + gravity + PD springs."""
        m, p = self.m, self.p
        e = q[7:] - self.q_nom
        return 0.5 * v @ m.compute_A(q, p) @ v - self.mass * self.g @ m.com(q, p) + 0.5 * KP * e @ e

    def dissipation_rate(self, v):
        return KD * v[6:] @ v[6:]


def simulate(duration):
    m = load_robot()
    plant = Plant(m)
    q = m.neutral()
    q[2] = 1.0  # base 1 m up, level
    q[7:] = CROUCH + np.linspace(-0.15, 0.15, 12)  # joints off their target: the PD has work to do
    v = np.zeros(plant.nv)
    v[0:3] = (0.3, 0.0, 1.5)  # m/s, base axes: thrown forward and up
    v[3:6] = (0.5, 1.0, 2.0)  # rad/s: spinning
    steps = int(round(duration / DT))
    t = np.arange(steps + 1) * DT
    h, c, cdot, energy, dissipated = (np.empty((steps + 1, 6)), np.empty((steps + 1, 3)), np.empty((steps + 1, 3)),
                                      np.empty(steps + 1), np.zeros(steps + 1))
    qnorm = 0.0
    for k in range(steps + 1):
        Ag = m.centroidal_map(q, plant.p)
        h[k] = Ag @ v
        c[k] = m.com(q, plant.p)
        cdot[k] = m.com_jacobian(q, plant.p) @ v
        energy[k] = plant.energy(q, v)
        qnorm = max(qnorm, abs(np.linalg.norm(q[3:7]) - 1.0))
        if k == steps:
            break
        d0 = plant.dissipation_rate(v)
        q, v = plant.rk4(q, v)
        dissipated[k + 1] = dissipated[k] + DT / 2 * (d0 + plant.dissipation_rate(v))  # trapezoid
    return dict(t=t, h=h, c=c, cdot=cdot, energy=energy, dissipated=dissipated, mass=plant.mass, g=plant.g,
                qnorm=qnorm, joint_error=np.abs(q[7:] - CROUCH).max())


def report(r):
    t, h, M, g = r["t"], r["h"], r["mass"], r["g"]
    lin = h[:, 0:3] - np.outer(t, M * g)  # linear momentum without gravity's impulse: constant
    ballistic = r["c"][0] + np.outer(t, r["cdot"][0]) + 0.5 * np.outer(t * t, g)
    balance = r["energy"] + r["dissipated"]
    scale = max(1.0, np.abs(h[0]).max())
    print(f"robot mass M = {M:.3f} kg; {len(t) - 1} steps of {DT * 1e3:.0f} ms")
    print(f"max angular momentum drift: {np.abs(h[:, 3:] - h[0, 3:]).max() / scale:.3e} "
          "(about the CoM, world axes, relative)")
    print(f"max linear momentum error: {np.abs(lin - lin[0]).max() / scale:.3e} (vs h0 + M g t, relative)")
    print(f"max CoM deviation from the ballistic parabola: {np.abs(r['c'] - ballistic).max():.3e} m")
    print(f"max CoM velocity mismatch: {np.abs(r['cdot'] - h[:, 0:3] / M).max():.3e} m/s "
          "(com_jacobian v vs the linear momentum / M)")
    print(f"energy balance error: {np.abs(balance - balance[0]).max() / abs(balance[0]):.3e} (relative)")
    print(f"energy dissipated by the PD dampers: {r['dissipated'][-1]:.3e} J")
    print(f"max quaternion norm error: {r['qnorm']:.3e}")
    print(f"final joint error: {r['joint_error']:.3e} rad (vs the crouch)")
    return lin, ballistic, balance


def plot(r, lin, ballistic, balance, png):
    plt = pyplot()
    if plt is None:
        return

    t, h = r["t"], r["h"]
    fig, ax = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    for i, a in enumerate("xyz"):
        ax[0].plot(t, h[:, 3 + i], label=f"angular {a} (kg m^2/s)")
        ax[0].plot(t, lin[:, i], "--", label=f"linear {a} - M g t (kg m/s)")
    ax[0].set_title("centroidal momentum (world axes): constant in free flight")
    ax[0].legend(fontsize=7, ncol=2)
    ax[1].plot(t, r["energy"], label="kinetic + gravity + PD springs")
    ax[1].plot(t, balance, label="... + dissipated by the dampers")
    ax[1].set_ylabel("J")
    ax[1].legend(fontsize=8)
    ax[2].plot(t, r["c"][:, 2], label="CoM height (com)")
    ax[2].plot(t, ballistic[:, 2], ":", label="ballistic parabola")
    ax[2].set_ylabel("m")
    ax[2].set_xlabel("t (s)")
    ax[2].legend(fontsize=8)
    save(fig, png)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="0.3 s instead of 2 s (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/floating_base.png"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = simulate(0.3 if args.short else 2.0)
    print(f"simulated in {time.perf_counter() - t0:.1f} s (the first run also builds the module)")
    lin, ballistic, balance = report(r)
    args.png.parent.mkdir(parents=True, exist_ok=True)
    plot(r, lin, ballistic, balance, args.png)


if __name__ == "__main__":
    main()

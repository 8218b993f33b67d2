"""A humanoid standing under a push: Talos (example-robot-data) on both soles, its posture held by
a joint-space PD with a contact-consistent gravity feedforward, pushed at the pelvis for 0.1 s,
simulated with constrained_dynamics at 1 kHz; its sole forces are plotted.

    python -m examples.humanoid_push            (from the repository root; `make examples`)
    python -m examples.humanoid_push --short    (0.4 s: the push and the first sway; what CI runs)

The module comes from the URDF in one call, codegen.import_urdf(..., floating_base=True,
contacts=["left_sole_link:6d", "right_sole_link:6d"]) (built on first use, then cached; without
the derivative kernels, which the simulation does not need, the build takes 1 to 2 minutes on 2 cores):
38 velocities, 6 of the free-flying base, 32 joints (the grippers' mimic joints read as joints of
their own, mimic="independent"). Joint friction is off (friction=False): Coulomb friction's
sign(v) at rest would chatter at a 1 ms step. The rotors are the SRDF's (reflected inertia
0.1 kg m^2 per joint, set at run time as the parameters Ia_k).

Stance: the SRDF's "half_sitting" (knees bent), the base height recomputed with fk so that both
soles are at z = 0. Feedforward: at rest, g(q0) = S^T tau_ff + Jc^T lambda0 (Jc the soles'
Jacobian, 12 x 38); the base's six rows fix the soles' wrenches up to internal forces, lambda0 is
the least-norm solution, and tau_ff = g_joints - Jc_joints^T lambda0 holds the stance exactly
(constrained_dynamics returns ddq = 0 and lambda_c = lambda0 there). Feedback: PD about the
stance, stiff on the legs and the torso, elsewhere 5 Hz and critically damped on A's diagonal
(rotor included); on the constrained motions the fastest damping rate times dt is about 0.5,
well inside the explicit step's bound of 2. The push: a half sine of force, horizontal in the
world, at the base's origin (tau[0:3] = R^T f, base axes). Integration: semi-implicit Euler,
v += dt ddq, q = integrate(q, v, dt) (the SE(3) exponential on the base), both soles active, with
Baumgarte velocity damping kd. A flat contact takes no position gain, so the soles' placement
drifts by the step's error, a few 1e-7 m and rad over 2 s (about as much with kd = 0: the velocity
error it damps is not what drifts here); the example prints it.

The soles are bilateral constraints: they never lift nor slip in the simulation. The example checks
what a real floor could give, per sole and over time: normal force > 0 (no lift-off), tangential
force < friction coefficient x normal force (no slip), centre of pressure inside the sole's
rectangle (no tipping about an edge; Talos's sole, 0.21 m x 0.13 m, from the collision box of
example-robot-data's talos_reduced_box.urdf). It prints the extremes and a verdict, and saves a PNG of
the push, the base and CoM trajectory, each sole's normal and tangential force, moments and centre
of pressure (matplotlib with the Agg backend: `pip install krang-kernels[examples]`; without it the
plot is skipped, one line).
"""
from __future__ import annotations

import argparse
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from examples.plotting import pyplot, save
from reference.robot_data import robots_dir

DT = 1e-3
SOLES = ["left_sole_link", "right_sole_link"]
BOTH = 0b11  # contact mask: bit k is SOLES[k]
KD_BAUMGARTE = 10.0  # 1/s: the soles' velocity error decays at this rate
KP_LEGS, KD_LEGS = 2000.0, 100.0  # N m/rad, N m s/rad: legs and torso, the joints that carry the body
OMEGA, ZETA = 2 * np.pi * 5.0, 1.0  # the other joints: 5 Hz, critically damped, on A's diagonal
PUSH = np.array([150.0, 100.0, 0.0])  # N, world axes: the push on the pelvis at its peak (180 N)
PUSH_START, PUSH_TIME = 0.05, 0.1  # s
MU_FRICTION = 0.7  # the floor's friction coefficient, for the slip check
SOLE_HALF = np.array([0.105, 0.065])  # m: half the sole's length (x) and width (y), about its origin


def talos_files() -> tuple[Path, Path]:
    """Talos's URDF and SRDF as example-robot-data installs them (with Pinocchio, `make setup`)."""
    root = robots_dir() / "talos_data"
    return root / "robots" / "talos_reduced.urdf", root / "srdf" / "talos.srdf"


def load_robot():
    import codegen

    return codegen.import_urdf(talos_files()[0], end_effectors=SOLES, floating_base=True,
                               contacts=[f"{s}:6d" for s in SOLES], mimic="independent", friction=False,
                               kernels=("contact_dynamics",))


def half_sitting(m, srdf: Path) -> np.ndarray:
    """The SRDF's "half_sitting" configuration: its base (root_joint: x y z qx qy qz qw, Pinocchio's
    order) and joint angles (JOINT_NAMES order; the grippers, which it leaves out, at 0)."""
    state = next(g for g in ET.parse(srdf).getroot().iter("group_state") if g.get("name") == "half_sitting")
    values = {j.get("name"): [float(x) for x in j.get("value").split()] for j in state.iter("joint")}
    q = m.neutral()
    q[0:7] = values["root_joint"]
    q[7:] = [values.get(n, [0.0])[0] for n in m.JOINT_NAMES[6:]]
    return q


def rotor_params(m, srdf: Path) -> np.ndarray:
    """Default parameters with the SRDF's rotors: each joint's reflected rotor inertia Ia = rotor inertia x
    gear ratio^2 (the SRDF's `mass` and `gear_ratio`, as Pinocchio's loadRotorParameters reads them, the
    armature on A's diagonal); the grippers, which it leaves out, keep 0."""
    rotors = {j.get("name"): float(j.get("mass")) * float(j.get("gear_ratio")) ** 2
              for group in ET.parse(srdf).getroot().iter("rotor_params") for j in group.iter("joint")}
    ia = [n for n in m.PARAM_NAMES if n.startswith("Ia_")]  # one per joint (its child link), JOINT_NAMES order
    assert len(ia) == len(m.JOINT_NAMES) - 6
    return m.params_from_dict({k: rotors[j] for k, j in zip(ia, m.JOINT_NAMES[6:]) if j in rotors})


def rotation(quat) -> np.ndarray:
    """The rotation matrix of a unit quaternion x, y, z, w."""
    x, y, z, w = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def push(t: float) -> np.ndarray:
    """The push at time t: a half sine from PUSH_START, PUSH_TIME long, world axes (N)."""
    s = (t - PUSH_START) / PUSH_TIME
    return PUSH * np.sin(np.pi * s) if 0.0 <= s <= 1.0 else np.zeros(3)


class Stance:
    """The standing robot: its stance q0, the feedforward that holds it and the PD gains."""

    def __init__(self, m):
        self.m = m
        srdf = talos_files()[1]
        self.p = rotor_params(m, srdf)
        q = half_sitting(m, srdf)
        self.srdf_height = q[2]
        q[2] -= min(m.fk(q, s, self.p)[2, 3] for s in SOLES)  # the lower sole on z = 0
        self.q0 = q
        nv, zero = m.N_DOF, np.zeros(m.N_DOF)
        g = m.inverse_dynamics(q, zero, zero, self.p)  # gravity: the torques that hold q0 unsupported
        Jc = m.contact_jacobian(q, BOTH, self.p)
        # the base's 6 rows: the soles' 12-row wrench carries the weight; the least-norm one
        self.lambda0 = np.linalg.lstsq(Jc[:, :6].T, g[:6], rcond=None)[0]
        self.tau_ff = g[6:] - Jc[:, 6:].T @ self.lambda0
        legs = np.array([n.startswith(("leg_", "torso_")) for n in m.JOINT_NAMES[6:]])
        inertia = np.diag(m.compute_A(q, self.p))[6:]
        self.kp = np.where(legs, KP_LEGS, OMEGA ** 2 * inertia)
        self.kd = np.where(legs, KD_LEGS, 2 * ZETA * OMEGA * inertia)
        self.mass = float(m.compute_A(q, self.p)[0, 0])
        self.nv = nv

    def tau(self, q, v, t):
        tau = np.zeros(self.nv)
        tau[0:3] = rotation(q[3:7]).T @ push(t)  # the push on the base, base axes
        tau[6:] = self.tau_ff + self.kp * (self.q0[7:] - q[7:]) - self.kd * v[6:]
        return tau


def sole_wrenches(m, q, lam, p):
    """Each sole's force and moment (about its origin) in world axes, and its centre of pressure in
    its own axes (m), from lambda_c (force, moment per sole, the sole's axes)."""
    out = []
    for k, s in enumerate(SOLES):
        f, n = lam[6 * k:6 * k + 3], lam[6 * k + 3:6 * k + 6]
        R = m.fk(q, s, p)[:3, :3]
        cop = np.array([-n[1], n[0]]) / f[2] if f[2] > 0 else np.full(2, np.inf)
        out.append((R @ f, R @ n, cop))
    return out


def simulate(duration):
    m = load_robot()
    st = Stance(m)
    q, v = st.q0.copy(), np.zeros(st.nv)
    ddq, lam = m.constrained_dynamics(q, v, st.tau(q, v, 0.0), BOTH, params=st.p)
    rest = (np.abs(ddq).max(), np.abs(lam - st.lambda0).max())  # the stance is an equilibrium
    poses0 = [m.fk(q, s, st.p) for s in SOLES]
    steps = int(round(duration / DT))
    t = np.arange(steps + 1) * DT
    n = steps + 1
    base, com, f, tq, cop, pushes = (np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 2, 3)), np.empty((n, 2, 3)),
                                     np.empty((n, 2, 2)), np.empty((n, 3)))
    for k in range(n):
        tau = st.tau(q, v, t[k])
        ddq, lam = m.constrained_dynamics(q, v, tau, BOTH, kd=KD_BAUMGARTE, params=st.p)
        base[k], com[k], pushes[k] = q[0:3], m.com(q, st.p), push(t[k])
        for j, (fw, nw, c) in enumerate(sole_wrenches(m, q, lam, st.p)):
            f[k, j], tq[k, j], cop[k, j] = fw, nw, c
        if k == steps:
            break
        v = v + DT * ddq
        q = m.integrate(q, v, DT)
    drift = []
    for s, T0 in zip(SOLES, poses0):
        T = m.fk(q, s, st.p)
        dR = T0[:3, :3].T @ T[:3, :3]
        angle = np.arctan2(np.linalg.norm(dR - dR.T) / np.sqrt(8), (np.trace(dR) - 1) / 2)  # accurate near 0
        drift.append((np.linalg.norm(T[:3, 3] - T0[:3, 3]), angle))
    return dict(t=t, base=base, com=com, f=f, tq=tq, cop=cop, push=pushes, mass=st.mass, rest=rest,
                drift=drift, sole_z=[T[2, 3] for T in poses0], q0=st.q0, srdf_height=st.srdf_height,
                joint_dev=np.abs(q[7:] - st.q0[7:]).max())


def report(r):
    t, f, cop = r["t"], r["f"], r["cop"]
    M = r["mass"]
    print(f"Talos: mass {M:.2f} kg, 38 velocities; {len(t) - 1} steps of {DT * 1e3:.0f} ms")
    print(f"stance: base at {r['q0'][2]:.6f} m puts both soles at z = 0 (|z| <= "
          f"{max(abs(z) for z in r['sole_z']):.1e} m; the SRDF's half_sitting says {r['srdf_height']:.6f} m)")
    print(f"at rest: max |ddq| {r['rest'][0]:.3e}, max |lambda_c - lambda0| {r['rest'][1]:.3e} N "
          "(the feedforward holds the stance)")
    print(f"peak push: {np.linalg.norm(r['push'], axis=1).max():.3e} N (world x, y: {PUSH[0]:.0f}, {PUSH[1]:.0f} N), "
          f"a half sine of {PUSH_TIME:.2f} s (impulse {np.linalg.norm(PUSH) * 2 * PUSH_TIME / np.pi:.2f} N s)")
    print(f"max CoM excursion: {np.linalg.norm(r['com'][:, :2] - r['com'][0, :2], axis=1).max():.3e} m "
          f"(horizontal), base {np.linalg.norm(r['base'][:, :2] - r['base'][0, :2], axis=1).max():.3e} m")
    normal = f[:, :, 2]
    friction = np.linalg.norm(f[:, :, :2], axis=2) / np.where(normal > 0, normal, np.nan)
    cop_use = np.abs(cop) / SOLE_HALF
    lift = bool((normal <= 0).any())
    slip = bool(~(friction < MU_FRICTION).all())
    tip = bool((cop_use >= 1).any())
    for j, s in enumerate(SOLES):
        print(f"{s}: normal force {normal[:, j].min():.1f} to {normal[:, j].max():.1f} N "
              f"(at rest {normal[0, j]:.1f}), max |tangential|/normal {np.nanmax(friction[:, j]):.3f}, "
              f"CoP up to {cop_use[:, j, 0].max():.0%} of the half length, {cop_use[:, j, 1].max():.0%} "
              "of the half width")
    print(f"min normal force: {normal.min():.3e} N")
    print(f"max friction ratio: {np.nanmax(friction):.3e} (|tangential| / normal; slips above mu = {MU_FRICTION})")
    print(f"max CoP / sole edge: {cop_use.max():.3e} (tips about an edge at 1)")
    print("a real floor: " + ", ".join(f"{what} {'YES' if bad else 'no'}" for what, bad in
                                       (("lift-off", lift), ("slip", slip), ("tipping", tip))))
    for s, (d, a) in zip(SOLES, r["drift"]):
        print(f"{s} drift at the end: {d:.3e} m, {a:.3e} rad")
    print(f"max sole drift: {max(d for d, _ in r['drift']):.3e} m, {max(a for _, a in r['drift']):.3e} rad")
    print(f"final joint deviation from the stance: {r['joint_dev']:.3e} rad")


def plot(r, png):
    plt = pyplot()
    if plt is None:
        return
    t = r["t"]
    fig, ax = plt.subplots(5, 1, figsize=(8, 13), sharex=True)
    for i, a in enumerate("xy"):
        ax[0].plot(t, r["push"][:, i], label=f"push {a} (N)")
    ax[0].set_title("push on the pelvis (world axes)")
    ax[0].legend(fontsize=8)
    for i, a in enumerate("xyz"):
        ax[1].plot(t, 1e3 * (r["com"][:, i] - r["com"][0, i]), label=f"CoM {a}")
        ax[1].plot(t, 1e3 * (r["base"][:, i] - r["base"][0, i]), "--", label=f"base {a}")
    ax[1].set_ylabel("mm from the stance")
    ax[1].legend(fontsize=7, ncol=3)
    for j, s in enumerate(SOLES):
        ax[2].plot(t, r["f"][:, j, 2], label=f"{s} normal")
        ax[2].plot(t, np.linalg.norm(r["f"][:, j, :2], axis=1), ":", label=f"{s} |tangential|")
    ax[2].set_ylabel("N")
    ax[2].legend(fontsize=7)
    for j, s in enumerate(SOLES):
        for i, a in enumerate("xy"):
            ax[3].plot(t, r["tq"][:, j, i], label=f"{s} moment {a}")
    ax[3].set_ylabel("N m (about the sole, world axes)")
    ax[3].legend(fontsize=7, ncol=2)
    for j, s in enumerate(SOLES):
        for i, a in enumerate(("length", "width")):
            ax[4].plot(t, r["cop"][:, j, i] / SOLE_HALF[i], label=f"{s} CoP along its {a}")
    for edge in (-1, 1):
        ax[4].axhline(edge, color="k", lw=0.8, ls="--")
    ax[4].set_ylabel("CoP / half the sole")
    ax[4].set_xlabel("t (s)")
    ax[4].legend(fontsize=7, ncol=2)
    save(fig, png)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="0.4 s instead of 2 s (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/humanoid_push.png"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = simulate(0.4 if args.short else 2.0)
    print(f"simulated in {time.perf_counter() - t0:.1f} s (the first run also builds the module)")
    report(r)
    plot(r, args.png)


if __name__ == "__main__":
    main()

"""Solo12 trotting (example-robot-data): Crocoddyl's quadruped gait problem solved by iLQR on the
contact kernels and their derivatives, then again on Pinocchio's, side by side.

    python -m examples.quadruped_mpc            (from the repository root; `make examples`)
    python -m examples.quadruped_mpc --short    (one short trot cycle: what CI runs)

The module comes from the URDF in one call, codegen.import_urdf(..., floating_base=True,
contacts=FEET) (built on first use, then cached): q = [x, y, z, qx, qy, qz, qw, 12 joints], v =
[base linear, base angular (base axes), joints]; Solo12's URDF has no friction and no rotors.

The problem is Crocoddyl's SimpleQuadrupedalGaitProblem.createTrottingProblem (crocoddyl/utils/
quadruped.py, 3.2.1) with the trot of its quadrupedal_gaits example (steps of 0.15 m, 0.1 m high,
25 knots of 10 ms a step, 2 knots of four-foot support between steps), rebuilt node for node:
* a contact node holds its stance feet (3d point contacts, world axes, Baumgarte kd = 50/s as
  Crocoddyl's ContactModel3D gains [0, 50]): x+ by symplectic Euler on constrained_dynamics,
  v+ = v + dt ddq, q+ = q (+) dt v+ (integrate: the SE(3) exponential on the base). Its cost, times
  dt: CoM on its reference (1e6), swing feet on their arcs (1e6), each stance foot's force in the
  linearized friction cone (mu = 0.7, four facets and fz >= 0, a quadratic barrier, 1e1), the state
  near the standing pose (1e1, Crocoddyl's weights: base orientation 500, joints 0.01, base
  velocity 10, joint velocities 1, base position free) and the torques (1e-1);
* a touchdown node is an impact (impulse_dynamics, plastic): x+ = (q, v+), its cost the landing
  feet on their targets (1e7) and the state (1e1, its own weights); no dt;
* the last node costs the state only.
Crocoddyl's state-bounds barrier is left out: Solo12's URDF limits (10 rad, 1000 rad/s) never bind.
Full: two trot cycles in one horizon (112 nodes, 1.08 s), the second cycle's references carrying
on from the first's; --short: one cycle of 10-knot steps (26 nodes). Checked once against
Crocoddyl itself (3.2.1 with Pinocchio 4.0.0, in an environment of its own, see below): its
ShootingProblem, built by createTrottingProblem's calls, gives our solution the same cost to 1e-15
and its next states to 1e-13, and its FDDP and DDP converge to our final cost to 1e-10, in about
as many iterations.

The solver (the same for both runs): iLQR in the tangent space of the state (36 = 2 x 18), Gauss-
Newton Hessians of the costs, regularization and line search as examples/ilqr.py (Tassa, Erez and
Todorov 2012), started from Crocoddyl's quasi-static torques; it stops when the expected decrease
is below 1e-9 of the cost. Its Jacobians need, per contact node, d ddq/d(q, v, tau) and
d lambda/d(q, v, tau) (the friction cost is on the forces): ours, constrained_dynamics_derivatives
(batched over the nodes of each contact set); the reference, Pinocchio's constraintDynamics and
computeConstraintDynamicsDerivatives per node. At a touchdown, d v+/d(q, v): Pinocchio's
computeImpulseDynamicsDerivatives (its ddq_dv there is d(v+ - v)/dv; and on one Data its
derivatives drift from call to call unless initConstraintDynamics runs first: 4.1.0); ours
impulse_dynamics_derivatives (batched). The kinematics of the costs (CoM, feet, their Jacobians) come
from the same side (fk, jacobian, com, com_jacobian; Pinocchio's frames and jacobianCenterOfMass);
the SE(3) algebra of the state (difference, the Jacobians of integrate and of the difference) is
numpy, shared. Prints both runs' iterations, final costs (the same to rounding: the runs take the
same steps) and time per iteration; in this Python loop the backward pass and the cost's assembly
dominate an iteration, so the robot's functions' own time is printed too, split into dynamics
(the rollouts), derivatives and kinematics. Saves a PNG of the base trajectory and the stance feet's
contact forces (matplotlib: `pip install krang-kernels[examples]`; else skipped, one line).

Why our own iLQR, not only Crocoddyl: this example runs in .venv with everything the project tests
against (Pinocchio 4.1.0), and shows the whole loop, kernels to solver, in numpy. Crocoddyl itself is
examples/crocoddyl_quadruped.py: crocoddyl 3.2.1 (PyPI, the latest) is built against libpinocchio 4.0.0
(next to 4.1.0 building this gait problem crashes: MemoryError in ShootingProblem, or a segmentation
fault creating a four-contact model's data), so it runs in an environment of its own, .venv-crocoddyl
(`make crocoddyl-env`), where Crocoddyl's FDDP solves this same trot with each contact node's dynamics
and derivatives from constrained_dynamics(_derivatives) through a DifferentialActionModel, side by side
with its native model.
"""
from __future__ import annotations

import argparse
import functools
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from examples.plotting import pyplot, save
from reference.solo12_contacts import FEET, KD, load_robot, solo_files

LF, RF, LH, RH = range(4)
ALL = 0b1111
NV, NU, NX = 18, 12, 36  # velocities, torques, tangent state
DT = 1e-2
TROT = dict(length=0.15, height=0.1, knots=25, support=2)  # Crocoddyl's quadrupedal_gaits trot
SHORT = dict(length=0.15, height=0.1, knots=10, support=2)
W_COM, W_FOOT, W_CONE, W_STATE, W_CTRL = 1e6, 1e6, 1e1, 1e1, 1e-1
W_FOOT_IMPACT, W_STATE_IMPACT = 1e7, 1e1
STATE_W = np.array([0.0] * 3 + [500.0] * 3 + [0.01] * 12 + [10.0] * 6 + [1.0] * 12)
STATE_W_IMPACT = np.array([1.0] * 6 + [10.0] * 12 + [10.0] * 18)
MU = 0.7
CONE = np.array([[1, 0, -MU], [-1, 0, -MU], [0, 1, -MU], [0, -1, -MU], [0, 0, 1.0]])  # Crocoddyl's rows
CONE_LB = np.array([-np.inf] * 4 + [0.0])
CONE_UB = np.array([0.0] * 4 + [np.inf])


def standing(m) -> np.ndarray:
    """The SRDF's "standing" configuration (root_joint: x y z qx qy qz qw; joints by name)."""
    state = next(g for g in ET.parse(solo_files()[1]).getroot().iter("group_state") if g.get("name") == "standing")
    values = {j.get("name"): [float(x) for x in j.get("value").split()] for j in state.iter("joint")}
    return np.array(values["root_joint"] + [values[n][0] for n in m.JOINT_NAMES[6:]])


# --- SE(3) algebra of the free-flyer's state (numpy, shared by both runs), batched over nodes ----------

def skew(w):
    S = np.zeros(w.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return S


def ad(xi):
    """ad of twists (linear first): [[w x, rho x], [0, w x]]."""
    A = np.zeros(xi.shape[:-1] + (6, 6))
    A[..., :3, :3] = A[..., 3:, 3:] = skew(xi[..., 3:])
    A[..., :3, 3:] = skew(xi[..., :3])
    return A


def series(M, shift):
    """sum_k M^k / (k + shift)!: exp(M) for shift 0, (exp(M) - I) M^-1 for shift 1 (to rounding)."""
    term, out = np.broadcast_to(np.eye(M.shape[-1]), M.shape), np.zeros_like(M)
    for k in range(60):
        out = out + term
        if np.abs(term).max() < 1e-17:
            break
        term = term @ M / (k + 1 + shift)
    return out


def cross(a, b):
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def rotation(quat):
    """Rotation matrices of unit quaternions x, y, z, w."""
    x, y, z, w = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    R = np.empty(quat.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    return R


def log6(q_a, q_b):
    """log(M_a^-1 M_b) of the bases of configurations q_a, q_b (Pinocchio's difference): (rho, w)."""
    Ra_T = np.swapaxes(rotation(q_a[..., 3:7]), -1, -2)
    R = Ra_T @ rotation(q_b[..., 3:7])
    p = (Ra_T @ (q_b[..., :3] - q_a[..., :3])[..., None])[..., 0]
    th = np.arccos(np.clip((R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2] - 1) / 2, -1, 1))
    vee = np.empty(p.shape)
    vee[..., 0], vee[..., 1], vee[..., 2] = R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]
    small, t = th < 1e-5, np.where(th < 1e-5, 1.0, th)
    w = np.where(small, 0.5 + th * th / 12, t / (2 * np.sin(t)))[..., None] * vee
    # rho = V(w)^-1 p, V^-1 = I - W / 2 + (1 - (th / 2) cot(th / 2)) / th^2 W^2
    c = np.where(small, 1 / 12 + th * th / 720, (1 - t * np.sin(t) / (2 * (1 - np.cos(t)))) / (t * t))
    wp = cross(w, p)
    return np.concatenate([p - 0.5 * wp + c[..., None] * cross(w, wp), w], -1)


def difference(q_a, v_a, q_b, v_b):
    """x_b (-) x_a in the tangent space (36): base log6, joints, velocities."""
    return np.concatenate([log6(q_a, q_b), q_b[..., 7:] - q_a[..., 7:], v_b - v_a], -1)


def tangent_blocks(xi):
    """Jacobians of the free-flyer's part of (q (+) xi) with respect to q (Ad(exp(xi))^-1) and xi (Jexp6)."""
    A = -ad(xi)
    return series(A, 0), series(A, 1)


# --- the problem: Crocoddyl's trot, node for node -----------------------------------------------------

@dataclass
class Node:
    mask: int  # the stance feet, or at a touchdown the landing ones
    impact: bool = False
    com: np.ndarray | None = None  # CoM reference
    feet: tuple = ()  # (foot, target) pairs


def mask_of(feet) -> int:
    return sum(1 << f for f in feet)


def active(mask) -> list[int]:
    return [f for f in range(4) if mask >> f & 1]


def trot(m, p, q0, cycles, length, height, knots, support):
    """createTrottingProblem's nodes from q0, `cycles` times over: support, the right-front and left-hind
    feet's step (half a step in the first cycle), support, the other diagonal's step; each cycle's
    references continue the last's; then the terminal node."""
    feet = [m.fk(q0, f, p)[:3, 3].copy() for f in range(4)]
    com = np.mean(feet, axis=0)
    com[2] = m.com(q0, p)[2]
    nodes = []
    for c in range(cycles):
        for swing, step in (((RF, LH), 0.5 * length if c == 0 else length), ((LF, RH), length)):
            nodes += [Node(ALL)] * support
            ph = knots / 2
            for k in range(knots):
                dp = np.array([step * (k + 1) / knots, 0.0, height * (1 - abs(k - ph) / ph)])
                tasks = tuple((f, feet[f] + dp) for f in swing)
                nodes.append(Node(ALL & ~mask_of(swing), com=com + dp * [0.5, 0, 0], feet=tasks))
            nodes.append(Node(mask_of(swing), impact=True, feet=tasks))  # the last arc point, as Crocoddyl
            com = com + [0.5 * step, 0, 0]
            for f in swing:
                feet[f] = feet[f] + [step, 0, 0]
    return nodes + [Node(ALL)]  # the terminal node: its state cost only


def quasi_static(m, p, q, nodes):
    """Crocoddyl's quasiStatic first guess: at q and rest, the least-norm (u, lambda) with S^T u +
    Jc^T lambda = gravity, per node (touchdowns: none)."""
    g = m.inverse_dynamics(q, np.zeros(NV), np.zeros(NV), p)
    U = np.zeros((len(nodes) - 1, NU))
    for k, n in enumerate(nodes[:-1]):
        if not n.impact:
            Jc = m.contact_jacobian(q, n.mask, p)[:3 * len(active(n.mask))]
            B = np.hstack([np.vstack([np.zeros((6, NU)), np.eye(NU)]), Jc.T])
            U[k] = (np.linalg.pinv(B) @ g)[:NU]
    return U


# --- the robot's functions: our kernels or Pinocchio --------------------------------------------------

def timed(f):
    """Adds the call's time to self.seconds and to self.split[its kind] (the robot's functions' own time)."""
    kind = {"contact": "dynamics", "impact": "dynamics", "integrate": "dynamics", "kinematics": "kinematics"}.get(
        f.__name__, "derivatives")

    @functools.wraps(f)
    def wrapper(self, *args):
        t0 = time.perf_counter()
        try:
            return f(self, *args)
        finally:
            dt = time.perf_counter() - t0
            self.seconds += dt
            self.split[kind] = self.split.get(kind, 0.0) + dt
    return wrapper


class Kernels:
    """constrained_dynamics and its derivatives, impulse_dynamics, the kinematics: the module's."""
    label = "ours (constrained_dynamics, constrained_dynamics_derivatives)"

    def __init__(self, m):
        self.m, self.p, self.seconds, self.split = m, m.default_params(), 0.0, {}
        self.tau = np.zeros(NV)

    @timed
    def contact(self, q, v, u, mask):
        self.tau[6:] = u
        return self.m.constrained_dynamics(q, v, self.tau, mask, 0.0, KD, params=self.p)

    @timed
    def impact(self, q, v, mask):
        return self.m.impulse_dynamics(q, v, mask, params=self.p)[0]

    @timed
    def integrate(self, q, v, dt):
        return self.m.integrate(q, v, dt)

    @timed
    def contact_derivatives(self, Q, V, U, mask):
        tau = np.concatenate([np.zeros((len(Q), 6)), U], axis=1)
        return self.m.constrained_dynamics_derivatives(Q, V, tau, mask, 0.0, KD, params=self.p)

    @timed
    def impact_derivatives(self, Q, V, mask):
        return self.m.impulse_dynamics_derivatives(Q, V, mask, params=self.p)[:2]

    @timed
    def kinematics(self, Q, jacobians):
        m, p = self.m, self.p
        feet = np.stack([m.fk(Q, f, p)[:, :3, 3] for f in range(4)], 1)
        if not jacobians:
            return m.com(Q, p), feet
        J = np.stack([m.jacobian(Q, f, "world", p)[:, :3] for f in range(4)], 1)
        return m.com(Q, p), feet, m.com_jacobian(Q, p), J


class Pinocchio:
    """The same from Pinocchio (buildModelFromUrdf with a free-flyer), node by node."""
    label = "Pinocchio (constraintDynamics, computeConstraintDynamicsDerivatives)"

    def __init__(self, urdf):
        import pinocchio as pin

        self.pin, self.seconds, self.split = pin, 0.0, {}
        self.model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        self.frames = [self.model.getFrameId(f) for f in FEET]
        self.sets = {}
        self.tau = np.zeros(NV)

    def constraints(self, mask, kd):
        """(data, constraint models, their data) of a contact set: one Data per set, as each is sized."""
        if (mask, kd) not in self.sets:
            pin, cms = self.pin, []
            for f in active(mask):
                frame = self.model.frames[self.frames[f]]
                cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, self.model, frame.parentJoint,
                                              frame.placement, pin.LOCAL_WORLD_ALIGNED)
                gains = cm.m_baumgarte_parameters
                gains.Kp, gains.Kd = 0.0, kd
                cm.setBaumgarteCorrectorParameters(gains)
                cms.append(cm)
            cms = pin.StdVec_RigidConstraintModel(cms)
            cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
            data = self.model.createData()
            pin.initConstraintDynamics(self.model, data, cms, cds)
            self.sets[mask, kd] = data, cms, cds
        return self.sets[mask, kd]

    @timed
    def contact(self, q, v, u, mask):
        data, cms, cds = self.constraints(mask, KD)
        self.tau[6:] = u
        return self.pin.constraintDynamics(self.model, data, q, v, self.tau, cms, cds), data.lambda_c.copy()

    @timed
    def impact(self, q, v, mask):
        data, cms, cds = self.constraints(mask, 0.0)
        return self.pin.impulseDynamics(self.model, data, q, v, cms, cds, 0.0).copy()

    @timed
    def integrate(self, q, v, dt):
        return self.pin.integrate(self.model, q, v * dt)

    @timed
    def contact_derivatives(self, Q, V, U, mask):
        pin, (data, cms, cds) = self.pin, self.constraints(mask, KD)
        rows = 3 * len(cms)  # lambda's: the active contacts' first, zeros after (as ours)
        out = [np.zeros((len(Q), NV, NV)) for _ in range(3)] + [np.zeros((len(Q), 12, NV)) for _ in range(3)]
        for i, (q, v, u) in enumerate(zip(Q, V, U)):
            self.tau[6:] = u
            pin.constraintDynamics(self.model, data, q, v, self.tau, cms, cds)
            for k, d in enumerate(pin.computeConstraintDynamicsDerivatives(self.model, data, cms, cds)):
                out[k][i, :rows if k >= 3 else NV] = d
        return out

    @timed
    def impact_derivatives(self, Q, V, mask):
        pin, (data, cms, cds) = self.pin, self.constraints(mask, 0.0)
        dq, dv = np.empty((len(Q), NV, NV)), np.empty((len(Q), NV, NV))
        for i, (q, v) in enumerate(zip(Q, V)):
            # Pinocchio 4.1.0 adds each call's dtau_dq and dvc_dq to the last's on the same Data:
            # initConstraintDynamics (about 1 us) clears them
            pin.initConstraintDynamics(self.model, data, cms, cds)
            pin.impulseDynamics(self.model, data, q, v, cms, cds, 0.0)
            pin.computeImpulseDynamicsDerivatives(self.model, data, cms, cds, 0.0)
            dq[i], dv[i] = data.ddq_dq, data.ddq_dv + np.eye(NV)  # Pinocchio's ddq_dv here: d(v+ - v)/dv
        return dq, dv

    @timed
    def kinematics(self, Q, jacobians):
        pin, model, data = self.pin, self.model, self.data
        n = len(Q)
        com, feet = np.empty((n, 3)), np.empty((n, 4, 3))
        Jcom, J = np.empty((n, 3, NV)), np.empty((n, 4, 3, NV))
        for i, q in enumerate(Q):
            if jacobians:
                Jcom[i] = pin.jacobianCenterOfMass(model, data, q)
                com[i] = data.com[0]
                pin.computeJointJacobians(model, data, q)
                pin.updateFramePlacements(model, data)
                for f, fid in enumerate(self.frames):
                    J[i, f] = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
            else:
                com[i] = pin.centerOfMass(model, data, q)
                pin.updateFramePlacements(model, data)
            for f, fid in enumerate(self.frames):
                feet[i, f] = data.oMf[fid].translation
        return (com, feet, Jcom, J) if jacobians else (com, feet)


# --- iLQR on the nodes --------------------------------------------------------------------------------

class Problem:
    """The nodes' costs and dynamics for one robot side (`rb`), x = (q, v) in arrays Q, V."""

    def __init__(self, rb, nodes, q_ref):
        self.rb, self.nodes, self.N = rb, nodes, len(nodes) - 1
        self.q_ref = q_ref
        n = len(nodes)
        contact = np.array([not nd.impact for nd in nodes])
        contact[-1] = False  # the terminal node: no dt, no control, no forces
        self.scale = np.where(contact, DT, 1.0)
        impact = np.array([nd.impact for nd in nodes])
        self.sw = np.where(impact[:, None], np.sqrt(W_STATE_IMPACT) * STATE_W_IMPACT, np.sqrt(W_STATE) * STATE_W)
        self.w_ctrl = np.where(contact, W_CTRL, 0.0)
        self.w_com = np.array([W_COM if nd.com is not None else 0.0 for nd in nodes])
        self.com_ref = np.array([nd.com if nd.com is not None else np.zeros(3) for nd in nodes])
        self.w_foot, self.foot_ref = np.zeros((n, 4)), np.zeros((n, 4, 3))
        for k, nd in enumerate(nodes):
            for f, target in nd.feet:
                self.w_foot[k, f], self.foot_ref[k, f] = W_FOOT_IMPACT if nd.impact else W_FOOT, target
        self.stance = [active(nd.mask) if c else [] for nd, c in zip(nodes, contact)]  # feet with forces
        self.on = np.zeros((n - 1, 4))  # the same, as weights of the friction cones
        for t, fs in enumerate(self.stance[:-1]):
            self.on[t, fs] = 1.0
        self.groups = {}  # contact set -> its contact nodes, for batched derivatives
        for k, nd in enumerate(nodes[:-1]):
            self.groups.setdefault((nd.impact, nd.mask), []).append(k)

    def rollout(self, q0, v0, U, ref=None, k=None, K=None, alpha=1.0):
        """States, applied controls and forces (4 x 3 per node, world axes) from q0, v0; with a reference
        trajectory ref = (Q, V, U), the controls are U + alpha k + K (x (-) x_ref)."""
        rb, N = self.rb, self.N
        Q, V, Un, F = np.empty((N + 1, 19)), np.empty((N + 1, NV)), U.copy(), np.zeros((N, 4, 3))
        Q[0], V[0] = q0, v0
        for t, nd in enumerate(self.nodes[:-1]):
            if nd.impact:
                Q[t + 1], V[t + 1] = Q[t], rb.impact(Q[t], V[t], nd.mask)
                continue
            if ref is not None:
                Un[t] = ref[2][t] + alpha * k[t] + K[t] @ difference(ref[0][t], ref[1][t], Q[t], V[t])
            a, lam = rb.contact(Q[t], V[t], Un[t], nd.mask)
            F[t, self.stance[t]] = lam[:3 * len(self.stance[t])].reshape(-1, 3)
            V[t + 1] = V[t] + DT * a
            Q[t + 1] = rb.integrate(Q[t], V[t + 1], DT)
        if not np.isfinite(V).all():
            raise FloatingPointError("the rollout diverged")
        return Q, V, Un, F

    def residuals(self, Q, V, U, F, kin):
        """Each node's weighted residuals (the cost is sum(scale * |r|^2 / 2)) as (name, array) pairs."""
        com, feet = kin[:2]
        r_cone = np.einsum("ij,nfj->nfi", CONE, F)
        barrier = np.minimum(r_cone - CONE_LB, 0) + np.maximum(r_cone - CONE_UB, 0)
        return [("state", self.sw * difference(self.q_ref, np.zeros(NV), Q, V)),
                ("com", np.sqrt(self.w_com)[:, None] * (com - self.com_ref)),
                ("feet", np.sqrt(self.w_foot)[:, :, None] * (feet - self.foot_ref)),
                ("cone", np.sqrt(W_CONE) * self.on[:, :, None] * barrier),
                ("ctrl", np.sqrt(self.w_ctrl[:-1])[:, None] * U)]

    def cost(self, Q, V, U, F):
        r = self.residuals(Q, V, U, F, self.rb.kinematics(Q, False))
        total = 0.0
        for _, res in r:
            sq = (res.reshape(len(res), -1) ** 2).sum(1)
            total += 0.5 * self.scale[:len(sq)] @ sq
        return total

    def linearize(self, Q, V, U, F):
        """Per node: f_x (36 x 36), f_u (36 x 12), and the cost's gradient and Gauss-Newton Hessian."""
        N, rb = self.N, self.rb
        fx, fu = np.zeros((N, NX, NX)), np.zeros((N, NX, NU))
        dlam = np.zeros((N, 4, 3, NX + NU))  # each stance foot's force on (dx, du), zero elsewhere
        for (impact, mask), ks in self.groups.items():
            if impact:
                dq, dv = rb.impact_derivatives(Q[ks], V[ks], mask)
                fx[ks, :NV, :NV] = np.eye(NV)
                fx[ks, NV:, :NV], fx[ks, NV:, NV:] = dq, dv
                continue
            aq, av, atau, lq, lv, ltau = rb.contact_derivatives(Q[ks], V[ks], U[ks], mask)
            au = atau[:, :, 6:]
            Jq, Jw = np.tile(np.eye(NV), (len(ks), 1, 1)), np.tile(np.eye(NV), (len(ks), 1, 1))
            Jq[:, :6, :6], Jw[:, :6, :6] = tangent_blocks(DT * V[[k + 1 for k in ks], :6])
            fx[ks, NV:, :NV], fx[ks, NV:, NV:], fu[ks, NV:] = DT * aq, np.eye(NV) + DT * av, DT * au
            fx[ks, :NV, :NV] = Jq + DT * Jw @ fx[ks, NV:, :NV]  # q+ = q (+) dt v+
            fx[ks, :NV, NV:] = DT * Jw @ fx[ks, NV:, NV:]
            fu[ks, :NV] = DT * Jw @ fu[ks, NV:]
            for j, f in enumerate(active(mask)):
                dlam[ks, f] = np.concatenate([lq, lv, ltau[:, :, 6:]], 2)[:, 3 * j:3 * j + 3]
        com, feet, Jcom, J = rb.kinematics(Q, True)
        res = dict(self.residuals(Q, V, U, F, (com, feet)))
        # the state residual's Jacobian: Jlog6 on the base, identity elsewhere (weighted)
        xi = difference(self.q_ref, np.zeros(NV), Q, V)[:, :6]
        Jlog = np.linalg.inv(series(-ad(xi), 1))
        n = N + 1
        lx, lxx = np.zeros((n, NX)), np.zeros((n, NX, NX))
        Rs = np.tile(np.eye(NX), (n, 1, 1))
        Rs[:, :6, :6] = Jlog
        Rs *= self.sw[:, :, None]
        lx += (res["state"][:, None] @ Rs)[:, 0]
        lxx += np.swapaxes(Rs, 1, 2) @ Rs
        Rc = np.sqrt(self.w_com)[:, None, None] * Jcom  # the CoM's and the feet's, on dq
        Rf = (np.sqrt(self.w_foot)[:, :, None, None] * J).reshape(n, 12, NV)
        Rk = np.concatenate([Rc, Rf], 1)  # the CoM's and the feet's residuals on dq
        rk = np.concatenate([res["com"], res["feet"].reshape(n, 12)], 1)
        lx[:, :NV] += (rk[:, None] @ Rk)[:, 0]
        lxx[:, :NV, :NV] += np.swapaxes(Rk, 1, 2) @ Rk
        # the friction cones through d lambda / d(x, u): Gauss-Newton on the barrier's active rows
        r = np.einsum("ij,nfj->nfi", CONE, F)
        hit = (self.on[:, :, None] * ((r <= CONE_LB) | (r >= CONE_UB))).reshape(N, 20)
        R = (CONE @ dlam).reshape(N, 20, NX + NU)
        g = W_CONE * (res["cone"].reshape(N, 20)[:, None] / np.sqrt(W_CONE) @ R)[:, 0]
        H = W_CONE * np.swapaxes(hit[:, :, None] * R, 1, 2) @ R
        lx[:N] += g[:, :NX]
        lxx[:N] += H[:, :NX, :NX]
        lu = self.w_ctrl[:N, None] * U + g[:, NX:]
        luu = self.w_ctrl[:N, None, None] * np.eye(NU) + H[:, NX:, NX:]
        lux = H[:, NX:, :NX]
        s = self.scale
        return (fx, fu, s[:, None] * lx, s[:N, None] * lu, s[:, None, None] * lxx, s[:N, None, None] * luu,
                s[:N, None, None] * lux)


def backward(pb, lin, mu):
    """Tassa, Erez and Todorov 2012, eq. (5), (10), (11); mu regularizes Q_uu. Returns the gains and the
    expected decrease's two terms, or None if Q_uu + mu I is not positive definite."""
    fx, fu, lx, lu, lxx, luu, lux = lin
    N = pb.N
    k, K = np.zeros((N, NU)), np.zeros((N, NU, NX))
    Vx, Vxx = lx[N], lxx[N]
    d1 = d2 = 0.0
    for t in range(N - 1, -1, -1):
        A = fx[t]
        Qx, Qxx = lx[t] + A.T @ Vx, lxx[t] + A.T @ Vxx @ A
        if pb.nodes[t].impact:  # no control
            Vx, Vxx = Qx, 0.5 * (Qxx + Qxx.T)
            continue
        B = fu[t]
        Qu, Quu, Qux = lu[t] + B.T @ Vx, luu[t] + B.T @ Vxx @ B, lux[t] + B.T @ Vxx @ A
        try:
            L = np.linalg.cholesky(Quu + mu * np.eye(NU))
        except np.linalg.LinAlgError:
            return None
        sol = np.linalg.solve(L.T, np.linalg.solve(L, np.column_stack([Qu, Qux])))
        k[t], K[t] = -sol[:, 0], -sol[:, 1:]
        Vx = Qx + K[t].T @ Quu @ k[t] + K[t].T @ Qu + Qux.T @ k[t]
        Vxx = Qxx + K[t].T @ Quu @ K[t] + K[t].T @ Qux + Qux.T @ K[t]
        Vxx = 0.5 * (Vxx + Vxx.T)
        d1 += k[t] @ Qu
        d2 += 0.5 * k[t] @ Quu @ k[t]
    return k, K, d1, d2


def line_search(pb, q0, v0, traj, k, K, cost):
    """The first of the step lengths 1, 1/2, ..., 1/64 whose rollout lowers the cost: (alpha, trajectory,
    cost), or (None, None, inf)."""
    for alpha in 0.5 ** np.arange(7):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                trial = pb.rollout(q0, v0, traj[2], traj, k, K, alpha)
            c = pb.cost(*trial)
        except (FloatingPointError, ValueError):  # a diverged trial: the kernels refuse non-finite input
            continue
        if c < cost:
            return alpha, trial, c
    return None, None, np.inf


def ilqr(pb, q0, v0, U, iters, tol=1e-9, verbose=True):
    """Returns the trajectory (Q, V, U, F), the costs per iteration and the times: whole iterations and
    the robot's functions' share, s. Stops when the expected decrease is below tol x the cost, or after
    three line searches in a row found none (rounding's floor)."""
    rb = pb.rb
    traj = pb.rollout(q0, v0, U)
    costs, times, rb_times, mu, stalls = [pb.cost(*traj)], [], [], 1e-6, 0
    rb.seconds, rb.split = 0.0, {}  # the iterations' share only
    for it in range(1, iters + 1):
        t0, s0 = time.perf_counter(), rb.seconds
        lin = pb.linearize(*traj)
        while (res := backward(pb, lin, mu)) is None:
            mu *= 10
        k, K, d1, d2 = res
        converged = -(d1 + d2) < tol * costs[-1]
        if not converged:
            alpha, trial, c = line_search(pb, q0, v0, traj, k, K, costs[-1])
            if alpha is None:  # no decrease: more regularization, same point
                mu, stalls = mu * 10, stalls + 1
            else:
                traj, mu, stalls = trial, max(mu / 10, 1e-9), 0
                costs.append(c)
        times.append(time.perf_counter() - t0)
        rb_times.append(rb.seconds - s0)
        if verbose and not converged:
            step = "no decrease" if alpha is None else f"{alpha:7.4f}"
            print(f"  {it:4d} {costs[-1]:12.6e} {step:>7} {mu:8.1e} {1e3 * times[-1]:8.2f}  ({1e3 * rb_times[-1]:.2f})")
        if converged or stalls == 3:
            break
    return traj, np.array(costs), np.array(times), np.array(rb_times)


# --- the run ------------------------------------------------------------------------------------------

def timeline(nodes, Q, F):
    """Each node's time (s; a touchdown takes none) and its stance feet (with forces)."""
    t = np.concatenate([[0.0], np.cumsum([0.0 if nd.impact else DT for nd in nodes[:-1]])])
    stance = np.array([[not nd.impact and bool(nd.mask >> f & 1) for f in range(4)] for nd in nodes[:-1]])
    return t, stance


def report(nodes, runs):
    (rb_o, ((Q, V, U, F), c_o, t_o, r_o)), (rb_r, ((Qr, _, _, _), c_r, t_r, r_r)) = runs
    print(f"iterations: ours {len(t_o)}, Pinocchio {len(t_r)}")
    print(f"final cost: ours {c_o[-1]:.9e}, Pinocchio {c_r[-1]:.9e} (relative difference "
          f"{abs(c_o[-1] - c_r[-1]) / c_r[-1]:.3e}; initial {c_o[0]:.6e})")
    print(f"time per iteration: ours {1e3 * t_o.mean():.2f} ms, Pinocchio {1e3 * t_r.mean():.2f} ms")
    split = [", ".join(f"{kind} {1e3 * rb.split.get(kind, 0.0) / n:.2f}" for kind in ("dynamics", "derivatives",
                                                                                     "kinematics"))
             for rb, n in ((rb_o, len(t_o)), (rb_r, len(t_r)))]
    print(f"robot's functions per iteration: ours {1e3 * r_o.mean():.2f} ms ({split[0]}), Pinocchio "
          f"{1e3 * r_r.mean():.2f} ms ({split[1]}): {r_r.mean() / r_o.mean():.1f}x")
    print(f"max base position difference ours vs Pinocchio: {np.abs(Q[:, :3] - Qr[:, :3]).max():.3e} m")
    t, stance = timeline(nodes, Q, F)
    print(f"base travelled: {Q[-1, 0] - Q[0, 0]:.3e} m forward in {t[-1]:.2f} s, height {Q[:, 2].min():.3f} to "
          f"{Q[:, 2].max():.3f} m")
    fz = F[..., 2][stance]
    excess = np.maximum(np.einsum("ij,nfj->nfi", CONE[:4], F)[stance], 0).max()
    print(f"stance feet: normal force {fz.min():.3e} to {fz.max():.3e} N, largest friction-cone excess "
          f"{excess:.3e} N (a cost, not a constraint)")
    return t, stance


def plot_base(ax, t, Q, Q_ref, title):
    """The base's position over time (solid), the reference run's dotted (examples/crocoddyl_quadruped.py too)."""
    for i, name in enumerate("xyz"):
        ax.plot(t, Q[:, i], label=f"base {name}")
        ax.plot(t, Q_ref[:, i], "k:", lw=1)
    ax.set_ylabel("m")
    ax.set_title(title)
    ax.legend(fontsize=8)


def plot(runs, t, stance, path):
    plt = pyplot()
    if plt is None:
        return
    (Q, _, _, F), (Qr, _, _, _) = runs[0][1][0], runs[1][1][0]
    fig, ax = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    plot_base(ax[0], t, Q, Qr, "Solo12 trotting: iLQR on constrained_dynamics (dotted: on Pinocchio)")
    for f, name in enumerate(FEET):
        ax[1].plot(t[:-1], np.where(stance[:, f], F[:, f, 2], np.nan), label=name)
        ax[2].plot(t[:-1], np.where(stance[:, f], np.linalg.norm(F[:, f, :2], axis=-1), np.nan), label=name)
    ax[1].set_ylabel("normal force (N)")
    ax[1].legend(fontsize=8, ncol=4)
    ax[2].set_ylabel("tangential force (N)")
    ax[2].set_xlabel("t (s)")
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="one cycle of 10-knot steps instead of two of 25 (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/quadruped_mpc.png"))
    args = ap.parse_args(argv)
    m = load_robot()
    p = m.default_params()
    q0 = standing(m)
    gait, cycles = (SHORT, 1) if args.short else (TROT, 2)
    nodes = trot(m, p, q0, cycles, **gait)  # the problem and the first guess, built once for both runs
    U0 = quasi_static(m, p, q0, nodes)
    print(f"Solo12 ({float(m.compute_A(q0, p)[0, 0]):.2f} kg), Crocoddyl's trot: steps of {gait['length']} m, "
          f"{gait['height']} m high, {gait['knots']} knots of {1e3 * DT:.0f} ms, {gait['support']} in support; "
          f"{cycles} cycle(s), {len(nodes) - 1} nodes")
    runs = []
    for rb in (Kernels(m), Pinocchio(solo_files()[0])):
        print(f"{rb.label}:\n  iter         cost    step       mu  ms/iter  (robot's functions)")
        runs.append((rb, ilqr(Problem(rb, nodes, q0), q0, np.zeros(NV), U0, 100)))
    t, stance = report(nodes, runs)
    plot(runs, t, stance, args.png)


if __name__ == "__main__":
    main()

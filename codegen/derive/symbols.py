"""The symbols of a model: joint positions and velocities, sin/cos of the
revolute joints, and the parameter vector (read at run time, never baked).

Each symbol carries a (kind, index) tag in its name, so symbols are distinct
by construction whatever the model names: joints "x" and "dx", or "q1" and
"s_q1", give different symbols for every position, velocity, sine and
parameter. `cnames` maps each to its C local (codegen.emit.cnames: a kind prefix
and a per-kind unique fragment of the model name)."""
from __future__ import annotations

import sympy as sp

from ..read.model import Model
from ..read.model_fields import check_unique


def _sym(name):
    return sp.Symbol(name, real=True)


def body_frames(model: Model) -> tuple:
    """The bodies that take an external force, in velocity order: Pinocchio's joints 1.. (its
    universe, joint 0, left out): on a free-flyer first the base body (the sixth base frame,
    base axes), then every moving frame of a joint."""
    base = (model.frames[5],) if model.floating_base else ()
    return base + tuple(f for f in model.joints if not f.base)


class Symbols:
    def __init__(self, model: Model):
        self.model = model
        check_unique(model.joint_names, "joint")
        check_unique(model.param_names, "parameter")
        self.tags = {}  # Symbol -> (kind, index): which C local holds it

        def make(kind, index, name):
            # Unique by construction: the (kind, index) tag. The readable
            # part comes first and the tag after a space (below every
            # printable character), so that symbols sort, and hence CSE and
            # the printed term order come out, as with plain names.
            sym = _sym(f"{name} #{kind}{index}")
            self.tags[sym] = (kind, index)
            return sym

        joints = model.joint_names
        self.q = [make("q", i, j) for i, j in enumerate(joints)]
        self.dq = [make("dq", i, f"d{j}") for i, j in enumerate(joints)]
        # inputs of inverse and forward dynamics (codegen/derive/rnea.py, forward_dynamics.py)
        self.ddq = [make("ddq", i, f"_ddq{i}") for i in range(len(joints))]
        self.tau = [make("tau", i, f"_tau{i}") for i in range(len(joints))]
        # external forces (the *_fext kernels): one spatial force per body (body_frames), in the
        # body's own frame, Pinocchio's order (force x y z, then moment x y z about the origin)
        self.bodies = body_frames(model)
        self.fext = [make("fext", k, f"_fext{k}") for k in range(6 * len(self.bodies))]
        # contact forces (the contact kernels' derivatives): the rows of every contact, in
        # model.contacts order (codegen/derive/contacts.py)
        self.lam = [make("lam", k, f"_lam{k}") for k in range(model.contact_rows)]
        # sin/cos as plain symbols: the recursive derivation never
        # differentiates, and the C code computes each once.
        self.s = [make("s", i, f"s_{j}") for i, j in enumerate(joints)]
        self.c = [make("c", i, f"c_{j}") for i, j in enumerate(joints)]
        self.params = {n: make("p", k, n) for k, n in enumerate(model.param_names)}
        # The free-flyer's configuration (codegen/read/records.py, BASE_TYPES):
        # q[0:3] the base origin in world, q[3:7] its orientation as a
        # quaternion (x, y, z, w), read by kind "qb" at q index 0..6. Its six
        # velocities are dq[0:6] (linear then angular, base axes), its six
        # accelerations ddq[0:6] and its wrench tau[0:6] (force then moment, base
        # axes). Joint i >= 6 reads q[i + 1] (model.q_offset). Kernels that extend
        # to the base (com, centroidal_map, integrate) read base_position,
        # base_quaternion and base_velocity, and take world poses of every
        # frame from Kinematics.world_poses() (it starts at
        # Kinematics.base_pose()), or cheaper, poses in the base frame from
        # Kinematics.base_frame_poses() turned to the world once per output by
        # Kinematics.pose_to_world() / rotate_to_world().
        if model.floating_base:
            self.base_position = [make("qb", i, f"_base{i}") for i in range(3)]
            self.base_quaternion = [make("qb", 3 + i, f"_base{3 + i}") for i in range(4)]
            self.base_velocity = self.dq[:6]
        else:
            self.base_position = self.base_quaternion = self.base_velocity = None

    def external_force(self, k):
        """Body k's external force as a spatial vector (moment, force) in its frame (Featherstone's
        order), from the (force, moment) layout of the fext argument."""
        f = self.fext[6 * k:6 * k + 6]
        return (f[3:6], f[0:3])

    def p(self, name):
        return self.params[name]

    def rotor(self, frame):
        """Rotor inertia Ia of a joint (0 for the free-flyer's six, which have none)."""
        return self.params[f"Ia_{frame.key}"] if self.model.actuated(frame) else sp.S.Zero

    def inertia(self, frame):
        """(mass, MS, J) of a frame's link, Khalil-Dombre standard parameters
        (zero for the massless frames of a free-flyer)."""
        if frame.massless:
            return (sp.S.Zero, [sp.S.Zero] * 3, sp.zeros(3, 3))
        k = frame.key
        P = lambda n: self.params[f"{n}_{k}"]  # noqa: E731
        J = sp.Matrix(
            [[P("XX"), P("XY"), P("XZ")], [P("XY"), P("YY"), P("YZ")], [P("XZ"), P("YZ"), P("ZZ")]]
        )
        return (P("m"), [P("MX"), P("MY"), P("MZ")], J)

    def gravity(self):
        """The gravity vector in world axes (frame 0 of a fixed base)."""
        g = self.params["g"]
        return [g * x for x in self.model.gravity]

    def origin(self, frame):
        """parentP_frame at q = 0 in terms of the parameter symbols."""
        sub = {sp.Symbol(n, real=True): self.params[n] for n in self.model.geometry}
        return [sp.sympify(o).xreplace(sub) for o in frame.origin]

    def trig_to_functions(self):
        """Map s_j, c_j to sin(q_j), cos(q_j) (for closed forms)."""
        out = {}
        for q, s, c in zip(self.q, self.s, self.c):
            out[s] = sp.sin(q)
            out[c] = sp.cos(q)
        return out

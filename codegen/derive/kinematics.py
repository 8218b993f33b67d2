"""Joint transforms, link velocities (Zafar 2015, the Krang report, eq. 7-8) and forward kinematics.

A joint transform parentT_frame(q) is applied in two stages so that the
constant part (the frame's rotation and origin at q = 0, mostly zeros and
+-1) costs nothing: child -> (Rot(e, q), 0) -> (R0, P) -> parent. For a
prismatic joint the first stage is (1, e q).

Free-flying base (codegen/read/records.py, BASE_TYPES): the recursions work in
the base frame. The six base frames have no stages (identity), the motion
subspace of each is a unit twist in base axes (S = 1, Featherstone 2008,
sec. 9.3), and every one of them moves with the full base velocity (the six
form one joint: Pinocchio's JointModelFreeFlyer, whose bias c_J is zero). The
base pose enters only gravity (`gravity()`, in base axes: R^T g) and the
world poses (`world_poses()` starts at `base_pose()`), so that A, C, the
inverse and forward dynamics cost as on a fixed base with six more joints,
and world-frame outputs pay one rotation (base_frame_poses, pose_to_world).

For kernels that extend to the base (com, centroidal_map, integrate):
Symbols.base_position / base_quaternion / base_velocity are the base's q and
v symbols; base_pose() is (0R_base, 0p_base) with intermediates; and
world_poses() gives every frame's (0R_j, 0p_j) including the base.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .program import Program
from .symbols import Symbols


class Kinematics:
    def __init__(self, model, syms: Symbols, prog: Program):
        self.model, self.syms, self.prog = model, syms, prog
        self._stages = {f.key: self._joint_stages(f) for f in model.frames}
        self._cache = {}

    def _joint_stages(self, f):
        if f.base:  # the free-flyer's frames: identity placements (module docstring)
            return []
        const = (f.rotation, self.syms.origin(f))
        if f.type == "revolute":
            c, s = self.syms.c[f.index], self.syms.s[f.index]
            return [(sv.axis_rotation(f.axis, c, s), [0, 0, 0]), const]
        if f.type == "prismatic":
            q = self.syms.q[f.index]
            return [(sp.eye(3), [a * q for a in f.axis]), const]
        return [const]

    def stages(self, key):
        """[(R, r), ...] from the frame towards its parent."""
        return self._stages[key]

    def placement_only(self, key):
        """From now on, frame `key` is seen through its constant placement
        alone: its joint stage belongs to a shared subtree routine."""
        self._stages[key] = self._stages[key][-1:]

    def joint_motion(self, f):
        """Motion subspace S_j in frame j (unit twist of the joint)."""
        e = list(f.axis)
        zero = [sp.S.Zero] * 3
        return (e, zero) if f.angular else (zero, e)

    # -- transforms of vectors across one joint, with intermediates ----------
    def force_to_parent(self, key, f):
        for R, r in self.stages(key):
            n, fl = sv.force_to_parent(R, r, f)
            f = (self.prog.vec(n), self.prog.vec(fl))
        return f

    def motion_to_child(self, key, m):
        for R, r in reversed(self.stages(key)):
            w, v = sv.motion_to_child(R, r, m)
            m = (self.prog.vec(w), self.prog.vec(v))
        return m

    def vector_to_child(self, key, v):
        for R, _ in reversed(self.stages(key)):
            v = self.prog.vec(sv.rotate_to_child(R, v))
        return v

    def inertia_to_parent(self, key, I):
        for R, r in self.stages(key):
            mass, h, J = sv.inertia_to_parent(R, r, I)
            I = (mass, self.prog.vec(h), self.prog.mat(J))
        return I

    # -- recursions -----------------------------------------------------------
    def velocities(self, base=None):
        """Spatial velocity (w, v) of every link in its own frame (eq. 7-8);
        `base` is the velocity of frame 0 (zero unless a subtree is derived alone)."""
        zero = [sp.S.Zero] * 3
        vel = {"0": base or (zero, zero)}
        for f in self.model.frames:
            w, v = self.motion_to_child(f.key, vel[f.parent])
            if f.moving:
                dq = self.syms.dq[f.index]
                sw, sl = self.joint_motion(f)
                w = self.prog.vec(sv.add(w, [x * dq for x in sw]))
                v = self.prog.vec(sv.add(v, [x * dq for x in sl]))
            vel[f.key] = (w, v)
        if self.model.floating_base:  # the six base frames move as one body
            for f in self.model.frames[:6]:
                vel[f.key] = vel[self.model.base_body]
        return vel

    def base_rotation(self):
        """0R_base of a free-flyer from its quaternion (x, y, z, w), normalized:
        R = 1 + 2/n [w hat(u) + hat(u)^2] with u = (x, y, z), n = |q|^2, i.e. the
        rotation of q/|q| (a non-unit quaternion acts as its normalized self)."""
        if "base_R" not in self._cache:
            x, y, z, w = self.syms.base_quaternion
            s = self.prog.var(2 / (x * x + y * y + z * z + w * w))
            R = sp.Matrix([[1 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
                           [s * (x * y + w * z), 1 - s * (x * x + z * z), s * (y * z - w * x)],
                           [s * (x * z - w * y), s * (y * z + w * x), 1 - s * (x * x + y * y)]])
            self._cache["base_R"] = self.prog.mat(R)
        return self._cache["base_R"]

    def base_pose(self):
        """(0R_base, 0p_base): the free-flyer's pose; identity for a fixed base."""
        if not self.model.floating_base:
            return (sp.eye(3), [sp.S.Zero] * 3)
        return (self.base_rotation(), list(self.syms.base_position))

    def base_frame_poses(self):
        """(baseR_j, baseP_j) of every frame: the poses in frame 0 on a fixed
        base, in the base frame on a free-flyer (no quaternion in them);
        world-frame outputs take them to the world at the end (pose_to_world,
        rotate_to_world), one rotation per output instead of one per frame."""
        return self.world_poses(base=(sp.eye(3), [sp.S.Zero] * 3))

    def rotate_to_world(self, v):
        """A vector in base axes (frame 0 of a fixed base) in world axes."""
        if not self.model.floating_base:
            return v
        return self.prog.vec(sv.matvec(self.base_rotation(), v))

    def pose_to_world(self, R, p):
        """A pose in the base frame as a world pose."""
        if not self.model.floating_base:
            return R, p
        Rb, pb = self.base_pose()
        return self.prog.mat(Rb * R), self.prog.vec(sv.add(pb, sv.matvec(Rb, p)))

    def gravity(self):
        """The gravity vector in frame 0: world axes, or base axes (R^T g) on a free-flyer."""
        g = self.syms.gravity()
        if not self.model.floating_base:
            return g
        return self.prog.vec(sv.rotate_to_child(self.base_rotation(), g))

    def gravity_in_frames(self):
        """The gravity vector expressed in every frame."""
        g = {"0": self.gravity()}
        for f in self.model.frames:
            g[f.key] = self.vector_to_child(f.key, g[f.parent])
        return g

    def world_poses(self, base=None):
        """0R_j and 0P_j of every frame (forward kinematics); `base`: the pose
        of frame 0 (base_pose() unless a subtree is derived alone)."""
        poses = {"0": base or self.base_pose()}
        for f in self.model.frames:
            R0, p0 = poses[f.parent]
            R, p = R0, p0
            for Rs, rs in reversed(self.stages(f.key)):
                p = self.prog.vec(sv.add(p, sv.matvec(R, rs)))
                R = self.prog.mat(R * Rs)
            poses[f.key] = (R, p)
        return poses

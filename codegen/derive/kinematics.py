"""Joint transforms, link velocities (seed 003 eq. 7-8) and forward kinematics.

A joint transform parentT_frame(q) is applied in two stages so that the
constant part (the frame's rotation and origin at q = 0, mostly zeros and
+-1) costs nothing: child -> (Rot(e, q), 0) -> (R0, P) -> parent. For a
prismatic joint the first stage is (1, e q).
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

    def _joint_stages(self, f):
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
        return (e, zero) if f.type == "revolute" else (zero, e)

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
        return vel

    def gravity_in_frames(self):
        """The gravity vector expressed in every frame."""
        g = {"0": self.syms.gravity()}
        for f in self.model.frames:
            g[f.key] = self.vector_to_child(f.key, g[f.parent])
        return g

    def world_poses(self, base=None):
        """0R_j and 0P_j of every frame (forward kinematics); `base`: the pose
        of frame 0 (identity unless a subtree is derived alone)."""
        poses = {"0": base or (sp.eye(3), [sp.S.Zero] * 3)}
        for f in self.model.frames:
            R0, p0 = poses[f.parent]
            R, p = R0, p0
            for Rs, rs in reversed(self.stages(f.key)):
                p = self.prog.vec(sv.add(p, sv.matvec(R, rs)))
                R = self.prog.mat(R * Rs)
            poses[f.key] = (R, p)
        return poses

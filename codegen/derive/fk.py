"""End-effector pose and J-dot q-dot.

fk: the 4x4 homogeneous pose 0T_ee = [[0R_n nR_ee, 0P_n + 0R_n nP_ee], [0 0 0 1]]
of an end effector at a constant placement (nR_ee, nP_ee) in its frame n.

J-dot q-dot: d/dt (J dq) with ddq = 0, i.e. the classical acceleration of
the end effector's origin and the angular acceleration, in world axes, linear
first (Pinocchio's getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED). From
the spatial acceleration (dw, dv) of frame n with ddq = 0 and no gravity, and
its velocity (w, v), both in frame n (Featherstone 2008, section 2.11): the
origin's classical acceleration is dv + w x v; a point at r in frame n adds
dw x r + w x (w x r); then rotate by 0R_n.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .kinematics import Kinematics
from .rnea import ZERO3, accelerations


def ee_pose(kin: Kinematics, poses, ee):
    """(0R_ee, 0P_ee) with intermediates."""
    prog = kin.prog
    R, p = poses[ee.frame]
    if ee.offset:
        p = prog.vec(sv.add(p, sv.matvec(R, ee.origin)))
        R = prog.mat(R * ee.rotation)
    return R, p


def homogeneous(R, p):
    T = sp.zeros(4, 4)
    T[:3, :3] = R
    for i in range(3):
        T[i, 3] = p[i]
    T[3, 3] = 1
    return T


def velocity_product_accelerations(kin: Kinematics, vel):
    """Spatial accelerations of every frame with ddq = 0 and no gravity."""
    return accelerations(kin, vel, [sp.S.Zero] * kin.model.ndof, (ZERO3, ZERO3))


def jdot_qdot(kin: Kinematics, poses, vel, acc0, ee):
    """J-dot q-dot of end effector `ee` (6-vector, world axes, linear first);
    `poses`: Kinematics.base_frame_poses()."""
    prog = kin.prog
    R, _ = poses[ee.frame]
    w, v = vel[ee.frame]
    dw, dv = acc0[ee.frame]
    lin = prog.vec(sv.add(dv, sv.cross(w, v)))
    if any(o != 0 for o in ee.origin):
        r = list(ee.origin)
        wr = prog.vec(sv.cross(w, r))
        lin = prog.vec(sv.add(lin, sv.add(sv.cross(dw, r), sv.cross(w, wr))))
    lin_w = kin.rotate_to_world(prog.vec(sv.matvec(R, lin)))
    ang_w = kin.rotate_to_world(prog.vec(sv.matvec(R, dw)))
    return sp.Matrix(lin_w + ang_w)

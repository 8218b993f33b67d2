"""End-effector Jacobians (Zafar 2015, the Krang report, section 3):  J_n = [e_j x L_jn ; e_j],
linear rows first, one column per joint, zero columns for joints not on the
path to the end effector. `world`: vectors in frame 0 (velocity of the
end effector's origin, world-aligned); `local`: the same in the end
effector's axes. An end effector sits at a constant placement in its
frame n: origin O_n + 0R_n * nP_ee, axes 0R_n * nR_ee.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .fk import ee_pose
from .kinematics import Kinematics


def world_columns(kin: Kinematics, poses, ee, pn, J, skip=(), fill=None):
    """Fill J's columns of the joints on the path to the end effector at pn;
    the columns of the joints in `skip` get `fill` (computed elsewhere: a
    shared subtree routine, codegen/derive/subtrees.py)."""
    prog = kin.prog
    for f in kin.model.chain(ee.frame):
        if not f.moving:
            continue
        if f.key in skip:
            J[:, f.index] = sp.Matrix([fill] * 6)
            continue
        R, p = poses[f.key]
        e = prog.vec(sv.matvec(R, f.axis))
        if f.angular:
            lin = prog.vec(sv.cross(e, [a - b for a, b in zip(pn, p)]))
            ang = e
        else:
            lin, ang = e, [0, 0, 0]
        for r in range(3):
            J[r, f.index] = lin[r]
            J[r + 3, f.index] = ang[r]
    return J


def jacobians(kin: Kinematics, poses, ee):
    """(world, local) Jacobians from `poses` = Kinematics.base_frame_poses():
    the columns are derived in frame 0's axes, which on a free-flyer are the
    base's, so that the local Jacobian never sees the base orientation and
    the world one pays one rotation per column (Kinematics.rotate_to_world)."""
    n = kin.model.ndof
    Rn, pn = ee_pose(kin, poses, ee)
    base = world_columns(kin, poses, ee, pn, sp.zeros(6, n))
    prog = kin.prog
    local, world = sp.zeros(6, n), sp.zeros(6, n)
    for col in range(n):
        for half in (0, 3):
            b = [base[half + r, col] for r in range(3)]
            v = sv.rotate_to_child(Rn, b)
            w = kin.rotate_to_world(b) if any(x != 0 for x in b) else b
            for r in range(3):
                local[half + r, col] = prog.var(v[r])
                world[half + r, col] = w[r]
    return world, local


def time_seeds(syms) -> dict:
    """Tangents of the joints' configuration along the motion, d/dt at velocity dq:
    q_j -> dq_j, s_j -> c_j dq_j, c_j -> -s_j dq_j (the free-flyer's pose: see rates)."""
    seeds = {}
    for j, f in enumerate(syms.model.joints):
        if f.base:
            continue
        d = syms.dq[j]
        seeds[syms.q[j]] = {"t": d}
        seeds[syms.s[j]] = {"t": syms.c[j] * d}
        seeds[syms.c[j]] = {"t": -syms.s[j] * d}
    return seeds


def rates(kin: Kinematics, poses, ee):
    """(world, local) dJ/dt at (q, dq) (Pinocchio's getFrameJacobianTimeVariation, LOCAL_WORLD_ALIGNED
    and LOCAL): the tangents of the Jacobians' statements along the motion
    (codegen/derive/differentiate.py), so that dJ/dt dq is the time derivative of J dq at
    ddq = 0. Columns in base axes and local ones do not depend on a free-flyer's pose; the world
    ones are R_b times those, so d/dt = R_b (w_b x b + db/dt), w_b the base's angular velocity
    (base axes): the quaternion is never differentiated (nor its normalization, which would
    square its entries)."""
    from .differentiate import tangents
    prog, n = kin.prog, kin.model.ndof
    world, local = jacobians(kin, poses, ee)  # the same statements as the Jacobians' (stored once)
    _, pn = ee_pose(kin, poses, ee)
    base = world_columns(kin, poses, ee, pn, sp.zeros(6, n))
    seeds = time_seeds(kin.syms)
    rate = lambda M: [t.get("t", sp.S.Zero) for t in tangents(prog, list(M), seeds)]  # noqa: E731
    dlocal = sp.Matrix(6, n, rate(local))
    dbase = sp.Matrix(6, n, rate(base))
    if not kin.model.floating_base:
        return dbase, dlocal  # frame 0 is the world
    w = kin.syms.dq[3:6]
    dworld = sp.zeros(6, n)
    for col in range(n):
        for half in (0, 3):
            b = [base[half + r, col] for r in range(3)]
            d = [x + y for x, y in zip(sv.cross(w, b), (dbase[half + r, col] for r in range(3)))]
            d = kin.rotate_to_world(prog.vec(d)) if any(x != 0 for x in d) else d
            for r in range(3):
                dworld[half + r, col] = d[r]
    return dworld, dlocal

"""End-effector Jacobians (seed 003 section 3):  J_n = [e_j x L_jn ; e_j],
linear rows first, one column per joint, zero columns for joints not on the
path to the end effector. `world`: vectors in frame 0 (velocity of the
end effector's origin, world-aligned); `local`: the same in the end
effector's axes. An end effector sits at a constant placement in its
frame n: origin O_n + 0R_n * nP_ee, axes 0R_n * nR_ee.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .kinematics import Kinematics


def jacobians(kin: Kinematics, poses, ee):
    model, prog = kin.model, kin.prog
    n = model.ndof
    Rn, pn = poses[ee.frame]
    if ee.offset:
        pn = prog.vec(sv.add(pn, sv.matvec(Rn, ee.origin)))
        Rn = prog.mat(Rn * ee.rotation)
    world = sp.zeros(6, n)
    for f in model.chain(ee.frame):
        if not f.moving:
            continue
        R, p = poses[f.key]
        e = prog.vec(sv.matvec(R, f.axis))
        if f.type == "revolute":
            lin = prog.vec(sv.cross(e, [a - b for a, b in zip(pn, p)]))
            ang = e
        else:
            lin, ang = e, [0, 0, 0]
        for r in range(3):
            world[r, f.index] = lin[r]
            world[r + 3, f.index] = ang[r]
    local = sp.zeros(6, n)
    for col in range(n):
        for half in (0, 3):
            v = sv.rotate_to_child(Rn, [world[half + r, col] for r in range(3)])
            for r in range(3):
                local[half + r, col] = prog.var(v[r])
    return world, local

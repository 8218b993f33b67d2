"""The Christoffel-symbol Coriolis matrix C (seed 003 eq. 4), recursively.

C_ij = sum_k c_ijk dq_k with c_ijk = 1/2 (dA_ij/dq_k + dA_ik/dq_j - dA_jk/dq_i)
is computed without differentiating A, by the method of Echeandia & Wensing
(2021): with link velocity v_k, joint axis derivative  S'_j = v_j x S_j  and
    B_k = 1/2 [ (v_k x*) I_k - I_k (v_k x) + (I_k v_k) xbar ]
(the unique split of v x* I v with B + B^T = dI/dt that yields the
Christoffel symbols), composed over subtrees like I^C (B^C), one gets for a
joint i on the path to joint j (i above or equal to j):
    C_ij = S_i . (I^C_j S'_j + B^C_j S_j)
    C_ji = S'_i . (I^C_j S_j) + S_i . (B^C_j^T S_j)
and 0 for joints on different branches. Tests check C against
Pinocchio's computeCoriolisMatrix, eq. 4 itself on small models and
the skew-symmetry of dA/dt - 2C.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .composite_inertia import inertia_times_var, pair, propagate_up
from .kinematics import Kinematics


def _vec6(m):
    return sp.Matrix(list(m[0]) + list(m[1]))


def _split(prog, col):
    return (prog.vec(col[:3]), prog.vec(col[3:]))


def body_coriolis(prog, I, v):
    """B(I, v) of one link, a 6x6 matrix in the link frame."""
    Iv = sv.inertia_times(I, v)
    Iv = (prog.vec(Iv[0]), prog.vec(Iv[1]))
    I6 = sv.matrix6(I)
    vx = sv.motion_cross_matrix(v)
    vxf = -vx.T
    B = (vxf * I6 - I6 * vx + sv.force_bar_matrix(Iv)) / 2
    return prog.mat(B.applyfunc(sp.expand))


def coriolis_matrix(kin: Kinematics, comp, vel):
    model, prog = kin.model, kin.prog
    n = model.ndof
    BC = {f.key: body_coriolis(prog, kin.syms.inertia(f), vel[f.key]) for f in model.frames}
    for f in reversed(model.frames):
        if f.parent != "0":
            Bp = kin.matrix6_to_parent(f.key, BC[f.key])
            BC[f.parent] = prog.mat(BC[f.parent] + Bp)

    Sdot = {}
    for f in model.joints:
        m = sv.motion_cross(vel[f.key], kin.joint_motion(f))
        Sdot[f.key] = (prog.vec(m[0]), prog.vec(m[1]))

    C = sp.zeros(n, n)
    for f in model.joints:
        j = f.index
        S = kin.joint_motion(f)
        S6 = _vec6(S)
        IS = inertia_times_var(prog, comp[f.key], Sdot[f.key])
        F1 = _split(prog, _vec6(IS) + BC[f.key] * S6)
        F2 = inertia_times_var(prog, comp[f.key], S)
        F3 = _split(prog, BC[f.key].T * S6)
        C[j, j] = prog.var(pair(S, F1))

        def upper(a, force, j=j):
            C[a.index, j] = prog.var(pair(kin.joint_motion(a), force))

        def lower(a, forces, j=j):
            f2, f3 = forces
            C[j, a.index] = prog.var(pair(Sdot[a.key], f2) + pair(kin.joint_motion(a), f3))

        propagate_up(kin, f, F1, upper)
        _propagate_pair(kin, f, F2, F3, lower)
    return C


def _propagate_pair(kin, f, F2, F3, visit):
    """propagate_up for two forces at once."""
    from .composite_inertia import ancestors

    key = f.key
    for a in ancestors(kin.model, key):
        F2 = kin.force_to_parent(key, F2)
        F3 = kin.force_to_parent(key, F3)
        key = a.key
        if a.moving:
            visit(a, (F2, F3))

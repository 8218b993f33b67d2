"""The Christoffel-symbol Coriolis matrix C (Zafar 2015, the Krang report, eq. 4), recursively.

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
from .composite_inertia import index_span, inertia_times_var, pair, propagate_up
from .kinematics import Kinematics


def body_coriolis(prog, I, v):
    """B(I, v) of one link in the link frame, as (M, f):  B = [[M, 0], [-hat(f), 0]].

    Writing I = [[J, hat(h)], [hat(h)^T, m]] and v = (w, u), the blocks of B
    reduce to  f = m u + w x h  (the link's linear momentum) and
        M = 1/2 [hat(w) J - J hat(w) - hat(u) hat(h) - hat(h) hat(u) - hat(n)]
    with n = J w + h x u; the other two blocks vanish. This form is kept by
    the change of frame, so subtree sums B^C need one 3x3 and one 3-vector.
    """
    mass, h, J = I
    w, u = v
    n = prog.vec(sv.add(sv.matvec(J, w), sv.cross(h, u)))
    f = prog.vec(sv.add([mass * x for x in u], sv.cross(w, h)))
    WJ = prog.mat(sv.hat(w) * J)
    uh = sv.dot(u, h)
    M = sp.zeros(3, 3)
    half_n = [x / 2 for x in n]
    for i in range(3):
        for k in range(i, 3):
            sym = prog.var((WJ[i, k] + WJ[k, i] - h[i] * u[k] - u[i] * h[k]) / 2 + (uh if i == k else 0))
            skew = sv.hat(half_n)[i, k]
            M[i, k] = prog.var(sym - skew)
            M[k, i] = prog.var(sym + skew)
    return (M, f)


def coriolis_to_parent(kin, key, B):
    """(M, f) of a subtree, from its root frame to the parent frame:
    f' = R f,  M' = R M R^T - hat(r) hat(f')."""
    prog = kin.prog
    M, f = B
    for R, r in kin.stages(key):
        f = prog.vec(sv.matvec(R, f))
        M = prog.mat(R * prog.mat(M * R.T) - sv.hat(r) * sv.hat(f))
    return (M, f)


def coriolis_times(prog, B, m):
    """B m and B^T m for a motion m = (w, u): forces."""
    M, f = B
    w, u = m
    Bm = (prog.vec(sv.matvec(M, w)), prog.vec(sv.cross(w, f)))
    BTm = (prog.vec(sv.add(sv.matvec(M.T, w), sv.cross(f, u))), [sp.S.Zero] * 3)
    return Bm, BTm


def joint_forces(kin, comp, vel, BC, Sdot, f):
    """The forces of joint f whose pairings give its column and row of C:
    F1 (upper: S_a . F1), F2 and F3 (lower: S'_a . F2 + S_a . F3), in frame f."""
    prog = kin.prog
    S = kin.joint_motion(f)
    IS = sv.inertia_times(comp[f.key], Sdot[f.key])
    BS, BTS = coriolis_times(prog, BC[f.key], S)
    F1 = (prog.vec(sv.add(IS[0], BS[0])), prog.vec(sv.add(IS[1], BS[1])))
    F2 = inertia_times_var(prog, comp[f.key], S)
    return F1, F2, BTS


def coriolis_matrix(kin: Kinematics, comp, vel, given=None):
    """C; `given` (codegen/derive/subtrees.Given) supplies what a shared subtree
    routine computed: B^C of its root, its joints' forces in the root frame
    and its own block of C."""
    model, prog = kin.model, kin.prog
    n = index_span(model)
    BC = {f.key: body_coriolis(prog, kin.syms.inertia(f), vel[f.key]) for f in model.frames}
    for f in reversed(model.frames):
        if given and f.key in given.coriolis:
            BC[f.key] = given.coriolis[f.key]
        if f.parent != "0":
            M, fl = coriolis_to_parent(kin, f.key, BC[f.key])
            Mp, fp = BC[f.parent]
            BC[f.parent] = (prog.mat(Mp + M), prog.vec(sv.add(fp, fl)))

    Sdot = {}
    for f in model.joints:
        m = sv.motion_cross(vel[f.key], kin.joint_motion(f))
        Sdot[f.key] = (prog.vec(m[0]), prog.vec(m[1]))

    C = sp.zeros(n, n)
    for f in model.joints:
        j = f.index
        if given and f.key in given.forces:
            forces, start = given.forces[f.key]
            F1, F2, F3 = forces["F1"], forces["IS"], forces["F3"]
            start = model.frame(start)
        else:
            F1, F2, F3 = joint_forces(kin, comp, vel, BC, Sdot, f)
            C[j, j] = prog.var(pair(kin.joint_motion(f), F1))
            start = f

        def upper(a, forces, j=j):
            C[a.index, j] = prog.var(pair(kin.joint_motion(a), forces[0]))

        def lower(a, forces, j=j):
            f2, f3 = forces
            C[j, a.index] = prog.var(pair(Sdot[a.key], f2) + pair(kin.joint_motion(a), f3))

        propagate_up(kin, start, [F1], upper)
        propagate_up(kin, start, [F2, F3], lower)
    for (i, j), value in (given.blocks["C"].items() if given else ()):
        C[i, j] = value
    return C, BC, Sdot

"""Forward dynamics by a symbolic articulated-body algorithm (Featherstone
2008, section 7.3, Table 7.1), the alternative to codegen/derive/forward_dynamics.py's
sparse LTDL of A. In each link's frame, motion (w, v), force (n, f), 6x6
spatial matrices in that order:

    out:  c_j = v_j x S_j dq_j,   p_j = v_j x* I_j v_j,   I^A_j = I_j
    in:   U = I^A S,  D = S.U + Ia_j (rotor, Krang report eq. 18),  u = tau_j - S.p
          I^a = I^A - U U^T / D,  p^a = p + I^a c + U u / D
          I^A_parent += X^T I^a X,  p^A_parent += X^T p^a
    out:  a' = X a_parent + c,  ddq_j = (u - U.a') / D,  a_j = a' + S ddq_j

with a_0 = (0, -g) (gravity as a base acceleration) and tau the applied
torque minus friction. X is the motion transform child <- parent, applied
stage by stage as in codegen/derive/kinematics.py. Fixed frames add their inertia
and bias force to their parent and pass accelerations through.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .kinematics import Kinematics
from .rnea import force_cross, gravity_base


def _inertia6(I):
    mass, h, J = I
    H = sv.hat(h)
    M = sp.zeros(6, 6)
    M[:3, :3] = J
    M[:3, 3:] = H
    M[3:, :3] = H.T
    M[3:, 3:] = mass * sp.eye(3)
    return M


def _motion_x(R, r):
    """6x6 motion transform child <- parent of one stage (R = parentR_child, r = parentP_child)."""
    X = sp.zeros(6, 6)
    RT = R.T
    X[:3, :3] = RT
    X[3:, 3:] = RT
    X[3:, :3] = -RT * sv.hat(r)
    return X


def _sym_var(prog, M):
    """Intermediates for a symmetric matrix: the upper triangle, mirrored."""
    out = sp.zeros(M.rows, M.cols)
    for i in range(M.rows):
        for k in range(i, M.cols):
            out[i, k] = out[k, i] = prog.var(M[i, k])
    return out


def _vec6(m):
    return sp.Matrix(list(m[0]) + list(m[1]))


def articulated_body(kin: Kinematics, vel, tau):
    """ddq (Matrix) for joint torques `tau` (already minus friction)."""
    prog, model, syms = kin.prog, kin.model, kin.syms
    dq = syms.dq
    IA, pA, c, S6 = {}, {}, {}, {}
    for f in model.frames:
        I = syms.inertia(f)
        v = vel[f.key]
        n, fl = sv.inertia_times(I, v)
        IA[f.key] = _inertia6(I)
        pA[f.key] = prog.mat(_vec6(force_cross(v, (prog.vec(n), prog.vec(fl)))))
        if f.moving:
            S = kin.joint_motion(f)
            S6[f.key] = _vec6(S)
            cm = sv.motion_cross(v, ([x * dq[f.index] for x in S[0]], [x * dq[f.index] for x in S[1]]))
            if f.base:  # the free-flyer's bias is zero (codegen/derive/rnea.py, accelerations)
                cm = ([sp.S.Zero] * 3, [sp.S.Zero] * 3)
            c[f.key] = prog.mat(_vec6(cm))
    U, Dinv, u = {}, {}, {}
    for f in reversed(model.frames):
        Ia, pa = IA[f.key], pA[f.key]
        if f.moving:
            S = S6[f.key]
            U[f.key] = prog.mat(Ia * S)
            Dinv[f.key] = prog.var(1 / ((S.T * U[f.key])[0] + syms.rotor(f)))
            u[f.key] = prog.var(tau[f.index] - (S.T * pa)[0])
            if f.parent == "0":
                continue
            Ud = prog.mat(U[f.key] * Dinv[f.key])
            Ia = _sym_var(prog, Ia - Ud * U[f.key].T)
            pa = prog.mat(pa + Ia * c[f.key] + Ud * u[f.key])
        if f.parent == "0":
            continue
        for R, r in kin.stages(f.key):
            X = _motion_x(R, r)
            Ia = _sym_var(prog, X.T * Ia * X)
            pa = prog.mat(X.T * pa)
        IA[f.parent] = _sym_var(prog, IA[f.parent] + Ia)
        pA[f.parent] = prog.mat(pA[f.parent] + pa)
    acc = {"0": _vec6(gravity_base(kin))}
    ddq = [None] * model.ndof
    for f in model.frames:
        a = acc[f.parent]
        for R, r in reversed(kin.stages(f.key)):
            a = prog.mat(_motion_x(R, r) * a)
        if f.moving:
            a = prog.mat(a + c[f.key])
            j = f.index
            ddq[j] = prog.var((u[f.key] - (U[f.key].T * a)[0]) * Dinv[f.key])
            a = prog.mat(a + S6[f.key] * ddq[j])
        acc[f.key] = a
    return sp.Matrix(ddq)

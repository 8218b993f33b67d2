"""Inverse dynamics by a customized recursive Newton-Euler algorithm.

    tau = A(q) ddq + C(q, dq) dq + Q(q) + friction(dq)

is computed without A or C: one outward pass for the link accelerations and
one inward pass for the link forces (Featherstone 2008, section 5.3, "RNEA";
Khalil and Dombre 2002, chapter 9, with every intermediate a variable of the
straight-line Program, so zeros and +-1 of the frame table fold away). In
each link's own frame, with S_j the joint's motion subspace:

    a_j = X_j a_parent + S_j ddq_j + v_j x S_j dq_j     (outward)
    f_j = I_j a_j + v_j x* I_j v_j + sum of X*_c f_c    (inward, children c)
    tau_j = S_j . f_j + Ia_j ddq_j                     (rotor, Krang report eq. 18)

Gravity enters as a fictitious base acceleration a_0 = (0, -g)
(Featherstone 2008, section 5.3), so Q(q) needs no pass of its own. The bias
h = C dq + Q (Pinocchio's nonLinearEffects) is the same recursion with
ddq = 0. Fixed frames carry inertia and pass motion and force through.
External forces (the *_fext kernels) are subtracted from their body's net
force, in the body's frame, as in Pinocchio's rnea(model, data, q, v, a, fext).
The velocities v_j are those of codegen/derive/kinematics.py, shared with C.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .composite_inertia import pair
from .kinematics import Kinematics

ZERO3 = (sp.S.Zero,) * 3


def force_cross(m, f):
    """m x* f for motion m = (w, v) and force f = (n, f) (Featherstone 2008, eq. 2.31)."""
    w, v = m
    n, fl = f
    return (sv.add(sv.cross(w, n), sv.cross(v, fl)), sv.cross(w, fl))


def accelerations(kin: Kinematics, vel, ddq, base):
    """Spatial acceleration (dw, dv) of every frame in its own frame.

    `ddq`: joint accelerations (symbols or zeros, indexed by joint index);
    `base`: the acceleration of frame 0 in frame 0 (motion vector). The
    linear part is the spatial (not classical) acceleration of the frame
    origin: the classical one adds w x v (Featherstone 2008, section 2.11).
    """
    prog, dq = kin.prog, kin.syms.dq
    acc = {"0": base}
    for f in kin.model.frames:
        a = kin.motion_to_child(f.key, acc[f.parent])
        if f.moving:
            j = f.index
            S = kin.joint_motion(f)
            Sdq = ([x * dq[j] for x in S[0]], [x * dq[j] for x in S[1]])
            # the free-flyer's six sum to v x v = 0 (Pinocchio's c_J = 0 for it)
            cw, cv = (ZERO3, ZERO3) if f.base else sv.motion_cross(vel[f.key], Sdq)
            a = (prog.vec([x + s * ddq[j] + c for x, s, c in zip(a[0], S[0], cw)]),
                 prog.vec([x + s * ddq[j] + c for x, s, c in zip(a[1], S[1], cv)]))
        acc[f.key] = a
    return acc


def gravity_base(kin: Kinematics):
    """Gravity as the base acceleration a_0 = (0, -g), in frame 0."""
    return (ZERO3, tuple(-x for x in kin.gravity()))


def external_forces(kin: Kinematics) -> dict:
    """Frame key -> the external force on that body, in its frame (Symbols.external_force)."""
    return {f.key: kin.syms.external_force(k) for k, f in enumerate(kin.syms.bodies)}


def link_forces(kin: Kinematics, vel, acc, fext=None):
    """Net force f_j = I_j a_j + v_j x* I_j v_j of each link, in its frame, minus the
    external force on it (`fext`: frame key -> force, its frame), as Pinocchio's rnea does."""
    prog = kin.prog
    out = {}
    fext = fext or {}
    for f in kin.model.frames:
        I = kin.syms.inertia(f)
        v = vel[f.key]
        Ia = sv.inertia_times(I, acc[f.key])
        # I v is the link's momentum: the same intermediates as codegen/derive/christoffel.py's
        n, fl = sv.inertia_times(I, v)
        Iv = (prog.vec(n), prog.vec(fl))
        c = force_cross(v, Iv)
        e = fext.get(f.key, (ZERO3, ZERO3))
        out[f.key] = (prog.vec([x + y - z for x, y, z in zip(Ia[0], c[0], e[0])]),
                      prog.vec([x + y - z for x, y, z in zip(Ia[1], c[1], e[1])]))
    return out


def joint_torques(kin: Kinematics, forces, ddq=None):
    """Inward pass: sum the subtree forces, project on each joint axis;
    plus the rotor term Ia_j ddq_j when ddq is given."""
    prog, model = kin.prog, kin.model
    total = dict(forces)
    tau = sp.zeros(model.ndof, 1)
    for f in reversed(model.frames):
        F = total[f.key]
        if f.moving:
            t = pair(kin.joint_motion(f), F)
            if ddq is not None:
                t += kin.syms.rotor(f) * ddq[f.index]
            tau[f.index] = prog.var(t)
        if f.parent != "0":
            n, fl = kin.force_to_parent(f.key, F)
            pn, pf = total[f.parent]
            total[f.parent] = (prog.vec(sv.add(pn, n)), prog.vec(sv.add(pf, fl)))
    return tau


def rnea(kin: Kinematics, vel, ddq, fext=None):
    """tau(q, dq, ddq) without friction: A ddq + C dq + Q (- sum J_k^T fext_k)."""
    acc = accelerations(kin, vel, ddq, gravity_base(kin))
    return joint_torques(kin, link_forces(kin, vel, acc, fext), ddq)


def bias(kin: Kinematics, vel, fext=None):
    """h(q, dq) = C dq + Q (- sum J_k^T fext_k): the recursion with ddq = 0."""
    zero = [sp.S.Zero] * kin.model.ndof
    acc = accelerations(kin, vel, zero, gravity_base(kin))
    return joint_torques(kin, link_forces(kin, vel, acc, fext))


def inverse_dynamics(kin: Kinematics, vel, ddq, friction, fext=None):
    """tau = A ddq + C dq + Q + friction(dq) (- sum J_k^T fext_k, fext: external_forces)."""
    tau = rnea(kin, vel, ddq, fext)
    return sp.Matrix([kin.prog.var(t + fr) for t, fr in zip(tau, friction)])

"""Inertia matrix A and gravity vector Q from composite (subtree) inertias.

The kinetic energy of the Krang report (Zafar 2015) eq. 11 is  E = 1/2 sum_j v_j^T I_j v_j  with
the link inertia I_j = (m_j, MS_j, J_j) and the link velocity v_j = sum of
S_i dq_i over the joints i on the path to j (eq. 7-8). Its Hessian in dq is
    A_ij = S_i^T I^C_k S_j   (k the deeper of i, j; 0 if on different branches)
with I^C_k the inertia of the subtree rooted at k, composed towards the root
with the parallel-axis theorem. The arms of a tree couple only through their
common ancestors, so arm-arm blocks are structurally zero.
Rotor inertia Ia_j is added to A_jj (eq. 18).

The potential energy (eq. 15) has gradient (eq. 5)
    Q_j = -g_j . (e_j x MS^C_j)  (revolute),   Q_j = -M^C_j g_j . e_j  (prismatic)
with MS^C_j, M^C_j the first moment and mass of the subtree about O_j and
g_j the gravity vector in frame j.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .kinematics import Kinematics


def composite_inertias(kin: Kinematics, given=None):
    """I^C_j of every frame, in frame j (leaves first, towards the root).
    `given` maps frame keys to subtree inertias computed elsewhere (a shared
    subtree routine, codegen/derive/subtrees.py): they replace the sums below them."""
    prog, model = kin.prog, kin.model
    comp = {f.key: kin.syms.inertia(f) for f in model.frames}
    for f in reversed(model.frames):
        if given and f.key in given:
            comp[f.key] = given[f.key]
        if f.parent == "0":
            continue
        mass, h, J = kin.inertia_to_parent(f.key, comp[f.key])
        pm, ph, pJ = comp[f.parent]
        comp[f.parent] = (prog.var(pm + mass), prog.vec(sv.add(ph, h)), prog.mat(pJ + J))
    return comp


def ancestors(model, key):
    """Frames strictly above `key`, nearest first (not including frame 0)."""
    out = []
    f = model.frame(key)
    while f.parent != "0":
        f = model.frame(f.parent)
        out.append(f)
    return out


def propagate_up(kin, f, forces, visit):
    """Carry forces of frame f up to the root, calling visit(frame, forces)
    at every moving ancestor (the forces expressed in that ancestor's frame)."""
    key = f.key
    for a in ancestors(kin.model, key):
        forces = [kin.force_to_parent(key, F) for F in forces]
        key = a.key
        if a.moving:
            visit(a, forces)


def index_span(model) -> int:
    """1 + the largest joint index: NDOF, or more for a subtree (codegen/derive/subtrees.py),
    which keeps the whole model's joint indices."""
    return 1 + max((f.index for f in model.joints), default=-1)


def inertia_matrix(kin: Kinematics, comp, given=None):
    """A; `given` (codegen/derive/subtrees.Given) supplies what a shared subtree
    routine computed: its joints' I^C_j S_j in its root frame, its block of A."""
    model, prog = kin.model, kin.prog
    n = index_span(model)
    A = sp.zeros(n, n)
    for f in model.joints:
        j = f.index
        if given and f.key in given.forces:
            forces, start = given.forces[f.key]
            F, start = forces["IS"], model.frame(start)
        else:
            Sj = kin.joint_motion(f)
            F = inertia_times_var(prog, comp[f.key], Sj)
            A[j, j] = prog.var(pair(Sj, F) + kin.syms.rotor(f))
            start = f

        def visit(a, forces, j=j):
            A[a.index, j] = A[j, a.index] = prog.var(pair(kin.joint_motion(a), forces[0]))

        propagate_up(kin, start, [F], visit)
    for (i, j), value in (given.blocks["A"].items() if given else ()):
        A[i, j] = value
    return A


def gravity_vector(kin: Kinematics, comp, given=None):
    """Q; for a joint of a shared subtree routine (`given`, codegen/derive/subtrees.py)
    Q_j = S_j . I^C_j a_g = (I^C_j S_j) . (0, -g), the pairing taken in the
    routine's root frame, where the routine returned I^C_j S_j and `kin`
    (placement only at the root) gives g."""
    model, prog = kin.model, kin.prog
    g = kin.gravity_in_frames()
    Q = sp.zeros(model.ndof, 1)
    for f in model.joints:
        if given and f.key in given.forces:
            forces, root = given.forces[f.key]
            Q[f.index] = prog.var(-sv.dot(g[root], forces["IS"][1]))
            continue
        mass, h, _ = comp[f.key]
        e = list(f.axis)
        if f.angular:
            Q[f.index] = prog.var(-sv.dot(g[f.key], sv.cross(e, h)))
        else:
            Q[f.index] = prog.var(-mass * sv.dot(g[f.key], e))
    return Q


def inertia_times_var(prog, I, m):
    n, f = sv.inertia_times(I, m)
    return (prog.vec(n), prog.vec(f))


def pair(motion, force):
    """The scalar motion . force."""
    return sv.dot(motion[0], force[0]) + sv.dot(motion[1], force[1])

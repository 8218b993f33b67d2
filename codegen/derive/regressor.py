"""The joint-torque regressor: tau(q, dq, ddq) = Y(q, dq, ddq) . pi.

Inverse dynamics is linear in the standard parameters (Khalil and Dombre
2002, sec. 12.3; Atkeson, An and Hollerbach 1986). Per link j the net force
of the Newton-Euler recursion (codegen/derive/rnea.py),

    f_j = I_j a_j + v_j x* I_j v_j,

is linear in the ten inertial parameters (m, MX, MY, MZ, XX, XY, XZ, YY,
YZ, ZZ) of I_j: column k of the 6 x 10 link regressor is the force the unit
inertia E_k (that parameter 1, the others 0) would need, computed with the
same spatial algebra as the recursion (no expansion, no differentiation).
A column reaches the joints i of the link's support as
Y[i, col] = S_i . X*_{i<-j} f_jk = (X_{j<-i} S_i) . f_jk: every joint axis
is carried down the tree once (support_axes) and dotted with the link's
ten forces in the link's own frame, rather than each force carried up
(regressor()). Entries of joints outside the support are structurally
zero: the tree's sparsity kept.
The rotor inertia, viscous and Coulomb friction columns of joint j hold
ddq_j, dq_j and sign(dq_j) in row j (rnea.py's rotor term; friction.py).

The columns are every parameter of p but the geometry and g, in p order:
fixed frames carry inertia welded to their parent and have their own ten
columns. Y reads q, dq, ddq, the geometry and g only.
"""
from __future__ import annotations

import sympy as sp

from ..read.records import ACTUATOR, INERTIAL
from . import spatial as sv
from .composite_inertia import pair
from .kinematics import Kinematics
from .rnea import accelerations, force_cross, gravity_base

ZERO3 = [sp.S.Zero] * 3


def regressor_params(model) -> tuple:
    """The parameter names of Y's columns, in p order (geometry and g excluded)."""
    return tuple(n for f in model.frames for n in f.param_names())


def unit_inertia(name):
    """(mass, MS, J) with parameter `name` 1 and every other 0."""
    mass = sp.S.One if name == "m" else sp.S.Zero
    h = [sp.S.One if name == f"M{a}" else sp.S.Zero for a in "XYZ"]
    J = sp.zeros(3, 3)
    if name in ("XX", "XY", "XZ", "YY", "YZ", "ZZ"):
        i, k = "XYZ".index(name[0]), "XYZ".index(name[1])
        J[i, k] = J[k, i] = 1
    return (mass, h, J)


def link_regressor(kin: Kinematics, v, a):
    """The 6 x 10 link regressor as ten force vectors (n, f), INERTIAL order."""
    cols = []
    for name in INERTIAL:
        E = unit_inertia(name)
        Ea = sv.inertia_times(E, a)
        c = force_cross(v, sv.inertia_times(E, v))
        cols.append((kin.prog.vec(sv.add(Ea[0], c[0])), kin.prog.vec(sv.add(Ea[1], c[1]))))
    return cols


def support_axes(kin: Kinematics) -> dict:
    """frame key -> [(i, S_i expressed in that frame)] for every moving joint
    i from the frame to the root: each ancestor's axis carried down the tree
    once per frame, one motion transform per (joint, frame) pair."""
    axes = {"0": []}
    for f in kin.model.frames:
        down = [(i, kin.motion_to_child(f.key, m)) for i, m in axes[f.parent]]
        if f.moving:
            down.append((f.index, kin.joint_motion(f)))
        axes[f.key] = down
    return axes


def regressor(kin: Kinematics, vel, ddq) -> sp.Matrix:
    """Y (NDOF x NPI) with inverse dynamics (friction and rotors included) = Y . pi.

    Y[i, column k of link j] = S_i . X*_{i<-j} f_jk = (X_{j<-i} S_i) . f_jk:
    rather than carrying each of a link's ten column forces up to every
    joint of its support (ten force transforms per level, Pinocchio's
    jointTorqueRegressor), each support joint's axis is carried down to the
    link once (support_axes) and dotted with the ten forces in the link's
    frame -- the same entries at about a third of the transforms."""
    model, prog, syms = kin.model, kin.prog, kin.syms
    names = regressor_params(model)
    col = {n: k for k, n in enumerate(names)}
    Y = sp.zeros(model.ndof, len(names))
    acc = accelerations(kin, vel, ddq, gravity_base(kin))
    axes = support_axes(kin)
    for f in model.frames:
        if f.massless:  # a free-flyer's five parameter-free frames: no columns
            continue
        for name, force in zip(INERTIAL, link_regressor(kin, vel[f.key], acc[f.key])):
            if any(x != 0 for x in force[0] + force[1]):
                for i, axis in axes[f.key]:
                    Y[i, col[f"{name}_{f.key}"]] = prog.var(pair(axis, force))
        if f.moving and not f.base:  # rotor inertia and friction: actuated joints only
            j = f.index
            for name, value in zip(ACTUATOR, (ddq[j], syms.dq[j], sp.sign(syms.dq[j]))):
                Y[j, col[f"{name}_{f.key}"]] = prog.var(value)
    return Y

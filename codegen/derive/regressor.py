"""The joint-torque regressor: tau(q, dq, ddq) = Y(q, dq, ddq) . pi.

Inverse dynamics is linear in the standard parameters (Khalil and Dombre
2002, sec. 12.3; Atkeson, An and Hollerbach 1986). Per link j the net force
of the Newton-Euler recursion (codegen/derive/rnea.py),

    f_j = I_j a_j + v_j x* I_j v_j,

is linear in the ten inertial parameters (m, MX, MY, MZ, XX, XY, XZ, YY,
YZ, ZZ) of I_j: column k of the 6 x 10 link regressor is the force the unit
inertia E_k (that parameter 1, the others 0) would need, computed with the
same spatial algebra as the recursion (no expansion, no differentiation).
Each column reaches the joints of the link's support as the forces do in
the inward pass: carried to the parent frame by frame and projected on every
moving joint's axis on the way (Y[i, col] = S_i . X*_{i<-j} f_jk). Entries of
joints outside the support are structurally zero: the tree's sparsity kept.
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


def support_projection(kin: Kinematics, key, force, column, Y):
    """Write S_i . (force carried to frame i) into Y[i, column] for every
    moving joint i from frame `key` down to the root."""
    frames = {f.key: f for f in kin.model.frames}
    while key != "0":
        f = frames[key]
        if f.moving:
            Y[f.index, column] = kin.prog.var(pair(kin.joint_motion(f), force))
        if f.parent == "0":
            break
        force = kin.force_to_parent(key, force)
        key = f.parent


def regressor(kin: Kinematics, vel, ddq) -> sp.Matrix:
    """Y (NDOF x NPI) with inverse dynamics (friction and rotors included) = Y . pi."""
    model, prog, syms = kin.model, kin.prog, kin.syms
    names = regressor_params(model)
    col = {n: k for k, n in enumerate(names)}
    Y = sp.zeros(model.ndof, len(names))
    acc = accelerations(kin, vel, ddq, gravity_base(kin))
    for f in model.frames:
        if f.massless:  # a free-flyer's five parameter-free frames: no columns
            continue
        for name, force in zip(INERTIAL, link_regressor(kin, vel[f.key], acc[f.key])):
            if any(x != 0 for x in force[0] + force[1]):
                support_projection(kin, f.key, force, col[f"{name}_{f.key}"], Y)
        if f.moving and not f.base:  # rotor inertia and friction: actuated joints only
            j = f.index
            for name, value in zip(ACTUATOR, (ddq[j], syms.dq[j], sp.sign(syms.dq[j]))):
                Y[j, col[f"{name}_{f.key}"]] = prog.var(value)
    return Y

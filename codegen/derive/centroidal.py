"""Centre of mass, its Jacobian and the centroidal momentum matrix.

All three come from quantities the inertia matrix already needs: the
composite (subtree) inertia I^C_j of every frame, in frame j
(codegen/derive/composite_inertia.py), and the world poses (0R_j, 0P_j)
(codegen/derive/kinematics.py); nothing is expanded and differentiated.

Which mass counts. The bodies the joints move: the subtrees of the topmost
moving frames. Links bolted to the world (fixed frames with no moving
ancestor) are left out, as Pinocchio leaves out the bodies of its universe
joint in centerOfMass and computeCentroidalMap. M is the total moving mass.

    com   c = (1/M) sum_r (0R_r MS^C_r + M^C_r 0P_r)   over the topmost moving frames r

The momentum that a unit velocity of joint j gives the subtree it moves is
the spatial force F_j = I^C_j S_j in frame j (Featherstone 2008, sec. 6.2,
the composite-rigid-body algorithm's column, which A also uses: A_jj = S_j . F_j),
with linear part f_j and moment n_j about O_j. In world axes, about the CoM
(Orin, Goswami and Lee 2013, "Centroidal dynamics of a humanoid robot", eq. 11-14):

    Ag[0:3, j] = 0R_j f_j                                   linear momentum
    Ag[3:6, j] = 0R_j n_j + (0P_j - c) x 0R_j f_j            angular momentum about c
    Jc[:, j]   = Ag[0:3, j] / M

Row order linear first, angular second: Pinocchio's computeCentroidalMap
(its Force is [linear; angular]); columns are the joints, zero for joints
moving no mass. Rotor inertia Ia (armature) is not body momentum and is left
out, as Pinocchio does. So Ag dq = h_G, the centroidal momentum, and
M Jc dq = M dc/dt = the linear momentum.

Floating base. With q =
[p_b, quat_b, joints] and v = [v_b, w_b (both base axes), dq], let frame 0 of
the derivation be the base link's frame b. Everything above is then computed
in base axes, unchanged, with the base link itself counted (it moves):
c_b, Jc_b, Ag_b. The world quantities need the base pose only at the end:

    c = p_b + R_b c_b,   Jc = R_b [Jc_b over the joint columns],
    Ag = blockdiag(R_b, R_b) Ag_b,
    base columns: Jc[:, 0:3] = R_b, Jc[:, 3:6] = -R_b hat(c_b) (velocity of the
    CoM for a unit base twist in base axes), and Ag[:, 0:6] = blockdiag(R_b, R_b)
    X*_(c_b <- b) I^C_b, the whole robot's composite inertia about the base
    origin moved to the CoM (Orin et al. 2013, eq. 22: Ag's base block is
    the centroidal composite inertia times the base adjoint).

The base orientation thus enters only through R_b, once, after the sums.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .composite_inertia import inertia_times_var
from .kinematics import Kinematics


def moving_roots(model) -> list:
    """The topmost moving frames: the roots of the subtrees the joints move."""
    roots = []
    for f in model.frames:
        if f.moving and not any(a.moving for a in model.chain(f.parent)):
            roots.append(f)
    return roots


def centroidal(kin: Kinematics, comp, poses):
    """(c, Jc, Ag): the CoM (3 x 1, world), its Jacobian (3 x NDOF) and the
    centroidal momentum matrix (6 x NDOF, linear rows first), all in world axes."""
    model, prog = kin.model, kin.prog
    n = model.ndof
    mass, moment = sp.S.Zero, [sp.S.Zero] * 3
    for r in moving_roots(model):
        m_r, h_r, _ = comp[r.key]
        R, p = poses[r.key]
        mass += m_r
        moment = sv.add(moment, sv.add(sv.matvec(R, h_r), [m_r * x for x in p]))
    total = prog.var(mass)
    inv = prog.var(1 / total) if total != 0 else sp.S.Zero  # no moving mass: a model without links
    c = prog.vec([inv * x for x in moment])
    Jc, Ag = sp.zeros(3, n), sp.zeros(6, n)
    for f in model.joints:
        j = f.index
        n_j, f_j = inertia_times_var(prog, comp[f.key], kin.joint_motion(f))
        R, p = poses[f.key]
        lin = prog.vec(sv.matvec(R, f_j))
        ang = prog.vec(sv.add(sv.matvec(R, n_j), sv.cross([a - b for a, b in zip(p, c)], lin)))
        # on a free-flyer `poses` are base-frame poses: one rotation to the world per column
        lin, ang = kin.rotate_to_world(lin), kin.rotate_to_world(ang)
        for r in range(3):
            Ag[r, j], Ag[r + 3, j] = lin[r], ang[r]
            Jc[r, j] = prog.var(inv * lin[r])
    c = kin.pose_to_world(sp.eye(3), c)[1]
    return sp.Matrix(c), Jc, Ag

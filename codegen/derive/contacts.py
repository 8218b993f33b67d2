"""Contact kinematics for constrained dynamics (docs/contact-dynamics.md): the rows of
every contact stacked in model order, 3 for a point contact ("3d"), 6 for a flat one ("6d").

Conventions (Pinocchio's RigidConstraintModel): a 3d contact constrains the velocity of its
origin in world axes (LOCAL_WORLD_ALIGNED), and its force acts at the origin in world axes; a
6d contact constrains its whole twist in its own axes (LOCAL), force then moment.

* Jc: the contact Jacobian, Jc dq the contact velocity;
* gamma: the contact acceleration at ddq = 0 (Jc-dot dq): for a 3d contact the classical
  acceleration of the point (d/dt of its world velocity), for a 6d one the spatial
  acceleration of the frame in its own axes (the derivative of its body twist);
* the derivatives on the tangent space, at fixed contact forces lambda and fixed ddq, of the
  contact acceleration ac = Jc ddq + gamma (wrt q and dq), of the contact velocity Jc dq (wrt
  q) and of the generalized contact force Jc^T lambda (wrt q): what the constrained
  dynamics' derivatives add to the inverse dynamics' (Carpentier and Mansard 2018, "Analytical
  derivatives of rigid body dynamics algorithms", sec. IV; the KKT system: the source template).

The derivatives are tangents of the programs above (codegen/derive/differentiate.py) along
the joints' coordinates and the velocities. Everything is formed in base axes, where nothing
depends on a free-flyer's pose; a world-axes row is R_b x, whose derivative along the base's
rotation delta-theta (base axes, Pinocchio's q (+) delta) is R_b (e_k x x), and a force in
world axes enters as R_b^T lambda, whose derivative is (R_b^T lambda) x e_k.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .differentiate import joint_seeds, tangents
from .fk import ee_pose
from .forward_dynamics import inverse, ltdl, ltdl_solve, parents
from .jacobians import jacobians, world_columns
from .kinematics import Kinematics

_E = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


def _frame(kin: Kinematics, poses, vel, acc0, c):
    """(J, gamma) of contact c in the axes it is constrained in, before a free-flyer's rotation
    to the world: 3d: 3 rows, base axes (world on a fixed base); 6d: 6 rows, its own axes."""
    prog, n = kin.prog, kin.model.ndof
    R, _ = poses[c.frame]
    _, pc = ee_pose(kin, poses, c)
    base = world_columns(kin, poses, c, pc, sp.zeros(6, n))  # base axes, at the contact's origin
    w, v = vel[c.frame]
    dw, dv = acc0[c.frame]
    r = list(c.origin)
    if c.kind == "3d":
        # classical acceleration of the origin: dv + w x v, plus dw x r + w x (w x r) off the frame's origin
        lin = sv.add(dv, sv.cross(w, v))
        if any(o != 0 for o in r):
            lin = sv.add(lin, sv.add(sv.cross(dw, r), sv.cross(w, prog.vec(sv.cross(w, r)))))
        gamma = prog.vec(sv.matvec(R, prog.vec(lin)))
        return base[:3, :], gamma
    # spatial acceleration at the origin (a motion vector: dv + dw x r), in the contact's axes
    lin = prog.vec(sv.add(dv, sv.cross(dw, r))) if any(o != 0 for o in r) else dv
    C = c.rotation
    to_c = (lambda x: prog.vec(sv.rotate_to_child(C, x))) if C != sp.eye(3) else (lambda x: list(x))  # noqa: E731
    J = jacobians(kin, poses, c)[1]  # its own axes (LOCAL): the local Jacobian's statements
    return J, to_c(lin) + to_c(dw)


def contact_kinematics(kin: Kinematics, poses, vel, acc0):
    """(Jc, gamma): rows of every contact (world axes for 3d ones), Jc NROWS x NV."""
    rows_J, rows_g = [], []
    for c in kin.model.contacts:
        J, g = _frame(kin, poses, vel, acc0, c)
        if c.kind == "3d":
            J = _rotate_columns(kin, J)
            g = kin.rotate_to_world(g)
        rows_J.append(J)
        rows_g += list(g)
    return sp.Matrix.vstack(*rows_J), sp.Matrix(rows_g)


def contact_system(prog, model, A, b, Jc, gamma, tau, dq):
    """(ddq0, a0, vc, Z, Lf, Dinv, G) of every contact, through the sparse factorization
    A = L^T D L (codegen/derive/forward_dynamics.py): the free acceleration ddq0 = A^-1 (tau - b),
    the contacts' acceleration at it a0 = Jc ddq0 + gamma, their velocity vc = Jc dq, the
    operational-space (Delassus) matrix G = Jc A^-1 Jc^T = W^T D^-1 W with W = L^-T Jc^T, and
    Z = (D^-1 W)^T (NROWS x NV), L (NV x NV, zero off its pattern) and D^-1, from which the run
    time forms A^-1 Jc^T lambda = L^-1 (Z^T lambda) for the active rows only (the source
    template's unrolled kk_lsolve) and A^-1 of the derivatives' right-hand sides. W's solve
    walks the ancestors of a row's nonzeros (a foot: its leg and the base), so G's entries are short sums (Featherstone 2008, sec. 8.1)."""
    lam = parents(model)
    L, Dinv = ltdl(prog, A, lam)
    n, nr = A.rows, Jc.rows
    ddq0 = ltdl_solve(prog, L, Dinv, lam, [t - x for t, x in zip(tau, b)])
    W, Z = [], []
    for r in range(nr):
        w = _transposed_solve(prog, L, lam, list(Jc[r, :]))
        W.append(w)
        Z.append([prog.var(x * d) if x != 0 else sp.S.Zero for x, d in zip(w, Dinv)])
    dot = lambda u, w: prog.var(sum((x * y for x, y in zip(u, w)), sp.S.Zero))  # noqa: E731
    G = sp.zeros(nr, nr)
    for r in range(nr):
        for c in range(r + 1):
            G[r, c] = G[c, r] = dot(W[r], Z[c])
    a0 = sp.Matrix([prog.var(dot(Jc[r, :], ddq0) + gamma[r]) for r in range(nr)])
    vc = sp.Matrix([dot(Jc[r, :], dq) for r in range(nr)])
    Lf = sp.zeros(n, n)
    for (i, k), x in L.items():
        Lf[i, k] = x
    return ddq0, a0, vc, sp.Matrix(Z), Lf, sp.Matrix(Dinv), G


def _transposed_solve(prog, L, lam, b):
    """L^-T b (L unit lower triangular on the tree's pattern): descendants first, each entry
    passed up its ancestor chain."""
    z = list(b)
    for i in reversed(range(len(z))):
        z[i] = prog.var(z[i])
        j = lam[i]
        while j >= 0:
            if z[i] != 0:
                z[j] = z[j] - L[i, j] * z[i]
            j = lam[j]
    return z


def inverse_inertia(prog, model, A):
    """A^-1 from the sparse LTDL factors (forward_dynamics.inverse)."""
    lam = parents(model)
    L, Dinv = ltdl(prog, A, lam)
    return inverse(prog, L, Dinv, lam)


def contact_placements(kin: Kinematics, poses):
    """(positions NCONTACTS x 3, rotations NCONTACTS x 9): every contact frame's origin and axes
    in the world (the Baumgarte position term; a 6d contact's placement error reads both)."""
    positions, rotations = [], []
    for c in kin.model.contacts:
        R, p = kin.pose_to_world(*ee_pose(kin, poses, c))
        positions.append(list(p))
        rotations.append(list(R))
    return sp.Matrix(positions), sp.Matrix(rotations)


def contact_derivatives(kin: Kinematics, poses, vel, acc0):
    """(dJtf_dq, dac_dq, dac_dv, dvc_dq) at ddq = syms.ddq, lambda = syms.lam (contact order,
    the Jc rows' axes): d(Jc^T lambda)/dq (NV x NV), d(Jc ddq + gamma)/dq and /dv, d(Jc dq)/dq
    (NROWS x NV each), q-derivatives on the tangent space."""
    model, syms, prog = kin.model, kin.syms, kin.prog
    n = model.ndof
    a, dq = syms.ddq, syms.dq
    seeds = joint_seeds(syms, ("q", "v"))
    qdirs, vdirs = [("q", j) for j in range(n)], [("v", j) for j in range(n)]
    floating = model.floating_base
    Rb = kin.base_rotation() if floating else None
    dJtf = sp.zeros(n, n)
    dac_dq, dac_dv, dvc_dq = [], [], []
    row = 0
    for c in model.contacts:
        J, g = _frame(kin, poses, vel, acc0, c)
        m = J.rows
        lam = syms.lam[row:row + m]
        ac = [prog.var(sum((J[i, j] * a[j] for j in range(n)), sp.S.Zero) + g[i]) for i in range(m)]
        vc = [prog.var(sum((J[i, j] * dq[j] for j in range(n)), sp.S.Zero)) for i in range(m)]
        world = c.kind == "3d" and floating
        # the force in the axes J is in: base axes (R_b^T lambda) for a 3d contact on a free-flyer
        f = prog.vec(sv.matvec(Rb.T, lam)) if world else list(lam)
        gen = [prog.var(sum((J[i, j] * f[i] for i in range(m)), sp.S.Zero)) for j in range(n)]
        t_ac, t_vc, t_gen = (tangents(prog, xs, seeds) for xs in (ac, vc, gen))
        Aq = sp.Matrix(m, n, lambda i, j: t_ac[i].get(qdirs[j], sp.S.Zero))
        Av = sp.Matrix(m, n, lambda i, j: t_ac[i].get(vdirs[j], sp.S.Zero))
        Vq = sp.Matrix(m, n, lambda i, j: t_vc[i].get(qdirs[j], sp.S.Zero))
        Gq = sp.Matrix(n, n, lambda i, j: t_gen[i].get(qdirs[j], sp.S.Zero))
        if world:
            for k in range(3):  # the base's rotation, velocity index 3 + k
                ek = _E[k]
                Aq[:, 3 + k] = sp.Matrix(prog.vec(sv.cross(ek, ac)))
                Vq[:, 3 + k] = sp.Matrix(prog.vec(sv.cross(ek, vc)))
                fk = prog.vec(sv.cross(f, ek))
                for j in range(n):
                    Gq[j, 3 + k] = prog.var(sum((J[i, j] * fk[i] for i in range(m)), sp.S.Zero))
            Aq, Av, Vq = (_rotate_columns(kin, M) for M in (Aq, Av, Vq))
        dJtf += Gq
        dac_dq.append(Aq)
        dac_dv.append(Av)
        dvc_dq.append(Vq)
        row += m
    dJtf = dJtf.applyfunc(prog.var)
    return dJtf, sp.Matrix.vstack(*dac_dq), sp.Matrix.vstack(*dac_dv), sp.Matrix.vstack(*dvc_dq)


def _rotate_columns(kin: Kinematics, M):
    out = sp.zeros(3, M.cols)
    for col in range(M.cols):
        b = list(M[:, col])
        w = kin.rotate_to_world(b) if any(x != 0 for x in b) else b
        for k in range(3):
            out[k, col] = w[k]
    return out


def _ancestors(model, key):
    """Velocity indices of the joints that move frame `key` (its moving ancestors-or-self)."""
    frames = {f.key: f for f in model.frames}
    out = []
    while key in frames:
        f = frames[key]
        if f.moving:
            out.append(f.index)
        key = f.parent
    return sorted(out)


def contact_dynamics_derivatives(kin: Kinematics, friction):
    """(dtau_dq, dtau_dv, dac_dq, dac_dv, dvc_dq) at q, v, ddq = syms.ddq and lambda = syms.lam:
    the derivatives of ID(q, v, ddq) - Jc^T lambda (lambda fixed in the contacts' axes) and of the
    contact acceleration and velocity as contact_derivatives', from ONE forward pass of the
    inverse dynamics' derivatives (dynamics_derivatives.forward_pass; frame 0 quantities).

    The contact forces are external forces on the contact bodies (Carpentier and Mansard 2018,
    sec. IV; Pinocchio's computeConstraintDynamicsDerivatives): a 6d contact's moves with its
    body, as the pair form assumes; a 3d contact's keeps its world direction, so the pair form's
    term of the force f turning with joint j's twist (w_j, u_j) is taken back:
    + Jc_r . (w_j x f) for r, j both moving the contact. With J_j, dVdq_j, dAdq_j, dAdv_j of
    joint j (dAdq with gravity a_g = (0, -g) in its parent's acceleration) and the body's v and
    a (gravity included), a perturbation of q_j moves the body rigidly (m -> J_j x m) and
    adds dv = dVdq_j, da = dAdq_j + J_j x a_g + dVdq_j x v; one of v_j adds dv = J_j,
    da = dAdv_j + J_j x v (Pinocchio's getFrameAccelerationDerivatives). A 6d contact reads
    them in its own axes (the rigid part then cancels); a 3d contact's point velocity and
    classical acceleration turn with w_j as free vectors, in base axes and then the world's."""
    from . import dynamics_derivatives as dd

    model, syms, prog = kin.model, kin.syms, kin.prog
    n = model.ndof
    poses = kin.base_frame_poses()
    floating = model.floating_base
    Rb = kin.base_rotation() if floating else None
    row, fext0, places = 0, {}, []
    for c in model.contacts:
        lam = list(syms.lam[row:row + c.rows])
        Rc, pc = ee_pose(kin, poses, c)
        if c.kind == "3d":  # world axes -> base axes
            f = prog.vec(sv.matvec(Rb.T, lam)) if floating else lam
            wrench = (prog.vec(sv.cross(pc, f)), f)
        else:  # force then moment, the contact's axes
            f = prog.vec(sv.matvec(Rc, lam[:3]))
            wrench = (prog.vec(sv.add(sv.matvec(Rc, lam[3:]), sv.cross(pc, f))), f)
        old = fext0.get(c.frame)
        fext0[c.frame] = wrench if old is None else tuple(prog.vec(sv.add(x, y)) for x, y in zip(old, wrench))
        places.append((Rc, pc, f))
        row += c.rows
    frames, cols = dd.forward_pass(kin, list(syms.ddq), fext0=fext0)
    dq, dv = dd.pair_form_of(kin, frames, cols, friction).matrices(prog)
    ag = ([sp.S.Zero] * 3, [-x for x in kin.gravity()])
    mc = lambda m, x: dd._motion(prog, sv.motion_cross(m, x))  # noqa: E731
    add = lambda a, b: (prog.vec(sv.add(a[0], b[0])), prog.vec(sv.add(a[1], b[1])))  # noqa: E731
    rows_q, rows_v, rows_c = [], [], []
    corr = {}
    for c, (Rc, pc, f) in zip(model.contacts, places):
        sup = _ancestors(model, c.frame)
        st = frames.get(c.frame)
        v = st.v if st else ([sp.S.Zero] * 3, [sp.S.Zero] * 3)
        Aq, Av, Vq = (sp.zeros(c.rows, n) for _ in range(3))
        at = lambda m: prog.vec(sv.add(m[1], sv.cross(m[0], pc)))  # noqa: E731 - a motion's point velocity at pc
        if c.kind == "3d":
            w = v[0]
            a = add(st.a, ([sp.S.Zero] * 3, list(kin.gravity()))) if st else v
            vp = at(v)
            ap = prog.vec(sv.add(at(a), sv.cross(w, vp)))
        for j in sup:
            J, dV, dA, dAv = cols[j]
            nq = add(add(dA, mc(J, ag)), mc(dV, v))  # da's non-rigid part along q_j
            nv = add(dAv, mc(J, v))  # da along v_j
            if c.kind == "6d":
                loc = lambda m: (prog.vec(sv.rotate_to_child(Rc, at(m))) +  # noqa: E731
                                 prog.vec(sv.rotate_to_child(Rc, m[0])))
                cq, cv, cvq = loc(nq), loc(nv), loc(dV)
            else:
                dVp = at(dV)
                cvq = prog.vec(sv.add(sv.cross(J[0], vp), dVp))
                cq = prog.vec(sv.add(sv.add(sv.cross(J[0], ap), at(nq)),
                                     sv.add(sv.cross(dV[0], vp), sv.cross(w, dVp))))
                cv = prog.vec(sv.add(at(nv), sv.add(sv.cross(J[0], vp), sv.cross(w, at(J)))))
                wf = prog.vec(sv.cross(J[0], f))
                for r in sup:  # the force's world direction (docstring)
                    corr[(r, j)] = corr.get((r, j), sp.S.Zero) + sv.dot(at(cols[r][0]), wf)
            for i in range(c.rows):
                Aq[i, j], Av[i, j], Vq[i, j] = cq[i], cv[i], cvq[i]
        if c.kind == "3d" and floating:
            Aq, Av, Vq = (_rotate_columns(kin, M) for M in (Aq, Av, Vq))
        rows_q.append(Aq)
        rows_v.append(Av)
        rows_c.append(Vq)
    for (r, j), x in corr.items():
        dq[r, j] = prog.var(dq[r, j] + x)
    return dq, dv, sp.Matrix.vstack(*rows_q), sp.Matrix.vstack(*rows_v), sp.Matrix.vstack(*rows_c)

"""Derivatives of inverse and forward dynamics, for MPC and trajectory
optimization: the analytical recursion of Carpentier and Mansard 2018
("Analytical derivatives of rigid body dynamics algorithms", RSS), derived
here in world axes (frame 0: the world on a fixed base, the base frame at the
current configuration on a free-flyer, a frame fixed for the instant of the
derivative), as a straight-line program.

Notation: every spatial vector in frame 0, Featherstone's [angular; linear]
order; x the motion cross product, x* its dual; j <= r: joint j supports r.

Forward pass, per frame k: the pose, the velocity v_k and acceleration a_k
(gravity as the base acceleration a_0 = (0, -g)), the link inertia I_k about
the origin (the frame's parameters moved by its pose: composite inertias are
then plain sums), its momentum h_k = I_k v_k, force f_k = I_k a_k + v_k x* h_k
and the time derivative dI_k = v_k x* I_k - I_k v_k x, an inertia with zero
mass: (0, m u + w x h, hat(w) J - J hat(w) - hat(u) hat(h) - hat(h) hat(u))
for v = (w, u). Per joint j (parent body p): the column J_j = 0X_j S_j,
dVdq_j = v_p x J_j, dAdq_j = a_p x J_j + v_p x dVdq_j and dAdv_j = v_j x J_j +
dVdq_j (Pinocchio's names). Backward pass: subtree sums Yc, dYc, F, H of I,
dI, f, h.

A perturbation of q_j moves the subtree of j rigidly by the twist J_j, which
gives (derivation in the module's tests' terms; the paper's eqs. 9-13)

    d tau_r/d q_j = alpha_r . dAdq_j + beta_r . dVdq_j         j <= r
    d tau_r/d v_j = alpha_r . dAdv_j + beta_r . J_j             j <= r
    d tau_r/d q_j = J_r . (J_j x* F_j + Yc_j dAdq_j + dYc_j dVdq_j + dVdq_j x* H_j)   r < j
    d tau_r/d v_j = J_r . (Yc_j dAdv_j + dYc_j J_j + J_j x* H_j)                    r < j

with alpha_r = Yc_r J_r and beta_r = dYc_r J_r + gamma_r, gamma_r . u =
J_r . (u x* H_r). Entries with neither j <= r nor r < j are structural zeros
(not computed): O(n) spatial work plus a few dot products per
(ancestor, descendant) pair. Rotor inertia Ia ddq has no q or v derivative;
friction's viscous term gives diag(Fv) in dtau_dv, Coulomb's Fc sign(v) zero
(its derivative away from v = 0; at v = 0 too).

External forces fixed in their bodies (the *_fext kernels, rnea's fext) are
subtracted from f_k in frame 0; moving rigidly with the subtree that carries
them, they enter the derivatives through F alone.

Free-flying base: its six columns are the base's unit twists (J = e_k in
base axes), which is exactly Pinocchio's tangent-space convention (q (+)
delta through `integrate`, delta a local twist); they form one joint whose
parent is the world (v_p = 0, a_p = a_0), so every pair of base columns
takes the "j <= r" form.

Forward dynamics ddq = FD(q, v, tau): differentiating ID(q, v, FD) = tau
(Carpentier and Mansard 2018, eq. 8):

    dddq_dq = -A^-1 dID/dq |_(a = ddq),   dddq_dv = -A^-1 dID/dv |_(a = ddq),
    Minv = A^-1,

Minv from the sparse L^T D L factors of forward_dynamics.py (their
inverse, forward_dynamics.inverse), sharing A's factorization with
forward_dynamics; the two products
with Minv are left to emission (compact loops, codegen/emit/pair_loops.py),
as are the pair products of dtau_dq and dtau_dv (PairForm): O(n^2) dot
products and O(n^3) multiply-adds of one shape, which as straight-line code
were most of the kernels' machine code.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import forward_dynamics as fd
from . import spatial as sv
from .rnea import force_cross

ZERO = [sp.S.Zero] * 3


def _motion(prog, m):
    return (prog.vec(m[0]), prog.vec(m[1]))


def _dot(a, b):
    return sv.dot(a[0], b[0]) + sv.dot(a[1], b[1])


def _add(prog, a, b):
    return (prog.vec(sv.add(a[0], b[0])), prog.vec(sv.add(a[1], b[1])))


def _symmetric(prog, upper):
    """A symmetric 3 x 3 matrix from its entries (i, k), i <= k: each computed once."""
    u = {ik: prog.var(e) for ik, e in upper.items()}
    return sp.Matrix(3, 3, lambda i, k: u[(min(i, k), max(i, k))])


UPPER = [(i, k) for i in range(3) for k in range(i, 3)]


def _inertia_rate(prog, I, v):
    """dI = v x* I - I v x for inertia I = (m, h, J) moving with v = (w, u):
    (h', J') of an inertia of zero mass (module docstring). J' = M + M^T with
    M = hat(w) J, minus h u^T + u h^T - 2 (u . h) 1 (= hat(u) hat(h) + hat(h) hat(u))."""
    m, h, J = I
    w, u = v
    hd = prog.vec(sv.add([m * x for x in u], sv.cross(w, h)))
    M = sv.hat(w) * J
    uh = prog.var(2 * sv.dot(u, h))
    return hd, _symmetric(prog, {(i, k): M[i, k] + M[k, i] - h[i] * u[k] - u[i] * h[k] + (uh if i == k else 0)
                                 for i, k in UPPER})


def _world_inertia(prog, R, r, I):
    """Inertia (m, h, J) of a frame about its origin -> about frame 0's origin in its axes
    (spatial.inertia_to_parent, each symmetric entry computed once)."""
    mass, h, J = I
    hr = prog.vec(sv.matvec(R, h))
    RJ = prog.mat(R * J)
    s = prog.var(2 * sv.dot(hr, r) + mass * sv.dot(r, r))
    upper = {(i, k): sum((RJ[i, a] * R[k, a] for a in range(3)), sp.S.Zero) - hr[i] * r[k] - r[i] * hr[k]
             - mass * r[i] * r[k] + (s if i == k else 0) for i, k in UPPER}
    return (mass, prog.vec(sv.add(hr, [mass * x for x in r])), _symmetric(prog, upper))


def _rate_times(prog, dI, m):
    """(0, h', J') applied to motion m."""
    return _motion(prog, sv.inertia_times((sp.S.Zero, dI[0], dI[1]), m))


def _sum_inertia(prog, a, b):
    return (prog.var(a[0] + b[0]), prog.vec(sv.add(a[1], b[1])), _symmetric(prog, {ik: a[2][ik] + b[2][ik] for ik in UPPER}))


def _combine(terms):
    """sum of motion * scalar."""
    return tuple([sum((m[k][i] * c for m, c in terms), sp.S.Zero) for i in range(3)] for k in range(2))


class _Frame:
    """World-frame quantities of one frame (module docstring)."""
    __slots__ = ("v", "a", "Y", "dY", "F", "H")


def _world_force(prog, R, p, f):
    """A force (moment about the frame's origin, force) in a frame at (R, p) -> in frame 0."""
    fw = prog.vec(sv.matvec(R, f[1]))
    return (prog.vec(sv.add(sv.matvec(R, f[0]), sv.cross(p, fw))), fw)


def _forward(kin, ddq, fext=None, fext0=None):
    """Per frame: v, a (with gravity), and the link's I, dI, f, h in frame 0; f minus the
    external force (`fext`: frame key -> force in that frame) moved to frame 0, and minus
    `fext0` (frame key -> force already in frame 0, about its origin)."""
    prog, syms, model = kin.prog, kin.syms, kin.model
    fext, fext0 = fext or {}, fext0 or {}
    poses = kin.base_frame_poses()
    a0 = (ZERO, [-x for x in kin.gravity()])
    out, cols = {}, {}
    base = [f for f in model.frames if f.base]
    if base:  # the free-flyer: one joint of six unit twists, parent the world
        vb = _motion(prog, _combine([(kin.joint_motion(f), syms.dq[f.index]) for f in base]))
        ab = _motion(prog, _combine([(a0, 1)] + [(kin.joint_motion(f), ddq[f.index]) for f in base]))
    for f in model.frames:
        st = _Frame()
        R, p = poses[f.key]
        if f.base:
            J = kin.joint_motion(f)
            zero = (ZERO, ZERO)
            dVdq = zero
            cols[f.index] = (J, dVdq, _motion(prog, sv.motion_cross(a0, J)), _motion(prog, sv.motion_cross(vb, J)))
            st.v, st.a = vb, ab
        else:
            par = out[f.parent] if f.parent != "0" else None
            vp = par.v if par else (ZERO, ZERO)
            ap = par.a if par else a0
            st.v, st.a = vp, ap
            if f.moving:
                S = kin.joint_motion(f)
                e = S[0] if f.angular else S[1]
                Re = prog.vec(sv.matvec(R, e))
                J = (Re, prog.vec(sv.cross(p, Re))) if f.angular else (ZERO, Re)
                j, qd = f.index, syms.dq[f.index]
                dVdq = _motion(prog, sv.motion_cross(vp, J))
                dAdq = _motion(prog, [sv.add(x, y) for x, y in zip(sv.motion_cross(ap, J), sv.motion_cross(vp, dVdq))])
                # v_j x J_j = v_p x J_j: dAdv = 2 dVdq
                dAdv = _motion(prog, ([2 * x for x in dVdq[0]], [2 * x for x in dVdq[1]]))
                cols[j] = (J, dVdq, dAdq, dAdv)
                st.v = _motion(prog, (sv.add(vp[0], [x * qd for x in J[0]]), sv.add(vp[1], [x * qd for x in J[1]])))
                st.a = _motion(prog, (sv.add(ap[0], [x * ddq[j] + y * qd for x, y in zip(J[0], dVdq[0])]),
                                      sv.add(ap[1], [x * ddq[j] + y * qd for x, y in zip(J[1], dVdq[1])])))
        I = _world_inertia(prog, R, p, syms.inertia(f))
        st.Y = I
        st.dY = _inertia_rate(prog, I, st.v)
        st.H = _motion(prog, sv.inertia_times(I, st.v))
        Ia = sv.inertia_times(I, st.a)
        c = force_cross(st.v, st.H)
        if f.key in fext or f.key in fext0:
            # fixed in the body, the force moves with it: its derivative is in the subtree sums
            # F (the r < j terms), as Pinocchio's computeRNEADerivatives with fext
            e = _world_force(prog, R, p, fext[f.key]) if f.key in fext else (ZERO, ZERO)
            if f.key in fext0:
                e = tuple(sv.add(x, y) for x, y in zip(e, fext0[f.key]))
            st.F = _motion(prog, ([x + y - z for x, y, z in zip(Ia[0], c[0], e[0])],
                                  [x + y - z for x, y, z in zip(Ia[1], c[1], e[1])]))
        else:
            st.F = _motion(prog, (sv.add(Ia[0], c[0]), sv.add(Ia[1], c[1])))
        out[f.key] = st
    return out, cols


def _backward(kin, frames):
    """Subtree sums of I, dI, f, h (children after parents: one reverse sweep)."""
    prog = kin.prog
    for f in reversed(kin.model.frames):
        if f.parent == "0":
            continue
        c, p = frames[f.key], frames[f.parent]
        p.Y = _sum_inertia(prog, p.Y, c.Y)
        p.dY = (prog.vec(sv.add(p.dY[0], c.dY[0])), _symmetric(prog, {ik: p.dY[1][ik] + c.dY[1][ik] for ik in UPPER}))
        p.F = _add(prog, p.F, c.F)
        p.H = _add(prog, p.H, c.H)


def _support(model):
    """Moving ancestors-or-self of each joint (the free-flyer's six support each other)."""
    lam = fd.parents(model)
    sup = []
    for f in model.joints:
        s, i = [], f.index
        while i >= 0:
            s.append(i)
            i = lam[i]
        if f.base:
            s = [b.index for b in model.joints if b.base]
        sup.append(set(s))
    return sup


@dataclass(frozen=True)
class PairForm:
    """dtau_dq and dtau_dv of a tree as dot products of per-joint 6-vectors
    over pairs of joints (module docstring), for emission as compact loops:

        dq[r, j] = alpha_r . dA_j + beta_r . dV_j,  dv[r, j] = alpha_r . dAv_j + beta_r . J_j    (r, j) in support
        dq[r, j] = J_r . G_j,                       dv[r, j] = J_r . Gv_j                       (r, j) in subtree
        dv[r, r] += friction[r]

    (dAv_j = dAdv_j: 2 dV_j but for a free-flyer's base columns.) `vectors[k]` holds joint k's
    VECTORS, 6 entries each (program variables; G, Gv zero where no strict
    ancestor reads them); `support`: the pairs (r, j) with j an ancestor-or-self
    of r, `subtree`: r a strict ancestor of j; every other entry is a
    structural zero."""
    vectors: list
    support: list
    subtree: list
    friction: list

    VECTORS = ("J", "dV", "dA", "dAv", "alpha", "beta", "G", "Gv")

    def matrices(self, prog):
        """The dense (dq, dv), NV x NV, as program variables."""
        n = len(self.vectors)
        v = [dict(zip(self.VECTORS, (tuple(x[6 * k:6 * k + 6]) for k in range(len(self.VECTORS))))) for x in self.vectors]
        dot = lambda a, b: sum((x * y for x, y in zip(a, b)), sp.S.Zero)  # noqa: E731
        dq, dv = sp.zeros(n, n), sp.zeros(n, n)
        for r, j in self.support:
            R, C = v[r], v[j]
            dq[r, j] = dot(R["alpha"], C["dA"]) + dot(R["beta"], C["dV"])
            dv[r, j] = dot(R["alpha"], C["dAv"]) + dot(R["beta"], C["J"])
        for r, j in self.subtree:
            dq[r, j], dv[r, j] = dot(v[r]["J"], v[j]["G"]), dot(v[r]["J"], v[j]["Gv"])
        for r in range(n):
            dv[r, r] += self.friction[r]
        return dq.applyfunc(prog.var), dv.applyfunc(prog.var)


def pair_form(kin, ddq, friction, fext=None) -> PairForm:
    """The PairForm of tau = ID(q, v, ddq) + friction(v) (- sum J_k^T fext_k)."""
    return pair_form_of(kin, *forward_pass(kin, ddq, fext), friction)


def forward_pass(kin, ddq, fext=None, fext0=None):
    """(frames, cols): per frame key its v, a (gravity included), subtree sums Y, dY, F, H;
    per joint index (J, dVdq, dAdq, dAdv), all in frame 0 (module docstring); `fext0` as
    _forward's (bodies' forces already in frame 0, fixed in their bodies)."""
    frames, cols = _forward(kin, ddq, fext, fext0)
    _backward(kin, frames)
    return frames, cols


def pair_form_of(kin, frames, cols, friction) -> PairForm:
    """The PairForm from forward_pass's (frames, cols)."""
    prog, model, syms = kin.prog, kin.model, kin.syms
    n = model.ndof
    joints = {f.index: f for f in model.joints}
    sup = _support(model)
    zero = (ZERO, ZERO)
    vectors = []
    for r in range(n):
        st = frames[joints[r].key]
        J, dVdq, dAdq, dAdv = cols[r]
        alpha = _motion(prog, sv.inertia_times(st.Y, J))
        n_, f_ = st.H
        gamma = (sv.add(sv.cross(n_, J[0]), sv.cross(f_, J[1])), sv.cross(f_, J[0]))
        dYJ = sv.inertia_times((0, st.dY[0], st.dY[1]), J)
        beta = _motion(prog, (sv.add(dYJ[0], gamma[0]), sv.add(dYJ[1], gamma[1])))
        G = Gv = zero
        if any(r not in sup[i] for i in sup[r]):  # a strict ancestor's row reads G_r
            G = _motion(prog, _combine([(force_cross(J, st.F), 1), (sv.inertia_times(st.Y, dAdq), 1),
                                        (_rate_times(prog, st.dY, dVdq), 1), (force_cross(dVdq, st.H), 1)]))
            Gv = _motion(prog, _combine([(sv.inertia_times(st.Y, dAdv), 1), (_rate_times(prog, st.dY, J), 1),
                                         (force_cross(J, st.H), 1)]))
        vectors.append([x for m in (J, dVdq, dAdq, dAdv, alpha, beta, G, Gv) for x in (*m[0], *m[1])])
    fr = [prog.var(sp.diff(friction[r], syms.dq[r]).replace(sp.DiracDelta, lambda *a: sp.S.Zero))
          for r in range(n)]
    support = [(r, j) for r in range(n) for j in range(n) if j in sup[r]]
    subtree = [(r, j) for r in range(n) for j in range(n) if j not in sup[r] and r in sup[j]]
    return PairForm(vectors, support, subtree, fr)


def inverse_dynamics_derivatives(kin, friction, fext=None):
    """(dtau_dq, dtau_dv) of inverse_dynamics (NV x NV), straight-line."""
    return pair_form(kin, list(kin.syms.ddq), friction, fext).matrices(kin.prog)


def forward_dynamics_derivatives(kin, A, ddq, friction, fext=None):
    """(PairForm, Minv): the inverse dynamics' derivatives at the forward
    dynamics' ddq (its program variables, from A and the same L^T D L) and
    A^-1; dddq_dq = -Minv dq, dddq_dv = -Minv dv are left to emission (a
    dense product: compact loops, codegen/emit/pair_loops.py)."""
    prog, model = kin.prog, kin.model
    form = pair_form(kin, list(ddq), friction, fext)
    lam = fd.parents(model)
    L, Dinv = fd.ltdl(prog, A, lam)  # the statements of forward_dynamics (the Program stores each once)
    return form, fd.inverse(prog, L, Dinv, lam)

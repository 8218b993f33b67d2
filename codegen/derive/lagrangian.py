"""The Krang report's energy method, literally (Zafar 2015, sections 1.2, 2 and 3).

Velocities by eq. 7-8, kinetic energy eq. 11, potential energy eq. 15,
A as the Hessian of E in dq, C from the Christoffel symbols eq. 4,
Q = dU/dq eq. 5, Jacobians [e_j x L_jn; e_j]. Expressions grow with the
depth of the tree, so this is the reference for small models, not the
path to C.
"""
from __future__ import annotations

import sympy as sp

from . import spatial as sv
from .friction import friction
from .symbols import Symbols


def _transform(syms, f):
    """parentR_frame(q) and parentP_frame(q) as functions of q (sin/cos)."""
    origin = sp.Matrix(syms.origin(f))
    if f.type == "revolute":
        q = syms.q[f.index]
        return f.rotation * sv.axis_rotation(f.axis, sp.cos(q), sp.sin(q)), origin
    if f.type == "prismatic":
        q = syms.q[f.index]
        return f.rotation, origin + f.rotation * sp.Matrix(f.axis) * q
    return f.rotation, origin


def derive(model) -> dict:
    if model.floating_base:
        raise ValueError("the energy method is for fixed-base models (a free-flyer's velocities are "
                         "quasi-velocities, not time derivatives of q)")
    syms = Symbols(model)
    n = model.ndof
    zero = sp.zeros(3, 1)
    w, v, world = {"0": zero}, {"0": zero}, {"0": (sp.eye(3), zero)}
    E, U = sp.S.Zero, sp.S.Zero
    g0 = sp.Matrix(syms.gravity())
    for f in model.frames:
        R, P = _transform(syms, f)
        wi, vi = w[f.parent], v[f.parent]
        wj = R.T * wi
        vj = R.T * (vi + wi.cross(P))  # eq. 8, plus the prismatic term below
        if f.moving:
            e = sp.Matrix(f.axis) * syms.dq[f.index]
            if f.type == "revolute":
                wj = wj + e  # eq. 7
            else:
                vj = vj + e
        w[f.key], v[f.key] = wj, vj
        R0, P0 = world[f.parent]
        world[f.key] = (R0 * R, P0 + R0 * P)
        m, MS, J = syms.inertia(f)
        MS = sp.Matrix(MS)
        E += (wj.T * J * wj + m * vj.T * vj + 2 * MS.T * vj.cross(wj))[0] / 2  # eq. 11
        U += -(g0.T * (m * world[f.key][1] + world[f.key][0] * MS))[0]  # eq. 15
        if f.moving:
            E += syms.p(f"Ia_{f.key}") * syms.dq[f.index] ** 2 / 2  # eq. 18
    q, dq = syms.q, syms.dq
    A = sp.Matrix(n, n, lambda i, j: sp.expand(sp.diff(E, dq[i], dq[j])))
    dA = [A.diff(qk) for qk in q]
    C = sp.Matrix(  # eq. 4
        n, n, lambda i, j: sum(((dA[k][i, j] + dA[j][i, k] - dA[i][j, k]) / 2 * dq[k] for k in range(n)), sp.S.Zero)
    )
    Q = sp.Matrix([sp.diff(U, qi) for qi in q])
    out = {"A": A, "C": C, "Q": Q, "U": U, "symbols": syms}
    for ee in model.end_effectors:
        name = ee.name
        Rn, pn = world[ee.frame]
        pn = pn + Rn * sp.Matrix(ee.origin)
        Rn = Rn * ee.rotation
        J = sp.zeros(6, n)
        for f in model.chain(ee.frame):
            if not f.moving:
                continue
            R0, p0 = world[f.key]
            e = R0 * sp.Matrix(f.axis)
            if f.type == "revolute":
                J[:3, f.index], J[3:, f.index] = e.cross(pn - p0), e
            else:
                J[:3, f.index] = e
        out[f"J_{name}_world"] = J
        out[f"J_{name}_local"] = sp.diag(Rn.T, Rn.T) * J
    out["friction"] = friction(syms)
    return out

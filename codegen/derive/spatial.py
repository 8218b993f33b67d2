"""Spatial (6D) algebra on symbolic 3-vectors, Featherstone's [omega; v] order.

Motion vectors m = (w, v), force vectors f = (n, f); a rigid-body inertia is
(mass, h = MS, J about the frame origin) as in Khalil-Dombre (Zafar 2015, eq. 11):
    I = [[J, hat(h)], [hat(h)^T, m 1]].
Frames: `R` = parentR_child, `r` = parentP_child (child origin in the parent).
"""
from __future__ import annotations

import sympy as sp


def hat(v):
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return sum((x * y for x, y in zip(a, b)), sp.S.Zero)


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def matvec(R, v):
    return [sum((R[i, k] * v[k] for k in range(3)), sp.S.Zero) for i in range(3)]


def rotate_to_child(R, v):
    """childR_parent * v."""
    return matvec(R.T, v)


def axis_rotation(axis, c, s):
    """Rot(axis, q) by Rodrigues, with c = cos q and s = sin q kept as symbols."""
    k = hat(axis)
    return sp.eye(3) + s * k + (1 - c) * k * k


def motion_cross(m, x):
    """m x x for motion vectors m = (w, v), x = (wx, vx)."""
    w, v = m
    xw, xv = x
    return (cross(w, xw), add(cross(w, xv), cross(v, xw)))


def force_to_parent(R, r, f):
    """Express force (n, f) of the child frame in the parent frame."""
    n, f = f
    fp = matvec(R, f)
    return (add(matvec(R, n), cross(r, fp)), fp)


def motion_to_child(R, r, m):
    """Express motion (w, v) given in the parent frame in the child frame (eq. 7-8)."""
    w, v = m
    return (rotate_to_child(R, w), rotate_to_child(R, add(v, cross(w, r))))


def inertia_times(I, m):
    """Spatial inertia (mass, h, J) applied to motion (w, v) -> force."""
    mass, h, J = I
    w, v = m
    return (add(matvec(J, w), cross(h, v)), add([mass * x for x in v], cross(w, h)))


def inertia_to_parent(R, r, I):
    """Inertia (mass, h, J) about the child origin -> about the parent origin,
    in parent coordinates (parallel-axis theorem without dividing by mass)."""
    mass, h, J = I
    hr = matvec(R, h)
    JR = R * J * R.T
    hp = add(hr, [mass * x for x in r])
    s = 2 * dot(hr, r) + mass * dot(r, r)
    out = sp.zeros(3, 3)
    for i in range(3):
        for k in range(3):
            out[i, k] = JR[i, k] - hr[i] * r[k] - r[i] * hr[k] - mass * r[i] * r[k] + (s if i == k else 0)
    return (mass, hp, out)

"""Joints that move nothing: a moving joint whose subtree (the link it moves and every link
that link carries) has no mass, or, for a rotation, no inertia about the joint axis, and
no rotor inertia. Its diagonal entry of the mass matrix A is then zero, so A is singular
and forward dynamics divides by zero (NaN), though every link on its own is physically
valid (codegen/read/physical.py) and A, C, Q and inverse dynamics are still defined.

    singular_joints(model, param_names, values) -> tuple of SingularJoint
    describe(joint) -> str

The test is on A's diagonal at q = 0, from the composite inertia of each subtree: exact for
a subtree without mass (then for every q), and for mass on a joint's axis at q = 0 it is a
configuration where A is singular. A's other singular cases (two coaxial joints in series
through a massless link) are not looked for. A negligible but positive mass or inertia
(a gripper's plate) passes: only rounding of an exact zero is taken for zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import expr  # noqa: F401 - first: expr and expr_value import each other, expr leads
from .expr_value import evaluate
from .physical import INERTIAL

# A joint's diagonal entry of A at or below this fraction of its subtree's scale (the mass,
# or the trace of the inertia about the joint's origin) is rounding of a zero: a point mass
# on a skew axis leaves ~1e-16 of it, any real link many orders of magnitude more.
SINGULAR_TOL = 1e-12


@dataclass(frozen=True)
class SingularJoint:
    """A moving frame whose joint moves no mass (massless) or no inertia about its axis."""
    key: str  # frame key (its parameters' suffix)
    link: str  # the link named in messages: the base body for a free-flyer's frame
    joint: str
    massless: bool  # the subtree has no mass at all (else: all of it on the joint's axis)
    actuated: bool  # the joint could take a rotor inertia Ia_<key> (not a free-flyer's)


def _matrix(rows) -> np.ndarray:
    return np.array([[float(x) for x in row] for row in rows.tolist()], dtype=float)


def singular_joints(model, param_names: Sequence[str], values) -> tuple:
    """The joints of `model` (a codegen.read.records.Model) that make A singular at the
    parameter vector `values` (in `param_names` order), parents first.

    Composite inertias are summed from the leaves, each about its frame's origin in its
    axes (mass m, first moment h, inertia J), moved into the parent by the frame's
    placement at q = 0 (origins evaluated at the geometry values in `values`). Frames
    without parameters (a free-flyer's five massless frames) carry nothing. Raises
    ValueError if an origin is not a finite number at these values."""
    index = {n: i for i, n in enumerate(param_names)}
    v = np.asarray(values, dtype=float).reshape(-1)

    def value(name):
        return float(v[index[name]]) if name in index else 0.0

    env = {g: value(g) for g in model.geometry}
    comp = {}
    for f in model.frames:
        m, mx, my, mz, xx, xy, xz, yy, yz, zz = (value(f"{p}_{f.key}") for p in INERTIAL)
        comp[f.key] = [m, np.array([mx, my, mz]), np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])]
    found = []
    for f in reversed(model.frames):  # children before parents: comp[f.key] is complete here
        m, h, J = comp[f.key]
        if f.moving:
            e = np.array([float(a) for a in f.axis])
            e /= np.linalg.norm(e)
            ia = value(f"Ia_{f.key}")
            moved = float(e @ J @ e) if f.angular else m
            scale = float(np.trace(J)) if f.angular else m
            if not ia + moved > SINGULAR_TOL * (ia + scale):
                found.append(SingularJoint(f.key, f.key.split("\x1f")[0], f.joint, m == 0, not f.base))
        if f.parent == "0":
            continue
        try:
            p = np.array([evaluate(o, env) for o in f.origin])
        except ValueError as exc:  # expr_value.check_origins reports it with the expression
            raise ValueError(f"frame {f.key!r}: an origin is {exc} at these parameters") from None
        R = _matrix(f.rotation)
        Rh = R @ h
        # the body's points r = p + R s about the parent's origin (the parallel-axis theorem
        # with a first moment): J' = R J R^T + m (p.p 1 - p p^T) + 2 p.Rh 1 - p Rh^T - Rh p^T
        Jp = (R @ J @ R.T + m * (p @ p * np.eye(3) - np.outer(p, p))
              + 2 * (p @ Rh) * np.eye(3) - np.outer(p, Rh) - np.outer(Rh, p))
        pm, ph, pJ = comp[f.parent]
        comp[f.parent] = [pm + m, ph + m * p + Rh, pJ + Jp]
    return tuple(reversed(found))


def describe(joint: SingularJoint) -> str:
    """One line naming the link and the joint, why A is singular and what would fix it."""
    what = "are massless" if joint.massless else "have no inertia about the joint axis at q = 0 (their mass is on it)"
    fix = "a mass and inertia" + (f", or the joint a rotor inertia Ia_{joint.key}" if joint.actuated else "")
    return (f"link {joint.link!r} (joint {joint.joint!r}): the link and every link it carries {what}, "
            f"so the mass matrix A is singular (forward dynamics would divide by zero); give them {fix}")

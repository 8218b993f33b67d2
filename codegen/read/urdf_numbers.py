"""URDF numbers -> the model's exact values: rotation (from rpy_matrix), axis and
origin, snapped to exact 0 and +-1 within SNAP_TOL and ORIGIN_SNAP_TOL as the
"Snapping" convention of codegen/read/urdf.py says; origins within the model
files' bound on numbers (expr.MAX_MAGNITUDE)."""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .expr import MAX_MAGNITUDE
from .model import ModelError, rotation_matrix, unit_axis

SNAP_TOL = 1e-9
ORIGIN_SNAP_TOL = 1e-12


def rpy_matrix(rpy) -> np.ndarray:
    r, p, y = rpy
    cr, sr, cp, sp_, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp_], [0, 1, 0], [-sp_, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _snap_rotation(R: np.ndarray) -> list:
    near0 = np.abs(R) <= SNAP_TOL
    out = [[0 if near0[i, k] else float(R[i, k]) for k in range(3)] for i in range(3)]
    for i in range(3):
        for k in range(3):
            others = [near0[i, m] for m in range(3) if m != k] + [near0[m, k] for m in range(3) if m != i]
            if abs(abs(R[i, k]) - 1) <= SNAP_TOL and all(others):
                out[i][k] = 1 if R[i, k] > 0 else -1
    return out


def rotation(R: np.ndarray, snap: bool, where: str) -> sp.Matrix:
    exact = [[float(x) for x in row] for row in R]
    if snap:
        try:
            return rotation_matrix(_snap_rotation(R), where)
        except ModelError:  # snapping broke orthonormality: keep the computed values
            pass
    return rotation_matrix(exact, where)


def axis(axis, snap: bool, where: str) -> tuple:
    a = np.asarray(axis, dtype=float)
    n = float(np.linalg.norm(a))
    if not n > 1e-6:
        raise ModelError(f"{where} <axis xyz>: {tuple(axis)} has (near) zero length")
    a = a / n
    vals = [float(x) for x in a]
    if snap:
        k = int(np.argmax(np.abs(a)))
        if all(abs(x) <= SNAP_TOL for i, x in enumerate(a) if i != k):
            vals = [0, 0, 0]
            vals[k] = 1 if a[k] > 0 else -1
        else:
            vals = [0 if abs(x) <= SNAP_TOL else x for x in vals]
    # model.unit_axis normalizes again; iterate to its fixed point so that the
    # TOML written from this axis loads back to the very same numbers
    out = unit_axis(vals, where)
    for _ in range(4):
        again = unit_axis([_plain(x) for x in out], where)
        if again == out:
            break
        out = again
    return out


def _plain(x):
    return int(x) if isinstance(x, sp.Integer) else float(x)


def _number(x: float, snap: bool):
    if snap and abs(x) <= ORIGIN_SNAP_TOL:
        return sp.S.Zero
    if float(x).is_integer():
        return sp.Integer(int(x))
    return sp.Float(float(x), precision=53)


def origin(p, snap: bool, what: str) -> tuple:
    """A placement's origin within the model files' bound on numbers (expr.MAX_MAGNITUDE)."""
    if not np.all(np.abs(p) <= MAX_MAGNITUDE):
        raise ModelError(f"{what}: the origin {tuple(float(x) for x in p)} lies beyond {MAX_MAGNITUDE:g} "
                         f"(the model files' bound on numbers)")
    return tuple(_number(x, snap) for x in p)

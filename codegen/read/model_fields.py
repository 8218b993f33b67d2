"""Checked fields of untrusted model input: names, numbers, rotations, axes and
joint limits. Every fault is one ModelError naming the field. Names are bounded
in length and printable; files are read by codegen/read/files.py.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import sympy as sp

from krang_kernels.input_files import MAX_FILE_BYTES  # noqa: F401 - the one cap of model and parameter files

from .expr import ModelError
from .records import Limits

# Geometry names appear in origin expressions: identifiers (codegen/read/expr.py).
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # always used with fullmatch

# Bounds on untrusted input (the counts are in codegen/read/model.py).
MAX_NAME = 64  # characters in any name

# Float rotations and axes must be orthonormal / unit to this tolerance.
ORTHO_TOL = 1e-9


def show(name) -> str:
    """A name for an error message: repr (one line), not too long."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def check_length(name: str, what: str) -> str:
    if len(name) > MAX_NAME:
        raise ModelError(f"{what} {show(name)} is longer than {MAX_NAME} characters")
    return name


def check_identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise ModelError(f"{what} {show(name)} is not an identifier (letters, digits, _)")
    return check_length(name, what)


def check_name(name, what: str) -> str:
    """Joint names, frame keys and end-effector names are data (URDF names are
    arbitrary): any printable string without surrounding whitespace, bounded.
    Turning them into safe, distinct C identifiers is the emitter's job."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"{what} {show(name)} must be a non-empty string")
    check_length(name, what)
    if not name.isprintable():
        raise ModelError(f"{what} {show(name)} contains control or non-printable characters")
    if name != name.strip():
        raise ModelError(f"{what} {show(name)} has leading or trailing whitespace")
    return name


def finite(v) -> bool:
    """A TOML int or float that is a finite double (huge ints are not)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def number(v, what):
    """A TOML number as an exact SymPy number: integers (and integral floats)
    exactly, other floats as the exact double (53-bit Float), so that zeros
    and +-1 fold away in the derivation and the C gets the value as written."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ModelError(f"{what} must hold numbers, got {v!r}")
    if not finite(v) or abs(v) > 1e15:
        raise ModelError(f"{what}: {v!r} is not a finite number of magnitude <= 1e15")
    if float(v).is_integer():
        return sp.Integer(int(v))
    return sp.Float(v, precision=53)


def vector(value, what, length=3):
    if not isinstance(value, list) or len(value) != length:
        raise ModelError(f"{what} must be a list of {length} numbers, got {value!r}")
    return [number(v, what) for v in value]


def rotation_matrix(rows, where) -> sp.Matrix:
    """A proper rotation from 3 rows of numbers: exact when all entries are
    integers, else orthonormal to ORTHO_TOL (the error names the worst entry)."""
    if not isinstance(rows, list) or len(rows) != 3:
        raise ModelError(f"{where}: rotation must be 3 rows of 3 numbers")
    rot = sp.Matrix([vector(r, f"{where}: rotation row") for r in rows])
    if all(x.is_Integer for x in rot):
        if rot.T * rot != sp.eye(3) or rot.det() != 1:
            raise ModelError(f"{where}: rotation is not a proper rotation matrix (R^T R = I, det R = 1)")
        return rot
    R = [[float(x) for x in row] for row in rot.tolist()]
    worst, at = 0.0, (0, 0)
    for i in range(3):
        for k in range(3):
            dev = abs(sum(R[m][i] * R[m][k] for m in range(3)) - (i == k))
            if dev > worst:
                worst, at = dev, (i, k)
    if worst > ORTHO_TOL:
        raise ModelError(f"{where}: rotation is not orthonormal: (R^T R)[{at[0]}][{at[1]}] is off by "
                         f"{worst:.3g} (tolerance {ORTHO_TOL:g})")
    if float(rot.det()) < 0:
        raise ModelError(f"{where}: rotation has det -1 (a reflection, not a rotation)")
    return rot


def unit_axis(value, where) -> tuple:
    """A joint axis: exact when it is a signed unit coordinate axis, else normalized."""
    axis = vector(value, f"{where}: axis")
    norm2 = sum(a * a for a in axis)
    if norm2 == 1:
        return tuple(axis)
    n = math.sqrt(float(norm2))
    if not n > 1e-6:
        raise ModelError(f"{where}: axis {value} has (near) zero length")
    # exact zeros stay Integer zeros: they fold away in the derivation
    return tuple(sp.S.Zero if a == 0 else sp.Float(float(a) / n, precision=53) for a in axis)


def limits_table(raw, where):
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"lower", "upper", "velocity", "effort"}:
        raise ModelError(f"{where}: limits must be a table with lower, upper, velocity, effort")
    vals = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not finite(v):
            raise ModelError(f"{where}: limits.{k} = {show(v)} is not a finite number")
        vals[k] = float(v)
    lim = Limits(**vals)
    if lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
        raise ModelError(f"{where}: limits.lower {lim.lower} > limits.upper {lim.upper}")
    return lim


def check_unique(names, what: str):
    """Two quantities sharing a name would share a symbol, a C local and an entry
    of p: refused, never merged (ModelError naming the first repeated name)."""
    dupes = [n for n, k in Counter(names).items() if k > 1]
    if dupes:
        raise ModelError(f"{what} names must be unique: {dupes[0]!r} occurs more than once")

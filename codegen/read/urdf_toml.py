"""A Model and its parameter values as the TOML files codegen.read.model reads.

Numbers are written so that they load back unchanged: exact integers as
TOML integers, every other number as the shortest decimal that round-trips
to the same double (Python's repr); frame origins as strings of those
(origins are expressions in model files). Names are TOML basic
strings escaped by tomli_w (keys too), so any printable name survives.

An origin entry below the expression language's smallest literal (MIN_MAGNITUDE,
1e-12: a URDF read with snap=False keeps rounding residues such as 6e-17) is
written as an exact power-of-two scaling of a literal within it, "y / 549755813888"
(2**39) repeated, which the model reader evaluates to the very same double
(dividing by a power of two is exact in binary floating point).
"""
from __future__ import annotations

import re

import sympy as sp
import tomli_w

from .expr import MIN_MAGNITUDE
from .singular import singular_joints

_POW2 = 2 ** 39  # a literal within the language's bound (5.5e11)


def _num(x):
    x = sp.sympify(x)
    if x.is_Integer:
        return int(x)
    if x.is_Number:
        return float(x)
    raise ValueError(f"not a number: {x!r}")  # URDF models have no geometry symbols


def _origin(x) -> str:
    """An origin entry as an expression string that loads back to the same number."""
    v = _num(x)
    if isinstance(v, int) or abs(v) >= MIN_MAGNITUDE:
        return str(v)
    y, k = v, 0
    while abs(y) < MIN_MAGNITUDE:
        y, k = y * _POW2, k + 1
    return repr(y) + f" / {_POW2}" * k


def _matrix(R):
    return [[_num(R[i, k]) for k in range(3)] for i in range(3)]


def _str(s: str) -> str:
    """A TOML basic string, escaped by tomli_w."""
    return tomli_w.dumps({"s": s})[len("s = "):].rstrip("\n")


def _val(v) -> str:
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_val(x) for x in v) + "]"
    return repr(v)  # int, or float: repr round-trips the double (TOML float syntax)


def _table(header: str, fields: dict) -> str:
    return header + "".join(f"{_key(k)} = {_val(v)}\n" for k, v in fields.items())


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k, flags=re.ASCII) else _str(k)


def model_toml(model, source_sha256: str) -> str:
    parts = ["# Robot model derived from a URDF by codegen.read.urdf "
             f"(URDF sha256 {source_sha256}).\n"
             "# Frame convention: parentT_frame(q) = [rotation * Rot(axis, q), origin]\n"
             "# (revolute) or [rotation, origin + rotation * axis * q] (prismatic).\n",
             _table("", {"name": model.name, "gravity": [_num(g) for g in model.gravity]})]
    for f in model.frames:
        if f.massless:  # a free-flyer is written once, as its base body's floating frame
            continue
        if f.base:
            parts.append(_table("\n[[frame]]\n", {
                "key": f.key, "parent": "0", "joint": f.joint.rsplit(":", 1)[0], "type": "floating",
                "rotation": _matrix(f.rotation), "origin": ["0", "0", "0"]}))
            continue
        t = {"key": f.key, "parent": f.parent}
        if f.moving:
            t["joint"] = f.joint
        t["type"] = f.type
        if f.moving:
            t["axis"] = [_num(a) for a in f.axis]
        t["rotation"] = _matrix(f.rotation)
        # strings, as origin expressions are written by hand (models/krang.toml);
        # the loader reads a decimal string as the exact decimal, i.e. the same double
        t["origin"] = [_origin(o) for o in f.origin]
        if f.limits is not None:
            t["limits"] = {k: float(v) for k in ("lower", "upper", "velocity", "effort")
                           if (v := getattr(f.limits, k)) is not None}
        lim = t.pop("limits", None)
        parts.append(_table("\n[[frame]]\n", t))
        if lim:
            parts.append(_table("[frame.limits]\n", lim))
    for e in model.end_effectors:
        parts.append(_table("\n[[end_effector]]\n", {
            "name": e.name, "frame": e.frame, "rotation": _matrix(e.rotation),
            "origin": [_num(o) for o in e.origin]}))
    for c in model.contacts:
        parts.append(_table("\n[[contact]]\n", {
            "name": c.name, "frame": c.frame, "type": c.kind, "rotation": _matrix(c.rotation),
            "origin": [_num(o) for o in c.origin]}))
    return "".join(parts)


def params_toml(model, values) -> str:
    header = ("# Default parameters from the URDF: inertials lumped per moving body\n"
              "# (m, first moments MX..MZ, inertia XX..ZZ about the frame origin),\n"
              "# Fv/Fc from <dynamics damping friction>, rotor inertia Ia = 0.\n\n")
    singular = [j.key for j in singular_joints(model, model.param_names, values)]
    if singular:  # the URDF reader warns and reads them; a parameter file must say so to be read
        header += ("# Joints (frame keys) that move no mass or inertia in the URDF: the mass matrix A\n"
                   "# is singular there and forward dynamics undefined (codegen/read/singular.py).\n"
                   + _table("", {"accept_singular": singular}) + "\n")
    return header + _table("[values]\n", {n: float(v) for n, v in zip(model.param_names, values)})

"""Load and validate a robot model file (TOML): the frame tree as data.

A model file describes a tree of frames (Khalil-Dombre style, as in the Krang
report, seed 003 sections 2.1-2.2 and 5.1). Each frame is a link carried by
one joint: revolute, prismatic or fixed. Nothing here knows about C.

A model file is untrusted data: it is read with a size cap (never more than
MAX_FILE_BYTES + 1 bytes, regular files only, so /dev/zero or a FIFO cannot
hang the loader), every count and name length is bounded (the MAX_* constants
below), origin expressions go through the safe expression language of
codegen/expr.py (never eval), and every fault is one ModelError naming the
field and the limit.
"""
from __future__ import annotations

import hashlib
import keyword
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+; tomli is the same parser, for 3.10
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

import sympy as sp

from .expr import RESERVED_NAMES, ModelError, from_number, parse_expression
from .physical import check_params

JOINT_TYPES = ("revolute", "prismatic", "fixed")
# Khalil-Dombre standard inertial parameters: first moments MS = m*S and the
# inertia J about the frame origin (seed 003 eq. 11, appendix A).
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")
# Rotor inertia (eq. 18), viscous and Coulomb friction (eq. 17).
ACTUATOR = ("Ia", "Fv", "Fc")
# Geometry names appear in origin expressions: identifiers (codegen/expr.py).
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # always used with fullmatch
# The model name is the C prefix and the file name: a letter first, so the
# prefix never starts with the reserved "_" (C99 7.1.3).
_MODEL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Geometry names that would read as one of the per-frame parameter names.
_PARAM_LIKE = re.compile(r"(m|MX|MY|MZ|XX|XY|XZ|YY|YZ|ZZ|Ia|Fv|Fc)_.*", re.S)

# Bounds on untrusted input. MAX_DOF: 128 joints is beyond any robot in
# example-robot-data (Talos, 32 DOF fixed base); the derivation's time and
# memory grow steeply with the DOF, so a larger model is refused up front
# rather than running for hours.
MAX_FILE_BYTES = 1 << 20  # model and parameter files (1 MiB)
MAX_NAME = 64  # characters in any name
MAX_FRAMES = 512  # [[frame]] tables, fixed ones included
MAX_DOF = 128  # moving joints
MAX_GEOMETRY = 256  # geometry parameters
MAX_END_EFFECTORS = 64  # [[end_effector]] tables


# Float rotations and axes must be orthonormal / unit to this tolerance.
ORTHO_TOL = 1e-9


def _show(name) -> str:
    """A name for an error message: repr (one line), not too long."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_length(name: str, what: str) -> str:
    if len(name) > MAX_NAME:
        raise ModelError(f"{what} {_show(name)} is longer than {MAX_NAME} characters")
    return name


def check_identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise ModelError(f"{what} {_show(name)} is not an identifier (letters, digits, _)")
    return _check_length(name, what)


def check_name(name, what: str) -> str:
    """Joint names, frame keys and end-effector names are data (URDF names are
    arbitrary): any printable string without surrounding whitespace, bounded.
    Turning them into safe, distinct C identifiers is the emitter's job."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"{what} {_show(name)} must be a non-empty string")
    _check_length(name, what)
    if not name.isprintable():
        raise ModelError(f"{what} {_show(name)} contains control or non-printable characters")
    if name != name.strip():
        raise ModelError(f"{what} {_show(name)} has leading or trailing whitespace")
    return name


@dataclass(frozen=True)
class Limits:
    """Joint limits (URDF <limit>), metadata only: the kernels never clamp."""
    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None


@dataclass(frozen=True)
class Frame:
    key: str
    parent: str
    joint: str | None  # generalized coordinate name; None for a fixed frame
    type: str
    axis: tuple  # unit joint axis e in this frame (exact Integers where 0/+-1, else 53-bit Floats)
    rotation: sp.Matrix  # parentR_frame at q = 0 (same number rule as axis)
    origin: tuple  # parentP_frame, sympy expressions in the geometry symbols
    index: int  # position in q, -1 for a fixed frame
    limits: Limits | None = None

    @property
    def moving(self) -> bool:
        return self.type != "fixed"

    def param_names(self) -> tuple:
        names = INERTIAL + (ACTUATOR if self.moving else ())
        return tuple(f"{n}_{self.key}" for n in names)


@dataclass(frozen=True)
class EndEffector:
    """An operational frame: rigidly attached to frame `frame` with the
    constant placement (rotation frameR_ee, origin frameP_ee). It carries no
    parameters; its Jacobian is that of its origin."""
    name: str
    frame: str
    rotation: sp.ImmutableMatrix = sp.ImmutableMatrix.eye(3)
    origin: tuple = (sp.S.Zero, sp.S.Zero, sp.S.Zero)

    @property
    def offset(self) -> bool:
        return self.rotation != sp.eye(3) or any(o != 0 for o in self.origin)


@dataclass(frozen=True)
class Model:
    name: str
    frames: tuple  # parents before children
    geometry: tuple
    gravity: tuple
    end_effectors: tuple  # EndEffector records, in ee index order
    sha256: str

    @property
    def joints(self) -> tuple:
        return tuple(f for f in self.frames if f.moving)

    @property
    def joint_names(self) -> tuple:
        return tuple(f.joint for f in self.joints)

    @property
    def ndof(self) -> int:
        return len(self.joints)

    @property
    def param_names(self) -> tuple:
        names = list(self.geometry) + ["g"]
        for f in self.frames:
            names += f.param_names()
        return tuple(names)

    def frame(self, key: str) -> Frame:
        for f in self.frames:
            if f.key == key:
                return f
        raise KeyError(key)

    @property
    def ee_names(self) -> tuple:
        return tuple(e.name for e in self.end_effectors)

    def end_effector(self, name: str) -> EndEffector:
        for e in self.end_effectors:
            if e.name == name:
                return e
        raise KeyError(name)

    def chain(self, key: str) -> list:
        """Frames from the root to `key` (inclusive)."""
        out = []
        while key != "0":
            f = self.frame(key)
            out.append(f)
            key = f.parent
        return out[::-1]


def _finite(v) -> bool:
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
    if not _finite(v) or abs(v) > 1e15:
        raise ModelError(f"{what}: {v!r} is not a finite number of magnitude <= 1e15")
    if float(v).is_integer():
        return sp.Integer(int(v))
    return sp.Float(v, precision=53)


def _vector(value, what, length=3):
    if not isinstance(value, list) or len(value) != length:
        raise ModelError(f"{what} must be a list of {length} numbers, got {value!r}")
    return [number(v, what) for v in value]


def rotation_matrix(rows, where) -> sp.Matrix:
    """A proper rotation from 3 rows of numbers: exact when all entries are
    integers, else orthonormal to ORTHO_TOL (the error names the worst entry)."""
    if not isinstance(rows, list) or len(rows) != 3:
        raise ModelError(f"{where}: rotation must be 3 rows of 3 numbers")
    rot = sp.Matrix([_vector(r, f"{where}: rotation row") for r in rows])
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
    axis = _vector(value, f"{where}: axis")
    norm2 = sum(a * a for a in axis)
    if norm2 == 1:
        return tuple(axis)
    n = math.sqrt(float(norm2))
    if not n > 1e-6:
        raise ModelError(f"{where}: axis {value} has (near) zero length")
    # exact zeros stay Integer zeros: they fold away in the derivation
    return tuple(sp.S.Zero if a == 0 else sp.Float(float(a) / n, precision=53) for a in axis)


def _limits(raw, where):
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"lower", "upper", "velocity", "effort"}:
        raise ModelError(f"{where}: limits must be a table with lower, upper, velocity, effort")
    vals = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
            raise ModelError(f"{where}: limits.{k} = {_show(v)} is not a finite number")
        vals[k] = float(v)
    lim = Limits(**vals)
    if lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
        raise ModelError(f"{where}: limits.lower {lim.lower} > limits.upper {lim.upper}")
    return lim


def _expression(value, symbols, what):
    """An origin entry: a TOML number, or a string of codegen/expr.py's grammar."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return from_number(value, what)
    if not isinstance(value, str):
        raise ModelError(f"{what}: expected an expression string, got {_show(value)}")
    return parse_expression(value, symbols, what)


def _geometry(raw, source) -> tuple:
    if not isinstance(raw, list):
        raise ModelError(f"{source}: geometry must be a list of names")
    if len(raw) > MAX_GEOMETRY:
        raise ModelError(f"{source}: {len(raw)} geometry parameters (the limit is {MAX_GEOMETRY})")
    for g in raw:
        check_identifier(g, "geometry parameter")
        if keyword.iskeyword(g) or g in RESERVED_NAMES or g == "g":
            raise ModelError(f"geometry parameter {g!r} is reserved in expressions "
                             f"(Python keywords, g, {', '.join(sorted(RESERVED_NAMES))})")
        if _PARAM_LIKE.fullmatch(g):
            raise ModelError(f"geometry parameter {g!r} would clash with the per-frame parameter "
                             f"names (<m|MX|...|Fc>_<frame key>)")
    if len(set(raw)) != len(raw):
        raise ModelError("geometry names must be unique and must not be 'g'")
    return tuple(raw)


def _frame(raw, index, geometry_symbols, where):
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: a frame must be a table")
    allowed = {"key", "parent", "joint", "type", "axis", "rotation", "origin", "limits"}
    extra = set(raw) - allowed
    if extra:
        raise ModelError(f"{where}: unknown field(s) {sorted(extra)}")
    for field in ("key", "parent", "type", "rotation", "origin"):
        if field not in raw:
            raise ModelError(f"{where}: missing field {field!r}")
    key = check_name(raw["key"], f"{where}: frame key")
    if key == "0":
        raise ModelError(f"{where}: frame key '0' is the base frame's")
    where = f"frame {key!r}"
    if not isinstance(raw["parent"], str):
        raise ModelError(f"{where}: parent {raw['parent']!r} must be a frame key (a string)")
    jtype = raw["type"]
    if jtype not in JOINT_TYPES:
        raise ModelError(f"{where}: type {_show(jtype)} is not one of {JOINT_TYPES}")
    rot = rotation_matrix(raw["rotation"], where)
    origin = raw["origin"]
    if not isinstance(origin, list) or len(origin) != 3:
        raise ModelError(f"{where}: origin must be a list of 3 expressions")
    origin = tuple(_expression(o, geometry_symbols, f"{where}: origin[{i}]") for i, o in enumerate(origin))
    if jtype == "fixed":
        if raw.get("joint") is not None or "axis" in raw or "limits" in raw:
            raise ModelError(f"{where}: a fixed frame has no joint name, no axis and no limits")
        return Frame(key, raw["parent"], None, jtype, (0, 0, 0), rot, origin, -1)
    if "joint" not in raw or "axis" not in raw:
        raise ModelError(f"{where}: a {jtype} frame needs 'joint' and 'axis'")
    joint = check_name(raw["joint"], f"{where}: joint name")
    axis = unit_axis(raw["axis"], where)
    limits = _limits(raw.get("limits"), where)
    return Frame(key, raw["parent"], joint, jtype, axis, rot, origin, index, limits)


def _toml(text: str, source: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"{source}: not valid TOML: {exc}".replace("\n", " ")) from None
    except (RecursionError, MemoryError):  # tomllib recurses on nested arrays/tables
        raise ModelError(f"{source}: not valid TOML: nested too deeply") from None


def parse_model(text: str, source: str = "<model>") -> Model:
    if len(text) > MAX_FILE_BYTES:
        raise ModelError(f"{source}: longer than {MAX_FILE_BYTES} characters")
    raw = _toml(text, source)
    extra = set(raw) - {"name", "geometry", "gravity", "frame", "end_effector"}
    if extra:
        raise ModelError(f"{source}: unknown top-level field(s) {sorted(extra)}")
    name = raw.get("name")
    if not isinstance(name, str) or not _MODEL_NAME.fullmatch(name):
        raise ModelError(f"model name {_show(name)} is not a C identifier starting with a letter")
    _check_length(name, "model name")
    geometry = _geometry(raw.get("geometry", []), source)
    gsyms = {g: sp.Symbol(g, real=True) for g in geometry}
    gravity = _vector(raw.get("gravity", [0, 0, -1]), "gravity")
    if abs(float(sum(x * x for x in gravity)) - 1) > ORTHO_TOL:
        raise ModelError("gravity must be a unit direction (its magnitude is parameter g)")
    gravity = tuple(gravity)
    raw_frames = raw.get("frame")
    if not isinstance(raw_frames, list) or not raw_frames:
        raise ModelError(f"{source}: no [[frame]] tables")
    if len(raw_frames) > MAX_FRAMES:
        raise ModelError(f"{source}: {len(raw_frames)} frames (the limit is {MAX_FRAMES})")
    frames, known, index = [], {"0"}, 0
    for n, rf in enumerate(raw_frames):
        f = _frame(rf, index, gsyms, f"{source}: frame #{n + 1}")
        if f.key in known:
            raise ModelError(f"frame {f.key!r} is defined twice")
        if f.parent not in known:
            raise ModelError(f"frame {f.key!r}: parent {_show(f.parent)} is not defined before it")
        known.add(f.key)
        frames.append(f)
        index += f.moving
        if index > MAX_DOF:
            raise ModelError(f"{source}: more than {MAX_DOF} moving joints (the limit is {MAX_DOF})")
    model = Model(name, tuple(frames), geometry, gravity, (), hashlib.sha256(text.encode()).hexdigest())
    if len(set(model.joint_names)) != model.ndof:
        raise ModelError("joint names must be unique")
    if model.ndof == 0:
        raise ModelError("the model has no moving joint")
    ees = []
    raw_ees = raw.get("end_effector", [])
    if not isinstance(raw_ees, list) or not all(isinstance(e, dict) for e in raw_ees):
        raise ModelError(f"{source}: end_effector must be [[end_effector]] tables")
    if len(raw_ees) > MAX_END_EFFECTORS:
        raise ModelError(f"{source}: {len(raw_ees)} end effectors (the limit is {MAX_END_EFFECTORS})")
    for e in raw_ees:
        extra = set(e) - {"name", "frame", "rotation", "origin"}
        if extra:
            raise ModelError(f"{source}: end effector: unknown field(s) {sorted(extra)}")
        ename = check_name(e.get("name"), "end-effector name")
        if e.get("frame") not in known - {"0"}:
            raise ModelError(f"end effector {ename!r}: unknown frame {_show(e.get('frame'))}")
        where = f"end effector {ename!r}"
        rot = sp.ImmutableMatrix(rotation_matrix(e["rotation"], where)) if "rotation" in e else EndEffector.rotation
        origin = tuple(_vector(e["origin"], f"{where}: origin")) if "origin" in e else EndEffector.origin
        ees.append(EndEffector(ename, e["frame"], rot, origin))
    if len({e.name for e in ees}) != len(ees):
        raise ModelError("end-effector names must be unique")
    names = model.param_names
    if len(set(names)) != len(names):  # a parameter file is a table name -> value
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ModelError(f"parameter name clash: {dup}")
    return Model(name, model.frames, geometry, gravity, tuple(ees), model.sha256)


def read_text(path, what: str, cap: int = MAX_FILE_BYTES) -> str:
    """A regular file's bytes decoded as UTF-8 (no newline translation: the
    model hash is of the file), reading at most cap + 1 bytes. Non-blocking
    open so that a FIFO cannot hang us before we see it is not a file."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ModelError(f"cannot read {what} {path}: {exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"cannot read {what} {path}: not a regular file")
        if st.st_size > cap:
            raise ModelError(f"cannot read {what} {path}: larger than {cap} bytes")
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, cap + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:  # the file grew after fstat
            raise ModelError(f"cannot read {what} {path}: larger than {cap} bytes")
    except OSError as exc:
        raise ModelError(f"cannot read {what} {path}: {exc}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"cannot read {what} {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def load_model(path) -> Model:
    path = Path(path)
    return parse_model(read_text(path, "model file"), path.name)


def load_param_values(path, model: Model) -> list:
    """Values of the parameter vector, in model.param_names order.

    The file is TOML with a [values] table name -> number. Ia/Fv/Fc default
    to 0; every other parameter must be given. The values must be physically
    valid (codegen/physical.py: masses, inertias, rotor inertia, friction).
    """
    path = Path(path)
    raw = _toml(read_text(path, "parameter file"), f"parameter file {path.name}")
    values = raw.get("values")
    if not isinstance(values, dict):
        raise ModelError(f"{path.name}: needs a [values] table")
    names = model.param_names
    unknown = set(values) - set(names)
    if unknown:
        shown = ", ".join(_show(n) for n in sorted(unknown)[:5])
        raise ModelError(f"{path.name}: {len(unknown)} unknown parameter(s): {shown}")
    out = []
    for n in names:
        if n in values:
            v = values[n]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ModelError(f"{path.name}: {n} = {_show(v)} is not a number")
            if not _finite(v):
                raise ModelError(f"{path.name}: {n} = {_show(v)} is not a finite number")
            out.append(float(v))
        elif n.split("_", 1)[0] in ACTUATOR:
            out.append(0.0)
        else:
            raise ModelError(f"{path.name}: missing value for {n}")
    try:
        check_params(names, out)
    except ValueError as exc:
        raise ModelError(f"{path.name}: physically impossible parameters: {exc}") from None
    return out

"""Load and validate a robot model file (TOML): the frame tree as data.

A model file describes a tree of frames (Khalil-Dombre style, as in the Krang
report, seed 003 sections 2.1-2.2 and 5.1). Each frame is a link carried by
one joint: revolute, prismatic or fixed. Nothing here knows about C.
"""
from __future__ import annotations

import hashlib
import keyword
import math
import re
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+; tomli is the same parser, for 3.10
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

import sympy as sp

JOINT_TYPES = ("revolute", "prismatic", "fixed")
# Khalil-Dombre standard inertial parameters: first moments MS = m*S and the
# inertia J about the frame origin (seed 003 eq. 11, appendix A).
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")
# Rotor inertia (eq. 18), viscous and Coulomb friction (eq. 17).
ACTUATOR = ("Ia", "Fv", "Fc")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEY = re.compile(r"^[A-Za-z0-9_]+$")
C_RESERVED = frozenset(
    "auto break case char const continue default do double else enum extern "
    "float for goto if inline int long register restrict return short signed "
    "sizeof static struct switch typedef union unsigned void volatile while "
    "p q dq A C Q J tau_f arm frame ee i sq cq NDOF sincos_q".split()
    # math.h functions and object-like macros the generated code may use
    + "sin cos tan asin acos atan atan2 sinh cosh tanh exp log log10 pow sqrt cbrt fabs "
    "floor ceil fmod copysign hypot NAN INFINITY HUGE_VAL HUGE_VALF HUGE_VALL "
    "math_errhandling MATH_ERRNO MATH_ERREXCEPT".split()
)
# Names the generated C uses for its own locals and macros.
_GENERATED = re.compile(r"^([tx][0-9]+|(M|FP)_[A-Za-z0-9_]*|_.*)$")


# Float rotations and axes must be orthonormal / unit to this tolerance.
ORTHO_TOL = 1e-9


class ModelError(ValueError):
    """A model or parameter file that cannot describe a robot."""


def check_identifier(name: str, what: str) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ModelError(f"{what} {name!r} is not a C identifier")
    if name in C_RESERVED or keyword.iskeyword(name) or _GENERATED.match(name):
        raise ModelError(f"{what} {name!r} is a reserved word in the generated code")
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


def number(v, what):
    """A TOML number as an exact SymPy number: integers (and integral floats)
    exactly, other floats as the exact double (53-bit Float), so that zeros
    and +-1 fold away in the derivation and the C gets the value as written."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ModelError(f"{what} must hold numbers, got {v!r}")
    if not math.isfinite(v) or abs(v) > 1e15:
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
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ModelError(f"{where}: limits.{k} = {v!r} is not a finite number")
        vals[k] = float(v)
    lim = Limits(**vals)
    if lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
        raise ModelError(f"{where}: limits.lower {lim.lower} > limits.upper {lim.upper}")
    return lim


def _expression(text, symbols, what):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        expr = sp.nsimplify(text, rational=True)
    elif not isinstance(text, str):
        raise ModelError(f"{what}: expected an expression string, got {text!r}")
    elif "__" in text or not text.strip():  # sympify evaluates Python: no dunders
        raise ModelError(f"{what}: cannot parse {text!r}")
    else:
        try:
            expr = sp.sympify(text, locals=dict(symbols), rational=True)
        except Exception as exc:  # sympify can raise almost anything on bad text
            raise ModelError(f"{what}: cannot parse {text!r} ({type(exc).__name__})") from None
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.Lambda):
        raise ModelError(f"{what}: cannot parse {text!r} as a scalar expression")
    unknown = {str(s) for s in expr.free_symbols} - set(symbols)
    if unknown:
        raise ModelError(f"{what}: {text!r} uses undeclared geometry {sorted(unknown)}")
    if expr.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.I) or expr.is_extended_real is False:
        raise ModelError(f"{what}: {text!r} is not a finite real expression")
    return expr


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
    key = raw["key"]
    if not isinstance(key, str) or not _KEY.match(key) or key == "0":
        raise ModelError(f"{where}: frame key {key!r} must be letters/digits/_ and not '0'")
    where = f"frame {key!r}"
    if not isinstance(raw["parent"], str):
        raise ModelError(f"{where}: parent {raw['parent']!r} must be a frame key (a string)")
    jtype = raw["type"]
    if jtype not in JOINT_TYPES:
        raise ModelError(f"{where}: type {jtype!r} is not one of {JOINT_TYPES}")
    rot = rotation_matrix(raw["rotation"], where)
    origin = raw["origin"]
    if not isinstance(origin, list) or len(origin) != 3:
        raise ModelError(f"{where}: origin must be a list of 3 expressions")
    origin = tuple(_expression(o, geometry_symbols, f"{where}: origin") for o in origin)
    if jtype == "fixed":
        if raw.get("joint") is not None or "axis" in raw or "limits" in raw:
            raise ModelError(f"{where}: a fixed frame has no joint name, no axis and no limits")
        return Frame(key, raw["parent"], None, jtype, (0, 0, 0), rot, origin, -1)
    if "joint" not in raw or "axis" not in raw:
        raise ModelError(f"{where}: a {jtype} frame needs 'joint' and 'axis'")
    joint = check_identifier(raw["joint"], f"{where}: joint name")
    axis = unit_axis(raw["axis"], where)
    limits = _limits(raw.get("limits"), where)
    return Frame(key, raw["parent"], joint, jtype, axis, rot, origin, index, limits)


def parse_model(text: str, source: str = "<model>") -> Model:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"{source}: not valid TOML: {exc}") from None
    extra = set(raw) - {"name", "geometry", "gravity", "frame", "end_effector"}
    if extra:
        raise ModelError(f"{source}: unknown top-level field(s) {sorted(extra)}")
    name = check_identifier(raw.get("name"), "model name")
    if not isinstance(raw.get("geometry", []), list):
        raise ModelError(f"{source}: geometry must be a list of names")
    geometry = tuple(raw.get("geometry", []))
    for g in geometry:
        check_identifier(g, "geometry parameter")
    if "g" in geometry or len(set(geometry)) != len(geometry):
        raise ModelError("geometry names must be unique and must not be 'g'")
    gsyms = {g: sp.Symbol(g, real=True) for g in geometry}
    gravity = _vector(raw.get("gravity", [0, 0, -1]), "gravity")
    if abs(float(sum(x * x for x in gravity)) - 1) > ORTHO_TOL:
        raise ModelError("gravity must be a unit direction (its magnitude is parameter g)")
    gravity = tuple(gravity)
    raw_frames = raw.get("frame")
    if not isinstance(raw_frames, list) or not raw_frames:
        raise ModelError(f"{source}: no [[frame]] tables")
    frames, known, index = [], {"0"}, 0
    for n, rf in enumerate(raw_frames):
        f = _frame(rf, index, gsyms, f"{source}: frame #{n + 1}")
        if f.key in known:
            raise ModelError(f"frame {f.key!r} is defined twice")
        if f.parent not in known:
            raise ModelError(f"frame {f.key!r}: parent {f.parent!r} is not defined before it")
        known.add(f.key)
        frames.append(f)
        index += f.moving
    model = Model(name, tuple(frames), geometry, gravity, (), hashlib.sha256(text.encode()).hexdigest())
    if len(set(model.joint_names)) != model.ndof:
        raise ModelError("joint names must be unique")
    if model.ndof == 0:
        raise ModelError("the model has no moving joint")
    ees = []
    raw_ees = raw.get("end_effector", [])
    if not isinstance(raw_ees, list) or not all(isinstance(e, dict) for e in raw_ees):
        raise ModelError(f"{source}: end_effector must be [[end_effector]] tables")
    for e in raw_ees:
        extra = set(e) - {"name", "frame", "rotation", "origin"}
        if extra:
            raise ModelError(f"{source}: end effector: unknown field(s) {sorted(extra)}")
        ename = check_identifier(e.get("name"), "end-effector name")
        if e.get("frame") not in known - {"0"}:
            raise ModelError(f"end effector {ename!r}: unknown frame {e.get('frame')!r}")
        where = f"end effector {ename!r}"
        rot = sp.ImmutableMatrix(rotation_matrix(e["rotation"], where)) if "rotation" in e else EndEffector.rotation
        origin = tuple(_vector(e["origin"], f"{where}: origin")) if "origin" in e else EndEffector.origin
        ees.append(EndEffector(ename, e["frame"], rot, origin))
    upper = [e.name.upper() for e in ees]
    if len(set(upper)) != len(ees) or set(upper) & {"WORLD", "LOCAL", "NDOF", "NP", "KERNELS_H"}:
        # each becomes a macro <NAME>_<EE>, next to <NAME>_WORLD etc.
        raise ModelError("end-effector names must be unique (ignoring case) and not world/local/ndof/np")
    names = model.param_names
    for n in names:
        check_identifier(n, "parameter name")
    # every name the generated C declares as a local must be distinct
    locals_ = list(names) + [f"J_{e.name}" for e in ees]
    for j in model.joint_names:
        locals_ += [j, f"s_{j}", f"c_{j}", f"d{j}"]
    seen, clash = set(), set()
    for n in locals_:
        (clash if n in seen else seen).add(n)
    if clash:
        raise ModelError(f"name clash in the generated code (joint, parameter or derived "
                         f"s_/c_/d<joint> names): {sorted(clash)}")
    return Model(name, model.frames, geometry, gravity, tuple(ees), model.sha256)


def load_model(path) -> Model:
    path = Path(path)
    try:  # bytes decoded as UTF-8 (TOML), no newline translation: the hash is of the file
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"cannot read model file {path}: {exc}") from None
    return parse_model(text, path.name)


def load_param_values(path, model: Model) -> list:
    """Values of the parameter vector, in model.param_names order.

    The file is TOML with a [values] table name -> number. Ia/Fv/Fc default
    to 0; every other parameter must be given.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ModelError(f"cannot read parameter file {path}: {exc}") from None
    values = raw.get("values")
    if not isinstance(values, dict):
        raise ModelError(f"{path.name}: needs a [values] table")
    names = model.param_names
    unknown = set(values) - set(names)
    if unknown:
        raise ModelError(f"{path.name}: unknown parameter(s) {sorted(unknown)}")
    out = []
    for n in names:
        if n in values:
            v = values[n]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) == float("inf"):
                raise ModelError(f"{path.name}: {n} = {v!r} is not a finite number")
            out.append(float(v))
        elif n.split("_", 1)[0] in ACTUATOR:
            out.append(0.0)
        else:
            raise ModelError(f"{path.name}: missing value for {n}")
    return out

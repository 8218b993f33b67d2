"""Load and validate a robot model file (TOML): the frame tree as data.

A model file describes a tree of frames (Khalil-Dombre style, as in the Krang
report, Zafar 2015, sections 2.1-2.2 and 5.1; the records are in
codegen/read/records.py). Nothing here knows about C.

A model file is untrusted data: it is read with a size cap, regular files only
(codegen/read/files.py), and its fields are
checked by codegen/read/model_fields.py, every count is bounded (the MAX_*
constants below), origin expressions go through the safe expression language of
codegen/read/expr.py (never eval), and every fault is one ModelError naming the
field and the limit.
"""
from __future__ import annotations

import hashlib
import keyword
import re
from pathlib import Path

import sympy as sp

from .expr import RESERVED_NAMES, ModelError, from_number, parse_expression
from krang_kernels.input_files import param_values, parse_toml

from .files import read_input_text
from .model_fields import (MAX_FILE_BYTES, MAX_NAME, ORTHO_TOL, check_identifier, check_length, check_name,  # noqa: F401
                           finite, limits_table, number, rotation_matrix, show, unit_axis, vector)
from .expr_value import check_origins
from .physical import check_params
from .records import (ACTUATOR, CONTACT_KINDS, INERTIAL, MAX_CONTACTS, JOINT_TYPES, Contact, EndEffector, Frame, Limits, Model,  # noqa: F401
                      check_free_flyer, free_flyer_frames)

# The model name is the C prefix and the file name: a letter first, so the
# prefix never starts with the reserved "_" (C99 7.1.3).
_MODEL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Geometry names that would read as one of the per-frame parameter names.
_PARAM_LIKE = re.compile(r"(m|MX|MY|MZ|XX|XY|XZ|YY|YZ|ZZ|Ia|Fv|Fc)_.*", re.S)

# Bounds on the model file (file size and name length: codegen/read/model_fields.py).
# MAX_DOF: 128 joints is beyond any robot in example-robot-data (Talos, 32 DOF
# fixed base); the derivation's time and memory grow steeply with the DOF, so a
# larger model is refused up front rather than running for hours.
MAX_FRAMES = 512  # [[frame]] tables, fixed ones included
MAX_DOF = 128  # moving joints
MAX_GEOMETRY = 256  # geometry parameters
MAX_END_EFFECTORS = 64  # [[end_effector]] tables


def _expression(value, symbols, what):
    """An origin entry: a TOML number, or a string of codegen/read/expr.py's grammar."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return from_number(value, what)
    if not isinstance(value, str):
        raise ModelError(f"{what}: expected an expression string, got {show(value)}")
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
        raise ModelError(f"{where}: type {show(jtype)} is not one of {JOINT_TYPES}")
    rot = rotation_matrix(raw["rotation"], where)
    origin = raw["origin"]
    if not isinstance(origin, list) or len(origin) != 3:
        raise ModelError(f"{where}: origin must be a list of 3 expressions")
    origin = tuple(_expression(o, geometry_symbols, f"{where}: origin[{i}]") for i, o in enumerate(origin))
    if jtype == "floating":
        # a free-flyer (records.BASE_TYPES): the base pose is q[0:7], so the
        # frame has no placement of its own, no axis and no limits; where it
        # may stand in the tree is records.check_free_flyer's rule
        if "axis" in raw or "limits" in raw or rot != sp.eye(3) or any(o != 0 for o in origin):
            raise ModelError(f"{where}: a floating frame has no axis and no limits, "
                             f"rotation identity and origin zero")
        joint = check_name(raw.get("joint"), f"{where}: joint name")
        return free_flyer_frames(key, joint, index, raw["parent"])
    if jtype == "fixed":
        if raw.get("joint") is not None or "axis" in raw or "limits" in raw:
            raise ModelError(f"{where}: a fixed frame has no joint name, no axis and no limits")
        return Frame(key, raw["parent"], None, jtype, (0, 0, 0), rot, origin, -1)
    if "joint" not in raw or "axis" not in raw:
        raise ModelError(f"{where}: a {jtype} frame needs 'joint' and 'axis'")
    joint = check_name(raw["joint"], f"{where}: joint name")
    axis = unit_axis(raw["axis"], where)
    limits = limits_table(raw.get("limits"), where)
    return Frame(key, raw["parent"], joint, jtype, axis, rot, origin, index, limits)


def _toml(text: str, source: str) -> dict:
    return parse_toml(text, source, ModelError)


def parse_model(text: str, source: str = "<model>") -> Model:
    """The Model record of a model file's TOML `text` (docs/model-files.md); `source` names it in
    errors. Raises ModelError, one message naming the bad entry, for anything invalid or over a
    bound. Nothing in the text is evaluated as code."""
    if len(text) > MAX_FILE_BYTES:
        raise ModelError(f"{source}: longer than {MAX_FILE_BYTES} characters")
    raw = _toml(text, source)
    extra = set(raw) - {"name", "geometry", "gravity", "frame", "end_effector", "contact"}
    if extra:
        raise ModelError(f"{source}: unknown top-level field(s) {sorted(extra)}")
    name = raw.get("name")
    if not isinstance(name, str) or not _MODEL_NAME.fullmatch(name):
        raise ModelError(f"model name {show(name)} is not a C identifier starting with a letter")
    check_length(name, "model name")
    geometry = _geometry(raw.get("geometry", []), source)
    gsyms = {g: sp.Symbol(g, real=True) for g in geometry}
    gravity = vector(raw.get("gravity", [0, 0, -1]), "gravity")
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
        made = _frame(rf, index, gsyms, f"{source}: frame #{n + 1}")
        for f in made if isinstance(made, tuple) else (made,):  # a floating frame is six
            frames.append(f)
            index += f.moving
        if index > MAX_DOF:
            raise ModelError(f"{source}: more than {MAX_DOF} moving joints (the limit is {MAX_DOF})")
    # the free-flyer's place first (the URDF reader's rule too), then the tree's links
    check_free_flyer(frames)
    for f in frames:
        if f.key in known:
            raise ModelError(f"frame {f.key!r} is defined twice")
        if f.parent not in known:
            raise ModelError(f"frame {f.key!r}: parent {show(f.parent)} is not defined before it")
        known.add(f.key)
    floating = bool(frames[0].base)
    model = Model(name, tuple(frames), geometry, gravity, (), hashlib.sha256(text.encode()).hexdigest(),
                  floating)
    if len(set(model.joint_names)) != model.ndof:
        raise ModelError("joint names must be unique")
    if model.ndof == 0:
        raise ModelError("the model has no moving joint")
    ees = _operational_frames(raw, "end_effector", "end effector", known, source)
    contacts = _operational_frames(raw, "contact", "contact", known, source)
    names = model.param_names
    if len(set(names)) != len(names):  # a parameter file is a table name -> value
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ModelError(f"parameter name clash: {dup}")
    return Model(name, model.frames, geometry, gravity, ees, model.sha256, floating, contacts)


def _operational_frames(raw, key: str, what: str, known, source: str) -> tuple:
    """The [[end_effector]] or [[contact]] tables (a contact also has `type`, "3d" or "6d")."""
    out = []
    tables = raw.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(e, dict) for e in tables):
        raise ModelError(f"{source}: {key} must be [[{key}]] tables")
    limit = MAX_CONTACTS if key == "contact" else MAX_END_EFFECTORS
    if len(tables) > limit:
        raise ModelError(f"{source}: {len(tables)} {what}s (the limit is {limit})")
    fields = {"name", "frame", "rotation", "origin"} | ({"type"} if key == "contact" else set())
    for e in tables:
        extra = set(e) - fields
        if extra:
            raise ModelError(f"{source}: {what}: unknown field(s) {sorted(extra)}")
        ename = check_name(e.get("name"), f"{what.replace(' ', '-')} name")
        frame = e.get("frame")
        if not isinstance(frame, str) or frame not in known - {"0"} or "\x1f" in frame:
            raise ModelError(f"{what} {ename!r}: unknown frame {show(frame)}")
        where = f"{what} {ename!r}"
        rot = sp.ImmutableMatrix(rotation_matrix(e["rotation"], where)) if "rotation" in e else EndEffector.rotation
        origin = tuple(vector(e["origin"], f"{where}: origin")) if "origin" in e else EndEffector.origin
        if key == "contact":
            kind = e.get("type", "3d")
            if kind not in CONTACT_KINDS:
                raise ModelError(f"{where}: type {show(kind)} is not one of {', '.join(CONTACT_KINDS)}")
            out.append(Contact(ename, frame, rot, origin, kind))
        else:
            out.append(EndEffector(ename, frame, rot, origin))
    if len({e.name for e in out}) != len(out):
        raise ModelError(f"{what.replace(' ', '-')} names must be unique")
    return tuple(out)


def load_model(path) -> Model:
    """The Model record of the model file at `path` (TOML, at most 1 MiB; see parse_model)."""
    path = Path(path)
    return parse_model(read_input_text(path, "model file", MAX_FILE_BYTES), path.name)


def _accepted_singular(raw, model: Model, source: str) -> frozenset:
    """A parameter file's `accept_singular`: keys of moving frames whose joint may move no
    mass or inertia (a singular A; the URDF reader writes them for what a URDF gave it)."""
    moving = {f.key for f in model.frames if f.moving}
    if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        raise ModelError(f"{source}: accept_singular must be a list of frame keys")
    unknown = [k for k in raw if k not in moving]
    if unknown:
        raise ModelError(f"{source}: accept_singular: {show(unknown[0])} is not a moving frame of the model")
    return frozenset(raw)


def load_param_values(path, model: Model) -> list:
    """Values of the parameter vector, in model.param_names order.

    The file is TOML with a [values] table name -> number. Ia/Fv/Fc default
    to 0; every other parameter must be given. The values must be physically
    valid (codegen/read/physical.py: masses, inertias, rotor inertia, friction,
    and no joint moving a subtree without mass or inertia, a singular A, unless
    the file lists its frame key in `accept_singular = [...]`), and every frame
    origin at them a bounded finite real (codegen/read/expr_value.py:
    "1/(L1 - 1)" with L1 = 1 is refused here, naming the frame and the expression).
    `model` may be any object with `param_names` (the Python modules pass only
    those); the origins and subtrees are checked when it has frames.
    """
    path = Path(path)
    raw = _toml(read_input_text(path, "parameter file", MAX_FILE_BYTES), f"parameter file {path.name}")
    names = model.param_names
    out = param_values(raw, names, path.name, ModelError)  # the runtime's rules (load_params)
    tree = model if hasattr(model, "frames") else None
    accepted = ()
    if tree is not None:  # first: the subtree check of check_params evaluates the origins
        check_origins(model, out, path.name)
        accepted = _accepted_singular(raw.get("accept_singular", []), model, path.name)
    try:
        check_params(names, out, tree, accepted)
    except ValueError as exc:
        raise ModelError(f"{path.name}: physically impossible parameters: {exc}") from None
    return out

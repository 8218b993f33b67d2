"""Malformed model and parameter files give a ModelError with a clear
message, never another exception, and the command line turns it into exit
status 2 with a one-line `error: ...` on stderr.

Each case starts from a small valid model (BASE, a 3-DOF tree with a
revolute, a prismatic and a fixed frame) and changes one thing; the test
asserts on a key word of the message.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]

from codegen.read.model import ModelError, load_model, load_param_values  # noqa: E402

BASE = '''\
name = "toy"
geometry = ["L1", "L2"]
gravity = [0, 0, -1]

[[end_effector]]
name = "tip"
frame = "t"

[[frame]]
key = "1"
parent = "0"
joint = "q1"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "L1"]

[[frame]]
key = "2"
parent = "1"
joint = "q2"
type = "prismatic"
axis = [1, 0, 0]
rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
origin = ["L2", "0", "0"]

[[frame]]
key = "t"
parent = "2"
type = "fixed"
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["L2 / 2", "0", "0"]
'''

FRAME2 = BASE[BASE.index('[[frame]]\nkey = "2"'):BASE.index('[[frame]]\nkey = "t"')]


def _params_text(model) -> str:
    """Distinct, physically valid values: per frame k a mass m, a centre of mass
    S and principal moments about it (a, b, a + b - small: triangle inequality
    holds), rotated by a fixed rotation R; J = I_c + m (S^T S 1 - S S^T)."""
    R = np.array([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]])  # a rotation (R^T R = I)
    values = {}
    for i, n in enumerate(model.param_names):
        values[n] = 0.5 + 0.01 * i  # geometry, g, Ia, Fv, Fc: any positive number
    for k, f in enumerate(model.frames):
        m, S = 1.0 + 0.25 * k, np.array([0.1, -0.05 * k, 0.02])
        Ic = R @ np.diag([0.02 + 0.01 * k, 0.03, 0.04 + 0.01 * k]) @ R.T
        J = Ic + m * (S @ S * np.eye(3) - np.outer(S, S))
        key = f.key
        values.update({f"m_{key}": m, f"MX_{key}": m * S[0], f"MY_{key}": m * S[1], f"MZ_{key}": m * S[2],
                       f"XX_{key}": J[0, 0], f"XY_{key}": J[0, 1], f"XZ_{key}": J[0, 2],
                       f"YY_{key}": J[1, 1], f"YZ_{key}": J[1, 2], f"ZZ_{key}": J[2, 2]})
    lines = ["[values]"] + [f"{n} = {float(v)!r}" for n, v in values.items()]
    return "\n".join(lines) + "\n"


def mutate(*pairs) -> str:
    """BASE with each (old, new) replaced exactly once (old must occur)."""
    text = BASE
    for old, new in pairs:
        assert text.count(old) == 1, f"test bug: {old!r} occurs {text.count(old)} times in BASE"
        text = text.replace(old, new)
    return text


def load_text(tmp_path, text, name="model.toml"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return load_model(path)


def expect_error(tmp_path, text, *words):
    with pytest.raises(ModelError) as info:
        load_text(tmp_path, text)
    msg = str(info.value)
    for w in words:
        assert w.lower() in msg.lower(), f"message {msg!r} lacks {w!r}"
    assert "\n" not in msg, f"multi-line message {msg!r}"
    return msg


def test_base_model_is_valid(tmp_path):
    m = load_text(tmp_path, BASE)
    assert m.ndof == 2 and m.joint_names == ("q1", "q2")
    assert [(e.name, e.frame, e.offset) for e in m.end_effectors] == [("tip", "t", False)]


def test_float_rotation_and_axis_accepted(tmp_path):
    """Rotations need not be exact: orthonormal to 1e-9 is enough, and axes are normalized."""
    c, s_ = 0.7071067811865476, 0.7071067811865475
    text = BASE.replace('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                        f'rotation = [[{c}, -{s_}, 0], [{s_}, {c}, 0], [0, 0, 1]]')
    text = text.replace('axis = [1, 0, 0]', 'axis = [0, 3, 4]')
    path = tmp_path / "m.toml"
    path.write_text(text)
    m = load_model(path)
    f = next(f for f in m.frames if f.joint == "q2")
    assert [float(a) for a in f.axis] == [0.0, 0.6, 0.8]
    assert abs(float(f.rotation[0, 0]) - c) == 0 and f.rotation[2, 2] == 1 and f.rotation[0, 2].is_Integer
    p = tmp_path / "p.toml"
    p.write_text(_params_text(m))
    assert len(load_param_values(p, m)) == len(m.param_names)


# ----------------------------------------------------------------------------
# model files
# ----------------------------------------------------------------------------

MODEL_CASES = {
    # syntax and structure
    "not TOML": ("name = toy\n[[frame\n", ["TOML"]),
    "not TOML (binary)": (b"\x00\x01\x02 = = =", ["TOML"]),
    "not UTF-8": (b'name = "toy\xff"\n', ["model file"]),
    "empty file": ("", ["model name"]),
    "unknown top-level field": (mutate(('gravity = [0, 0, -1]', 'gravity = [0, 0, -1]\ncolour = "red"')),
                                ["unknown", "colour"]),
    "unknown frame field": (mutate(('key = "1"\n', 'key = "1"\nmass = 3\n')), ["unknown", "mass"]),
    "unknown end-effector field": (mutate(('frame = "t"\n', 'frame = "t"\noffset = 1\n')), ["unknown", "offset"]),
    "no frames": (BASE[:BASE.index("[[frame]]")].replace('\n[[end_effector]]\nname = "tip"\nframe = "t"\n', ""),
                  ["frame"]),
    "frame not a table": ('name = "toy"\nframe = [1, 2]\n', ["table"]),
    "end_effector not tables": ('end_effector = "tip"\n' + BASE.replace(
        '[[end_effector]]\nname = "tip"\nframe = "t"\n', ""), ["end_effector"]),
    "end_effector list of numbers": ('end_effector = [1]\n' + BASE.replace(
        '[[end_effector]]\nname = "tip"\nframe = "t"\n', ""), ["end_effector"]),
    "geometry not a list": (mutate(('geometry = ["L1", "L2"]', 'geometry = 5')), ["geometry"]),
    "geometry name not an identifier": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L 2"]')),
                                        ["identifier"]),
    "geometry name g": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "g"]')), ["g"]),
    "duplicate geometry": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "L1"]')), ["unique"]),
    "geometry name pi": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "pi"]')), ["reserved", "pi"]),
    "geometry name sqrt": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "sqrt"]')), ["reserved", "sqrt"]),
    "geometry name a Python keyword": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "lambda"]')),
                                       ["reserved", "lambda"]),
    "geometry name with a newline": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2\\n"]')),
                                     ["identifier"]),
    "geometry name too long": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "' + "G" * 65 + '"]')),
                               ["longer than 64"]),
    "geometry named like a rotor inertia": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "Ia_x"]')),
                                            ["clash", "Ia_x"]),
    # missing keys
    "missing name": (mutate(('name = "toy"\n', '')), ["model name"]),
    "missing key": (mutate(('key = "2"\n', '')), ["missing", "key"]),
    "missing parent": (mutate(('key = "2"\nparent = "1"\n', 'key = "2"\n')), ["missing", "parent"]),
    "missing rotation": (mutate(('joint = "q2"\ntype = "prismatic"\naxis = [1, 0, 0]\n'
                                 'rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]\n',
                                 'joint = "q2"\ntype = "prismatic"\naxis = [1, 0, 0]\n')), ["missing", "rotation"]),
    "missing origin": (mutate(('origin = ["L2", "0", "0"]\n', '')), ["missing", "origin"]),
    "missing type": (mutate(('type = "prismatic"\n', '')), ["missing", "type"]),
    "missing joint": (mutate(('joint = "q2"\n', '')), ["joint"]),
    "missing axis": (mutate(('type = "prismatic"\naxis = [1, 0, 0]\n', 'type = "prismatic"\n')), ["axis"]),
    # the tree
    "parent defined after child": (BASE.replace(FRAME2, "") + "\n" + FRAME2, ["parent", "before"]),
    "unknown parent": (mutate(('parent = "1"', 'parent = "7"')), ["parent", "'7'"]),
    "parent not a string": (mutate(('parent = "1"', 'parent = 1')), ["parent"]),
    "frame is its own parent": (mutate(('key = "2"\nparent = "1"', 'key = "2"\nparent = "2"')), ["parent"]),
    "duplicate frame key": (mutate(('key = "t"', 'key = "1"'), ('frame = "t"', 'frame = "1"')), ["twice"]),
    "frame key 0": (mutate(('key = "t"', 'key = "0"'), ('frame = "t"', 'frame = "0"')), ["key"]),
    "frame key empty": (mutate(('key = "t"', 'key = ""'), ('frame = "t"', 'frame = ""')), ["key", "non-empty"]),
    "frame key with a newline": (mutate(('key = "t"', 'key = "t\\n"'), ('frame = "t"', 'frame = "t\\n"')),
                                 ["key", "control"]),
    "frame key with a trailing space": (mutate(('key = "t"', 'key = "t "'), ('frame = "t"', 'frame = "t "')),
                                        ["key", "whitespace"]),
    "frame key a number": (mutate(('key = "t"', 'key = 5')), ["key", "string"]),
    "unknown joint type": (mutate(('type = "prismatic"', 'type = "spherical"')), ["type", "spherical"]),
    "no moving joint": ('name = "toy"\n[[frame]]\nkey = "t"\nparent = "0"\ntype = "fixed"\n'
                        'rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = [0, 0, 0]\n', ["joint"]),
    # joint names
    "duplicate joint name": (mutate(('joint = "q2"', 'joint = "q1"')), ["joint", "unique"]),
    "joint name a number": (mutate(('joint = "q2"', 'joint = 2')), ["joint name", "string"]),
    "joint name empty": (mutate(('joint = "q2"', 'joint = ""')), ["joint name", "non-empty"]),
    "joint name with a newline": (mutate(('joint = "q2"', 'joint = "q2\\n"')), ["joint name", "control"]),
    "joint name with a tab": (mutate(('joint = "q2"', 'joint = "q\\t2"')), ["joint name", "control"]),
    "joint name with DEL": (mutate(('joint = "q2"', 'joint = "q\\u007f"')), ["joint name", "control"]),
    "joint name with a NUL": (mutate(('joint = "q2"', 'joint = "q\\u0000"')), ["joint name", "control"]),
    "joint name with a line separator": (mutate(('joint = "q2"', 'joint = "q\\u2028"')), ["joint name", "control"]),
    "joint name with a leading space": (mutate(('joint = "q2"', 'joint = " q2"')), ["joint name", "whitespace"]),
    "joint name too long": (mutate(('joint = "q2"', 'joint = "' + "q" * 65 + '"')), ["joint name", "longer than 64"]),
    "geometry named like a parameter": (mutate(('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", "m_1"]')),
                                        ["clash", "m_1"]),
    # rotations
    "rotation not orthonormal": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                         'rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 2]]')), ["rotation"]),
    "rotation not orthogonal": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                        'rotation = [[1, 0, 0], [1, 0, 0], [0, 0, 1]]')), ["rotation"]),
    "rotation det -1": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                'rotation = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]')), ["rotation", "det"]),
    "rotation 2 rows": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                'rotation = [[0, -1, 0], [1, 0, 0]]')), ["rotation"]),
    "rotation short row": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                   'rotation = [[0, -1], [1, 0, 0], [0, 0, 1]]')), ["rotation"]),
    "rotation of strings": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                    'rotation = [["0", "-1", "0"], [1, 0, 0], [0, 0, 1]]')), ["rotation"]),
    "rotation a string": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]', 'rotation = "I"')),
                          ["rotation"]),
    "rotation with inf": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                  'rotation = [[0, -1, 0], [1, 0, 0], [0, 0, inf]]')), ["rotation"]),
    # axes
    "axis zero": (mutate(('axis = [1, 0, 0]', 'axis = [0, 0, 0]')), ["axis", "zero length"]),
    "axis tiny": (mutate(('axis = [1, 0, 0]', 'axis = [1e-9, 0, 0]')), ["axis", "zero length"]),
    "float rotation off by 1e-6": (mutate(('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                                           'rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1.000001]]')),
                                   ["rotation", "1e-09", "off by"]),
    "axis nan": (mutate(('axis = [1, 0, 0]', 'axis = [nan, 0, 0]')), ["axis"]),
    "axis 2 entries": (mutate(('axis = [1, 0, 0]', 'axis = [1, 0]')), ["axis"]),
    "axis boolean": (mutate(('axis = [1, 0, 0]', 'axis = [true, 0, 0]')), ["axis"]),
    "fixed frame with an axis": (mutate(('type = "fixed"\n', 'type = "fixed"\naxis = [0, 0, 1]\n')), ["fixed"]),
    "fixed frame with a joint": (mutate(('type = "fixed"\n', 'type = "fixed"\njoint = "q3"\n')), ["fixed"]),
    # origins
    "origin undeclared symbol": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L3", "0", "0"]')),
                                 ["undeclared", "L3"]),
    "origin uses a joint": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["q1", "0", "0"]')), ["undeclared"]),
    "origin unparsable": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2 +", "0", "0"]')), ["parse"]),
    "origin unbalanced": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["(L2", "0", "0"]')), ["parse"]),
    "origin attribute": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2.real", "0", "0"]')), ["parse"]),
    "origin attribute 2": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2.foo", "0", "0"]')), ["parse"]),
    "origin dunder": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2.__class__", "0", "0"]')), ["parse"]),
    "origin python code": (mutate(('origin = ["L2", "0", "0"]',
                                   'origin = ["__import__(\'os\').getcwd()", "0", "0"]')), ["parse"]),
    "origin assignment": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2 = 1", "0", "0"]')), ["parse"]),
    "origin a tuple": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["(1, 2)", "0", "0"]')), ["parse"]),
    "origin a list": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["[1, 2]", "0", "0"]')), ["parse"]),
    "origin a relation": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2 > 1", "0", "0"]')), ["parse"]),
    "origin empty string": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["", "0", "0"]')), ["parse"]),
    "origin division by zero": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2/0", "0", "0"]')),
                                ["finite"]),
    "origin complex": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["sqrt(-1)*L2", "0", "0"]')), ["real"]),
    "origin I is not a name": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["I*L2", "0", "0"]')),
                               ["undeclared", "'I'"]),
    "origin nan string": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["nan", "0", "0"]')),
                          ["undeclared", "nan"]),
    "origin nan number": (mutate(('origin = ["L2", "0", "0"]', 'origin = [nan, "0", "0"]')), ["finite"]),
    "origin inf number": (mutate(('origin = ["L2", "0", "0"]', 'origin = [inf, "0", "0"]')), ["finite"]),
    "origin boolean": (mutate(('origin = ["L2", "0", "0"]', 'origin = [true, "0", "0"]')), ["expression"]),
    "origin 2 entries": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["L2", "0"]')), ["origin"]),
    "origin power tower": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["2**10**10", "0", "0"]')),
                           ["origin[0]", "exponent"]),
    "origin 1e20": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["0", "1e20", "0"]')), ["origin[1]", "range"]),
    "origin 1e20 number": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["0", "0", 1e20]')), ["origin[2]", "range"]),
    "origin unknown function": (mutate(('origin = ["L2", "0", "0"]', 'origin = ["exp(L2)", "0", "0"]')),
                                ["parse", "functions"]),
    # gravity
    "gravity not unit": (mutate(('gravity = [0, 0, -1]', 'gravity = [0, 0, -9.81]')), ["gravity", "unit"]),
    "gravity zero": (mutate(('gravity = [0, 0, -1]', 'gravity = [0, 0, 0]')), ["gravity"]),
    "gravity nan": (mutate(('gravity = [0, 0, -1]', 'gravity = [nan, 0, 0]')), ["gravity"]),
    "gravity a string": (mutate(('gravity = [0, 0, -1]', 'gravity = "down"')), ["gravity"]),
    "gravity 2 entries": (mutate(('gravity = [0, 0, -1]', 'gravity = [0, -1]')), ["gravity"]),
    # end effectors
    "end effector unknown frame": (mutate(('frame = "t"', 'frame = "nowhere"')), ["end effector", "nowhere"]),
    "end effector frame 0": (mutate(('frame = "t"', 'frame = "0"')), ["end effector"]),
    "end effector without frame": (mutate(('frame = "t"\n', '')), ["end effector"]),
    "end effector without name": (mutate(('name = "tip"\n', '')), ["end-effector name"]),
    "end effector name with a newline": (mutate(('name = "tip"', 'name = "tip\\n"')), ["end-effector name", "control"]),
    "end effector name a list": (mutate(('name = "tip"', 'name = ["tip"]')), ["end-effector name", "string"]),
    "duplicate end effector": (BASE + '\n[[end_effector]]\nname = "tip"\nframe = "2"\n', ["end-effector", "unique"]),

    # the model name
    "model name not identifier": (mutate(('name = "toy"', 'name = "toy-robot"')), ["model name", "identifier"]),
    "model name a number": (mutate(('name = "toy"', 'name = 3')), ["model name"]),
    "model name with a newline": (mutate(('name = "toy"', 'name = "toy\\n"')), ["model name", "identifier"]),
    "model name starting with _": (mutate(('name = "toy"', 'name = "_toy"')), ["model name", "letter"]),
    "model name too long": (mutate(('name = "toy"', 'name = "' + "t" * 65 + '"')), ["model name", "longer than 64"]),
}


@pytest.mark.parametrize("case", list(MODEL_CASES))
def test_malformed_model(tmp_path, case):
    text, words = MODEL_CASES[case]
    expect_error(tmp_path, text, *words)


def test_missing_model_file(tmp_path):
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(tmp_path / "nope.toml")
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(tmp_path)  # a directory


def test_names_are_data(tmp_path):
    """Joint names, frame keys and end-effector names are kept verbatim: URDF
    names are arbitrary, and C naming is the emitter's job (codegen/emit/cnames.py)."""
    odd = ["q-1", "int", "q", "NAN", "sin", "t0", "M_PI", "L1", "dq1", "s_q1", "q\u00e9", "shoulder pan",
           "\u5173\u8282 1", "x" * 64]
    for name in odd:
        m = load_text(tmp_path, mutate(('joint = "q2"', f"joint = {json.dumps(name)}")))
        assert m.joint_names == ("q1", name)
    m = load_text(tmp_path, mutate(('key = "t"', 'key = "tool flange-1"'), ('frame = "t"', 'frame = "tool flange-1"'),
                                   ('name = "tip"', 'name = "world"')))
    assert m.frames[-1].key == "tool flange-1" and "m_tool flange-1" in m.param_names
    assert m.ee_names == ("world",) and m.end_effectors[0].frame == "tool flange-1"
    m = load_text(tmp_path, BASE + '\n[[end_effector]]\nname = "TIP"\nframe = "2"\n')
    assert m.ee_names == ("tip", "TIP")


def test_origin_text_is_not_executed(tmp_path):
    """An origin string is parsed, never run as Python."""
    marker = tmp_path / "pwned"
    text = mutate(('origin = ["L2", "0", "0"]',
                   f'origin = ["__import__(\'pathlib\').Path(\'{marker}\').touch() or L2", "0", "0"]'))
    with pytest.raises(ModelError):
        load_text(tmp_path, text)
    assert not marker.exists()


def test_crlf_model_is_fine(tmp_path):
    m = load_text(tmp_path, BASE.replace("\n", "\r\n").encode())
    assert m.ndof == 2


# ----------------------------------------------------------------------------
# parameter files
# ----------------------------------------------------------------------------

@pytest.fixture
def model(tmp_path):
    return load_text(tmp_path, BASE, "base_model.toml")


def _without(text, name):
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{name} = ")]
    assert len(lines) == len(text.splitlines()) - 1
    return "\n".join(lines) + "\n"


def _with(text, name, value):
    lines = [f"{name} = {value}" if ln.startswith(f"{name} = ") else ln for ln in text.splitlines()]
    return "\n".join(lines) + "\n"


PARAM_CASES = {
    "missing value": (lambda t: _without(t, "m_2"), ["missing", "m_2"]),
    "missing geometry": (lambda t: _without(t, "L1"), ["missing", "L1"]),
    "missing g": (lambda t: _without(t, "g"), ["missing", "g"]),
    "unknown name": (lambda t: t + "m_9 = 1.0\n", ["unknown", "m_9"]),
    "actuator of a fixed frame": (lambda t: t + "Ia_t = 1.0\n", ["unknown", "Ia_t"]),
    "nan": (lambda t: _with(t, "m_1", "nan"), ["m_1", "finite"]),
    "inf": (lambda t: _with(t, "XX_2", "inf"), ["XX_2", "finite"]),
    "-inf": (lambda t: _with(t, "Fv_1", "-inf"), ["Fv_1", "finite"]),
    "overflow": (lambda t: _with(t, "L2", "1e400"), ["L2", "finite"]),
    "string": (lambda t: _with(t, "L1", '"0.5"'), ["L1", "number"]),
    "boolean": (lambda t: _with(t, "g", "true"), ["g", "number"]),
    "list": (lambda t: _with(t, "m_1", "[1.0]"), ["m_1", "number"]),
    "table": (lambda t: _with(t, "m_1", "{ value = 1.0 }"), ["m_1", "number"]),
    "date": (lambda t: _with(t, "m_1", "2024-06-11"), ["m_1", "number"]),
    "no values table": (lambda t: t.replace("[values]", "[parameters]"), ["values"]),
    "values not a table": (lambda t: "values = 3\n", ["values"]),
    "not TOML": (lambda t: t + "m_1 == 2\n", ["parameter file"]),
    "duplicate key": (lambda t: t + "m_1 = 2.0\n", ["parameter file"]),
    "empty": (lambda t: "", ["values"]),
}


@pytest.mark.parametrize("case", list(PARAM_CASES))
def test_malformed_params(tmp_path, model, case):
    edit, words = PARAM_CASES[case]
    path = tmp_path / "params.toml"
    path.write_text(edit(_params_text(model)))
    with pytest.raises(ModelError) as info:
        load_param_values(path, model)
    msg = str(info.value)
    for w in words:
        assert w.lower() in msg.lower(), f"message {msg!r} lacks {w!r}"
    assert "\n" not in msg, f"multi-line message {msg!r}"


def test_params_not_utf8_or_missing(tmp_path, model):
    path = tmp_path / "params.toml"
    path.write_bytes(b"[values]\nL1 = 1.0 # \xff\n")
    with pytest.raises(ModelError, match="parameter file"):
        load_param_values(path, model)
    with pytest.raises(ModelError, match="parameter file"):
        load_param_values(tmp_path / "nope.toml", model)


def test_actuator_parameters_default_to_zero(tmp_path, model):
    text = _params_text(model)
    for n in ("Ia_1", "Fv_1", "Fc_2"):
        text = _without(text, n)
    path = tmp_path / "params.toml"
    path.write_text(text)
    values = dict(zip(model.param_names, load_param_values(path, model)))
    assert values["Ia_1"] == values["Fv_1"] == values["Fc_2"] == 0.0


# ----------------------------------------------------------------------------
# the command line
# ----------------------------------------------------------------------------

CLI_CASES = {
    "bad model (not TOML)": ("name = toy\n[[frame\n", None),
    "bad model (rotation)": (MODEL_CASES["rotation det -1"][0], None),
    "bad model (origin)": (MODEL_CASES["origin unparsable"][0], None),
    "bad model (joint name)": (MODEL_CASES["joint name with a newline"][0], None),
    "bad model (not UTF-8)": (b'name = "toy\xff"\n', None),
    "missing model file": (None, None),
    "bad parameters (nan)": (BASE, lambda t: _with(t, "m_1", "nan")),
    "bad parameters (missing)": (BASE, lambda t: _without(t, "m_2")),
    "bad parameters (unknown)": (BASE, lambda t: t + "zz = 1.0\n"),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_cli_reports_error_without_traceback(tmp_path, case):
    model_text, edit_params = CLI_CASES[case]
    good = load_text(tmp_path, BASE, "good.toml")
    model_path = tmp_path / "bad.toml"
    if model_text is not None:
        model_path.write_bytes(model_text.encode() if isinstance(model_text, str) else model_text)
    params_text = _params_text(good)
    if edit_params is not None:
        params_text = edit_params(params_text)
    params_path = tmp_path / "params.toml"
    params_path.write_text(params_text)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "codegen", str(model_path), str(params_path), "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    err = r.stderr.strip()
    assert "Traceback" not in r.stderr, r.stderr
    assert err.startswith("error: "), r.stderr
    assert len(err.splitlines()) == 1, f"not one line:\n{r.stderr}"
    assert not out.exists() or not any(out.iterdir()), "files written despite the error"


def test_cli_accepts_the_base_model(tmp_path):
    good = load_text(tmp_path, BASE, "good.toml")
    params_path = tmp_path / "params.toml"
    params_path.write_text(_params_text(good))
    r = subprocess.run([sys.executable, "-m", "codegen", str(tmp_path / "good.toml"), str(params_path),
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["toy_kernels.c", "toy_kernels.h"]


# ----------------------------------------------------------------------------
# degenerate geometry at the default parameters
# ----------------------------------------------------------------------------

DEGENERATE = {  # origin, L1 where it is degenerate, L1 where it is fine, words
    "pole": ("1/(L1 - 1)", 1.0, 0.5, "not finite"),
    "root of a negative": ("sqrt(L1 - 2)", 1.0, 2.5, "not real"),
    "tan pole": ("tan(pi/2*L1)", 1.0, 0.5, "out of range"),
    "huge value": ("L1**8 + 1", 100.0, 2.0, "out of range"),
    "huge intermediate": ("L1**8 - L1**8/2", 100.0, 2.0, "out of range"),
}


@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_degenerate_origin_at_default_parameters_names_the_expression(tmp_path, case):
    text, bad, good, words = DEGENERATE[case]
    m = load_text(tmp_path, mutate(('origin = ["L2 / 2", "0", "0"]', f'origin = ["L2 / 2", "0", "{text}"]')))
    path = tmp_path / "params.toml"
    path.write_text(_with(_params_text(m), "L1", repr(bad)))
    with pytest.raises(ModelError) as info:
        load_param_values(path, m)
    msg = str(info.value)
    for w in ("frame 't'", "origin[2]", "default parameters", f"L1 = {bad:g}", words):
        assert w in msg, (w, msg)
    assert "\n" not in msg
    path.write_text(_with(_params_text(m), "L1", repr(good)))
    load_param_values(path, m)


def test_degenerate_origin_through_the_cli_is_one_line_exit_2(tmp_path):
    m = load_text(tmp_path, mutate(('origin = ["L2 / 2", "0", "0"]', 'origin = ["L2 / 2", "0", "1/(L1 - 1)"]')),
                  "m.toml")
    (tmp_path / "p.toml").write_text(_with(_params_text(m), "L1", "1"))
    r = subprocess.run([sys.executable, "-m", "codegen", str(tmp_path / "m.toml"), str(tmp_path / "p.toml"),
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "1/(L1 - 1)" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()

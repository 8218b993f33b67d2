"""Property-based tests (Hypothesis) of the model loader.

Random valid model files (random trees of revolute, prismatic and fixed
frames; exact rotations from the 24 signed axis permutations and float
rotations from Rodrigues' formula; origin expressions drawn from the grammar
of codegen/read/expr.py together with their value, computed here in floats) load
and keep what was written: the tree, the joint order, the parameter names, the
rotations, unit axes and origin values. Random mutations of valid files and
random garbage are refused with ModelError and never another exception.
"""
from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from codegen.read.expr import ModelError, parse_expression
from codegen.read.model import INERTIAL, ACTUATOR, parse_model

pytestmark = pytest.mark.unit

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GEOMETRY = ("L1", "L2", "d", "r_0")
VALUES = {"L1": 0.7, "L2": -0.3, "d": 1.9, "r_0": 0.05}  # where origins are evaluated

# The 24 proper rotations that permute and negate the axes.
AXIS_ROTATIONS = [
    np.array(m) for p in itertools.permutations(range(3)) for signs in itertools.product((1, -1), repeat=3)
    if np.linalg.det(m := [[signs[i] * (p[i] == j) for j in range(3)] for i in range(3)]) > 0
]
assert len(AXIS_ROTATIONS) == 24


# ----------------------------------------------------------------------------
# origin expressions with their float value
# ----------------------------------------------------------------------------

atoms = st.one_of(
    st.sampled_from(GEOMETRY).map(lambda g: (g, VALUES[g])),
    st.integers(0, 20).map(lambda n: (str(n), float(n))),
    st.sampled_from(["0.25", "1.5", "0.001", "2.75e-1"]).map(lambda s: (s, float(s))),
    st.just(("pi", math.pi)),
    st.tuples(st.sampled_from(GEOMETRY), st.integers(1, 3)).map(lambda t: (f"{t[0]}**{t[1]}", VALUES[t[0]] ** t[1])),
)


def _extend(children):
    def binary(op):
        def make(a, b):
            fn = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__}[op]
            return f"({a[0]} {op} {b[0]})", fn(float(a[1]), float(b[1]))
        return st.builds(make, children, children)
    return st.one_of(
        binary("+"), binary("-"), binary("*"),
        st.builds(lambda a, n: (f"{a[0]}/{n}", a[1] / n), children, st.integers(1, 9)),
        st.builds(lambda a: (f"-{a[0]}", -a[1]), children),
        st.builds(lambda a: (f"sin({a[0]})", math.sin(a[1])), children),
        st.builds(lambda a: (f"cos({a[0]})", math.cos(a[1])), children),
    )


expressions = st.recursive(atoms, _extend, max_leaves=6)


@SETTINGS
@given(expressions)
def test_grammar_expressions_parse_to_their_value(pair):
    text, value = pair
    syms = {g: sp.Symbol(g, real=True) for g in GEOMETRY}
    e = parse_expression(text, syms, "origin")
    got = float(e.subs({syms[g]: VALUES[g] for g in GEOMETRY}).evalf(30))
    assert math.isclose(got, value, rel_tol=1e-12, abs_tol=1e-12), (text, got, value)


# ----------------------------------------------------------------------------
# random valid model files
# ----------------------------------------------------------------------------

def rodrigues(axis, angle):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


unit_vectors = st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3).filter(lambda v: np.linalg.norm(v) > 0.1)
rotations = st.one_of(
    st.sampled_from(range(24)).map(lambda i: AXIS_ROTATIONS[i]),
    st.builds(rodrigues, unit_vectors, st.floats(-math.pi, math.pi)),
)
axes = st.one_of(
    st.sampled_from([(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1)]),
    unit_vectors,
)


@st.composite
def frames(draw):
    n = draw(st.integers(1, 7))
    out = []
    for i in range(n):
        kind = "revolute" if i == 0 else draw(st.sampled_from(["revolute", "prismatic", "fixed"]))
        out.append(dict(
            key=f"k{i}", parent="0" if i == 0 else draw(st.sampled_from(["0"] + [f"k{j}" for j in range(i)])),
            type=kind, joint=f"j{i}" if kind != "fixed" else None,
            axis=draw(axes) if kind != "fixed" else None,
            rotation=draw(rotations), origin=[draw(expressions) for _ in range(3)],
        ))
    return out


def fmt(x) -> str:
    return repr(int(x)) if float(x).is_integer() else repr(float(x))


def model_text(fs) -> str:
    lines = ['name = "rnd"', f"geometry = {list(GEOMETRY)!r}".replace("'", '"')]
    for f in fs:
        lines += ["", "[[frame]]", f'key = "{f["key"]}"', f'parent = "{f["parent"]}"', f'type = "{f["type"]}"']
        if f["joint"]:
            lines += [f'joint = "{f["joint"]}"', "axis = [" + ", ".join(fmt(a) for a in f["axis"]) + "]"]
        rows = ", ".join("[" + ", ".join(fmt(x) for x in row) + "]" for row in f["rotation"])
        lines += [f"rotation = [{rows}]", "origin = [" + ", ".join(f'"{o[0]}"' for o in f["origin"]) + "]"]
    return "\n".join(lines) + "\n"


@SETTINGS
@given(frames())
def test_random_valid_models_load(fs):
    m = parse_model(model_text(fs), "rnd.toml")
    moving = [f for f in fs if f["type"] != "fixed"]
    assert m.ndof == len(moving)
    assert m.joint_names == tuple(f["joint"] for f in moving)
    assert [f.key for f in m.frames] == [f["key"] for f in fs]
    assert [f.parent for f in m.frames] == [f["parent"] for f in fs]
    assert [f.index for f in m.joints] == list(range(m.ndof))
    expected = list(GEOMETRY) + ["g"]
    for f in fs:
        names = INERTIAL + (ACTUATOR if f["type"] != "fixed" else ())
        expected += [f"{n}_{f['key']}" for n in names]
    assert m.param_names == tuple(expected)
    subs = {sp.Symbol(g, real=True): v for g, v in VALUES.items()}
    for got, f in zip(m.frames, fs):
        R = np.array(got.rotation.tolist(), dtype=float)
        assert np.array_equal(R, np.asarray(f["rotation"], dtype=float))  # as written, to the bit
        if all(float(x).is_integer() for x in np.ravel(f["rotation"])):
            assert all(x.is_Integer for x in got.rotation)
        for o, (_, value) in zip(got.origin, f["origin"]):
            assert math.isclose(float(o.subs(subs)), value, rel_tol=1e-12, abs_tol=1e-12)
        if f["axis"] is not None:
            a = np.array([float(x) for x in got.axis])
            assert abs(np.linalg.norm(a) - 1) < 1e-15
            assert np.allclose(a, np.asarray(f["axis"], float) / np.linalg.norm(f["axis"]), rtol=0, atol=1e-15)
            if sorted(abs(x) for x in f["axis"]) == [0, 0, 1]:
                assert all(x.is_Integer for x in got.axis)


# ----------------------------------------------------------------------------
# mutations and garbage: ModelError, never anything else
# ----------------------------------------------------------------------------

SNIPPETS = ["", "[", "]", '"', "'", "=", "\n", "\x00", "\\", "nan", "inf", "1e999", "-", "__", "(", ")", "**",
            "[[frame]]", "key = \"k0\"", "parent = \"k9\"", "type = \"fixed\"", "\u00e9", "\ud7ff", "{", "}",
            "9" * 40, "true", "sqrt(-1)", "0/0", "L1.real", "1_0", "\t", "#", "2**99"]


def mutate(text: str, rnd: random.Random) -> str:
    for _ in range(rnd.randint(1, 3)):
        i = rnd.randrange(len(text) + 1)
        j = min(len(text), i + rnd.randint(0, 12))
        op = rnd.randrange(4)
        if op == 0:  # replace a span
            text = text[:i] + rnd.choice(SNIPPETS) + text[j:]
        elif op == 1:  # delete a line
            lines = text.split("\n")
            del lines[rnd.randrange(len(lines))]
            text = "\n".join(lines)
        elif op == 2:  # duplicate a line
            lines = text.split("\n")
            k = rnd.randrange(len(lines))
            lines.insert(k, lines[k])
            text = "\n".join(lines)
        else:  # truncate
            text = text[:i]
    return text


@SETTINGS
@given(frames(), st.randoms(use_true_random=False))
def test_mutated_models_are_loaded_or_refused_cleanly(fs, rnd):
    text = mutate(model_text(fs), rnd)
    try:
        parse_model(text, "mutated.toml")
    except ModelError as exc:
        assert "\n" not in str(exc)


@SETTINGS
@given(st.binary(max_size=400))
def test_garbage_bytes_are_refused(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # load_model refuses these before parsing (tested in test_hostile_models)
    try:
        parse_model(text, "garbage.toml")
    except ModelError:
        return
    raise AssertionError(f"garbage loaded: {data!r}")


TOKENS = ["L1", "L2", "pi", "sqrt", "sin", "atan2", "x", "1", "0", "2.5", "1e12", "1e13", "+", "-", "*", "/", "**",
          "(", ")", ",", ".", "[", "]", "'", "lambda", ":", "=", "==", "if", "else", "for", "in", "__class__",
          "__import__", "open", "chr", "95", "@", "~", "%", "//", "not", "j", "_", " "]


@SETTINGS
@given(st.one_of(st.lists(st.sampled_from(TOKENS), max_size=30).map("".join), st.text(max_size=60)))
def test_random_expression_text_parses_or_is_refused(text):
    syms = {"L1": sp.Symbol("L1", real=True), "L2": sp.Symbol("L2", real=True)}
    try:
        e = parse_expression(text, syms, "origin")
    except ModelError as exc:
        assert str(exc).startswith("origin") and "\n" not in str(exc)
        return
    assert isinstance(e, sp.Expr) and e.free_symbols <= set(syms.values())
    assert not e.has(sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I)


# ----------------------------------------------------------------------------
# names are data
# ----------------------------------------------------------------------------

names = st.text(min_size=1, max_size=64).filter(lambda s: s.isprintable() and s == s.strip() and s != "0")


@SETTINGS
@given(st.lists(names, min_size=3, max_size=3, unique=True), st.lists(names, min_size=2, max_size=2, unique=True),
       names)
def test_any_printable_name_is_kept_verbatim(keys, joints, ee):
    q = [json.dumps(x, ensure_ascii=False) for x in keys + joints + [ee]]
    text = (f'name = "n"\n[[end_effector]]\nname = {q[5]}\nframe = {q[2]}\n'
            f'[[frame]]\nkey = {q[0]}\nparent = "0"\njoint = {q[3]}\ntype = "revolute"\naxis = [0, 0, 1]\n'
            'rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = [0, 0, 0]\n'
            f'[[frame]]\nkey = {q[1]}\nparent = {q[0]}\njoint = {q[4]}\ntype = "prismatic"\naxis = [1, 0, 0]\n'
            'rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = [0, 0, 0]\n'
            f'[[frame]]\nkey = {q[2]}\nparent = {q[1]}\ntype = "fixed"\n'
            'rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\norigin = [0, 0, 0]\n')
    m = parse_model(text, "names.toml")
    assert [f.key for f in m.frames] == keys and m.joint_names == tuple(joints) and m.ee_names == (ee,)
    assert m.param_names[:2] == ("g", "m_" + keys[0]) and len(set(m.param_names)) == len(m.param_names)

"""C naming (codegen/emit/cnames.py): any printable model name becomes a valid,
readable, non-colliding C identifier, and no model name is reserved.

Unit properties of the mapping, then a whole robot whose names are as
hostile as we could make them (C and C++ keywords, the generator's own
locals and macros, math.h names, CSE-like t12/x3, names that collide after
sanitizing, "*/", trigraphs, quotes, backslashes, Unicode, 64-character
names), built as Model records directly: its C compiles with -Wall -Wextra
-Werror -pedantic and its kernels match Pinocchio built from the same
records; its joint and parameter names come back byte for byte.
"""
from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from codegen.emit.cnames import (C99_KEYWORDS, CXX_KEYWORDS, GENERATED, GENERATED_PATTERN, MATH_H, KINDS, c_string, symbol_locals,
                            cnames, comment_text, fragment, local, unique_fragments)
from codegen.pipeline import CodegenConfig, generate
from codegen.read.model import EndEffector, Frame, Limits, Model, ModelError
from codegen.derive.symbols import Symbols

pytestmark = pytest.mark.builds

CC = shutil.which("cc") or shutil.which("gcc")
IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*")

HOSTILE = ["panda_joint1", "base-link.001", "ee", "p", "q", "dq", "frame", "int", "sincos_q", "t12", "x3",
           "NDOF", "A", "C", "J", "tau_f", "sq", "i", "M_PI", "__x", "_Bool", "class", "and", "NAN",
           "sin", "x", "dx", "s_x", "c_x", "a-b", "a_b", "a.b", "a b", "Gelenk ä", "Gelenk a", "关节",
           "*/", "/*", "??/", 'q"uote', "back\\slash", "0", "1abc", "é" * 64, "a" * 64, "a" * 63 + "b"]


# ----------------------------------------------------------------------------
# The mapping
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", HOSTILE)
def test_fragment_is_a_clean_identifier_piece(name):
    f = fragment(name)
    assert IDENT.fullmatch(f) or re.fullmatch(r"[0-9][A-Za-z0-9_]*", f), f
    assert "__" not in f and not f.startswith("_") and not f.endswith("_")
    assert len(f) <= 40


def test_fragments_are_readable():
    assert fragment("panda_joint1") == "panda_joint1"
    assert fragment("base-link.001") == "base_link_001"
    assert fragment("Gelenk ä") == "Gelenk_a"
    assert fragment("关节") == "u5173_u8282"


def test_unique_fragments_never_collide_and_prefer_clean_names():
    frags = unique_fragments(HOSTILE, "joint")
    assert len(set(frags)) == len(HOSTILE)
    for name, f in zip(HOSTILE, frags):
        if IDENT.fullmatch(name) and len(name) <= 40:
            assert f == name, (name, f)  # a clean name is kept as is
    # "a-b", "a.b", "a b" all sanitize to "a_b", which a clean name owns
    assert frags[HOSTILE.index("a_b")] == "a_b"
    assert len({frags[HOSTILE.index(n)] for n in ("a-b", "a.b", "a b", "a_b")}) == 4


def test_unique_fragments_is_stable_under_reordering():
    a = dict(zip(HOSTILE, unique_fragments(HOSTILE, "joint")))
    b = dict(zip(HOSTILE[::-1], unique_fragments(HOSTILE[::-1], "joint")))
    assert a == b


def test_duplicate_names_are_refused():
    with pytest.raises(ModelError, match="unique"):
        unique_fragments(["a", "b", "a"], "joint")


@pytest.mark.parametrize("name", HOSTILE)
def test_locals_never_reach_keywords_library_or_generator_names(name):
    frag = fragment(name)
    for kind in KINDS:
        ident = local(kind, frag)
        assert ident not in C99_KEYWORDS | CXX_KEYWORDS | MATH_H | GENERATED
        assert not GENERATED_PATTERN.fullmatch(ident)


def test_generator_identifiers_are_outside_the_kind_namespaces():
    for g in GENERATED:
        assert not any(g.startswith(prefix) for prefix in KINDS.values()), g
        assert not g.startswith("J_"), g  # J_<end effector> arguments of compute_all
    macros = {"NDOF", "SINCOSCONVERT", "SINCOSLIMIT"}
    assert macros <= GENERATED and all("_" not in m for m in macros)  # model macros are <P>_<X>


def test_generator_identifiers_table_is_complete():
    """Every identifier declared in the source templates' own code is in GENERATED."""
    text = "\n".join(p.read_text() for p in sorted((Path(__file__).resolve().parents[1] / "templates" / "c").glob("*.c.j2")))
    assert "kk_log6" in text  # the contact template's too
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", text)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    declared = set(re.findall(r"\b(?:double|int|unsigned long long|unsigned char)\s+\*?(\w+)", text))
    declared |= set(re.findall(r"#define (\w+)", text))
    assert declared <= GENERATED, declared - GENERATED


def test_generator_functions_are_in_the_reserved_namespace():
    """Routines and copy helpers are kk_...; no kind prefix (hence no local of
    a model name) starts with kk_, and no ABI function name (after the C
    prefix) is a routine's name: whatever the prefix, neither shadows the other."""
    from codegen.emit.abi import describe
    from codegen.emit.cnames import RESERVED, routine_name

    assert routine_name("compute_C", 0) == "kk_compute_C_part0" and routine_name("x", 3).startswith(RESERVED)
    assert not any(k.startswith(RESERVED) or RESERVED.startswith(k) for k in KINDS.values())
    template = (Path(__file__).resolve().parents[1] / "templates" / "c" / "kernels.c.j2").read_text()
    statics = set(re.findall(r"static (?:\w+ )*?(?:int|void) (\w+)\(", template))
    assert {"kk_overlap", "store_lanes"} <= statics
    assert all(s.startswith(RESERVED) or s in GENERATED for s in statics), statics - GENERATED
    abi = describe(_model(ees=("e",)))
    assert not any(f.name.endswith(tuple(f"_part{n}" for n in range(9))) for f in abi.functions)


def test_kind_prefixes_are_prefix_free():
    prefixes = list(KINDS.values())
    for a in prefixes:
        for b in prefixes:
            assert a == b or not b.startswith(a), (a, b)


def test_kinds_cannot_collide():
    """Locals of different kinds differ even for adversarial joint names."""
    names = ["x", "dx", "ddx", "s_x", "c_x", "q_x", "dq_x", "p_x", "d", "f", "_ddq0", "_tau1"]
    sym = Symbols(_model(joints=names))
    every = [*sym.q, *sym.dq, *sym.ddq, *sym.tau, *sym.fext, *sym.s, *sym.c, *sym.params.values()]
    locals_ = symbol_locals(sym)
    idents = [locals_[s] for s in every]
    assert len(set(idents)) == len(idents)
    assert len(set(every)) == len(every), "two model quantities share a SymPy symbol"


def test_string_literals_escape_everything_dangerous():
    assert c_string("plain name") == '"plain name"'
    lit = c_string('*/ /* ??/ "q" \\ ä\n')
    body = lit[1:-1]
    assert "*/" not in lit and "/*" not in lit and "??" not in lit and "\n" not in lit
    assert re.fullmatch(r'(\\[0-7]{3}|\\[\\"?]|[ -~])*', body), lit
    assert comment_text("q_base") == "q_base"
    assert comment_text("a*/b") == c_string("a*/b")


def test_macro_collisions_are_refused():
    # a model "M" with an end effector "pi" once gave `#define M_PI 0`
    with pytest.raises(ModelError, match="M_NDOF.*namespace"):
        cnames(_model(name="M", ees=("pi",)))
    with pytest.raises(ModelError, match="collides"):
        cnames(_model(ees=("Left", "left")))
    with pytest.raises(ModelError, match="collides"):
        cnames(_model(ees=("ndof",)))
    with pytest.raises(ModelError, match="namespace"):
        cnames(_model(name="int", ees=("max",)))  # INT_MAX
    names = cnames(_model(name="robot", ees=("ee", "p", "frame")))
    assert names.prefix == "robot" and names.ees == ("ee", "p", "frame")
    assert cnames(_model(name="2-link arm")).prefix == "m2_link_arm"


# ----------------------------------------------------------------------------
# A whole hostile robot
# ----------------------------------------------------------------------------

def _rot(axis, quarter_turns=1):
    return sp.Matrix(sp.rot_axis3(-sp.pi / 2 * quarter_turns) if axis == "z" else
                     sp.rot_axis1(-sp.pi / 2 * quarter_turns))


def _model(name="hostile", joints=("x", "dx"), ees=(), geometry=("p", "q")):
    """A serial revolute chain with the given joint names; frame keys are
    hostile too; end effectors on the last frame."""
    keys = ["frame", "base-link.001", "p", "q", "t12", "关节", "*/", "x1", "int"] + [f"k{i}" for i in range(20)]
    g = [sp.Symbol(n, real=True) for n in geometry]
    frames, parent = [], "0"
    for i, j in enumerate(joints):
        axis = [(0, 0, 1), (0, 1, 0), (1, 0, 0)][i % 3]
        rot = sp.eye(3) if i % 2 else _rot("z" if i % 3 else "x")
        origin = (g[0] if i else sp.Integer(0), sp.Integer(0), g[-1] / 2 if i else g[-1])
        frames.append(Frame(keys[i], parent, j, "revolute", tuple(sp.Integer(a) for a in axis), rot, origin, i,
                            Limits(-1.5, 1.5, 2.0, None) if i == 0 else None))
        parent = keys[i]
    frames.append(Frame("tool*/", parent, None, "fixed", (0, 0, 0), sp.eye(3),
                        (g[0], sp.Integer(0), sp.Integer(0)), -1))
    ee = tuple(EndEffector(e, "tool*/" if k % 2 else parent) for k, e in enumerate(ees))
    return Model(name, tuple(frames), tuple(geometry), (sp.Integer(0), sp.Integer(0), sp.Integer(-1)), ee, "0" * 64)


HOSTILE_JOINTS = ("x", "dx", "s_x", "int", "sincos_q", "NDOF", 'a b*/ "??/\\', "关节", "t12", "q")
HOSTILE_EES = ("ee", "p", "frame", "A", "关节", "ω" * 64)


def hostile_model():
    return _model(name="int", joints=HOSTILE_JOINTS, ees=HOSTILE_EES, geometry=("p", "q", "t12"))


def test_duplicate_parameter_names_are_a_model_error():
    """A geometry name equal to a derived inertial name ("m_" + frame key)
    would make two entries of p share a name: refused, not merged."""
    with pytest.raises(ModelError, match="parameter names must be unique.*m_frame"):
        Symbols(_model(geometry=("m_frame", "q")))
    m = _model(geometry=("m_frame", "q"))
    with pytest.raises(ModelError, match="parameter names must be unique"):
        generate(m, [1.0] * len(m.param_names), CodegenConfig(out_dir=Path("/nonexistent")))


def test_generate_refuses_bad_values(tmp_path):
    m = _model()
    n = len(m.param_names)
    for values in ([1.0] * (n - 1), [1.0] * (n - 1) + [float("nan")], [1.0] * (n - 1) + ["1"],
                   [1.0] * (n - 1) + [True]):
        with pytest.raises(ModelError):
            generate(m, values, CodegenConfig(out_dir=tmp_path))
    assert not any(tmp_path.iterdir())


def test_hostile_symbols_are_distinct():
    sym = Symbols(hostile_model())
    every = [*sym.q, *sym.dq, *sym.ddq, *sym.tau, *sym.fext, *sym.s, *sym.c, *sym.params.values()]
    assert len(set(every)) == len(every)
    assert len(set(symbol_locals(sym).values())) == len(every)


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler")
    model = hostile_model()
    rng = np.random.default_rng(3)
    from reference.reference_fk import random_physical_params
    values = random_physical_params(model, rng)
    out = tmp_path_factory.mktemp("hostile")
    files = generate(model, values, CodegenConfig(out_dir=out))
    c = next(f for f in files if f.suffix == ".c")
    so = out / "libhostile.so"
    r = subprocess.run([CC, "-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC",
                        "-o", str(so), str(c), "-lm"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return model, np.asarray(values), ctypes.CDLL(str(so)), out


@pytest.mark.robots
def test_hostile_header_compiles_as_cpp(hostile_build):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no C++ compiler")
    _, _, _, out = hostile_build
    r = subprocess.run([gxx, "-x", "c++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        str(out / "int_kernels.h")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.robots
def test_hostile_names_round_trip(hostile_build):
    model, _, lib, _ = hostile_build
    for what, names in (("joint_name", model.joint_names), ("param_name", model.param_names)):
        f = getattr(lib, f"int_{what}")
        f.argtypes, f.restype = [ctypes.c_int], ctypes.c_char_p
        got = [f(i).decode("utf-8") for i in range(len(names))]
        assert got == list(names)
        assert f(len(names)) is None and f(-1) is None


@pytest.mark.robots
def test_hostile_kernels_match_pinocchio(hostile_build):
    from reference.pin_reference import build_pin_model, pin_reference
    model, p, lib, out = hostile_build
    n = model.ndof
    header = (out / "int_kernels.h").read_text()
    macros = dict(re.findall(r"#define (INT_\w+) (\d+)", header))
    names = cnames(model)
    D = ctypes.POINTER(ctypes.c_double)
    ptr = lambda a: a.ctypes.data_as(D)  # noqa: E731
    pm, _ = build_pin_model(model, p)
    data = pm.createData()
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, dq = rng.uniform(-3, 3, n), rng.uniform(-2, 2, n)
        ref = pin_reference(pm, data, q, dq)
        A, C, Q = np.full(n * n, np.nan), np.full(n * n, np.nan), np.full(n, np.nan)
        lib.int_compute_A(ptr(q), ptr(p), ptr(A))
        lib.int_compute_C(ptr(q), ptr(dq), ptr(p), ptr(C))
        lib.int_compute_Q(ptr(q), ptr(p), ptr(Q))
        got = {"A": A.reshape(n, n), "C": C.reshape(n, n), "Q": Q}
        for k, e in enumerate(model.end_effectors):
            assert int(macros[f"INT_{names.ees[k].upper()}"]) == k
            for fr, frame in enumerate(("world", "local")):
                J = np.full(6 * n, np.nan)
                lib.int_jacobian(ptr(q), ptr(p), ctypes.c_int(k), ctypes.c_int(fr), ptr(J))
                got[f"J_{e.name}_{frame}"] = J.reshape(6, n)
        for key, ours in got.items():
            err = np.abs(ours - ref[key]).max() / (1 + np.abs(ref[key]).max())
            assert err <= 1e-10, f"{key}: off by {err:.2e}"

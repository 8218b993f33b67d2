"""Hostile names through every emitter, compiled and imported.

A small tree robot (a trunk joint and two alike arms, so the shared subtree
routines and their comments are emitted too) whose joint names, frame keys
(hence parameter names), end-effector names and C prefix are drawn by
Hypothesis from printable text full of quotes, triple quotes, backslashes,
comment markers, `#`, trigraphs, Jinja delimiters, code that would create a
file, and non-ASCII, up to the readers' 64 characters. The names go through
the model reader (a TOML file), so only names it accepts are used. For each
example: the C compiles with -Wall -Wextra -Werror -pedantic (the header as
C++ too), the Python module is built and imported, nothing ran (no file
appeared in the working directory), and every name comes back verbatim from
the module's data (JOINT_NAMES and PARAM_NAMES are read from the C
joint_name()/param_name(), END_EFFECTORS, compute_all's keys, jacobian by
name). Builds are slow: few examples, one of them the reported reproducer.

Also: C prefixes equal to the kind prefixes of locals (dq, c, s, ...) with
joints named after the generator's routines compile (a reserved kk_
namespace), a URDF robot without end effectors (and one without revolute
joints) compiles clean, and model names with newlines are refused.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codegen.derive.outputs import derive
from codegen.pipeline import CodegenConfig, generate
from codegen.read.model import ModelError, load_model
from codegen.read.model_fields import MAX_NAME
from codegen.read.urdf import urdf_robot
from reference.reference_fk import random_physical_params

pytestmark = pytest.mark.builds

CC = shutil.which("gcc") or shutil.which("cc")
GXX = shutil.which("g++")
WERROR = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
MARKER = "pwn"  # the file every payload below would create in the working directory
PIECES = ['"""', "'''", '"', "'", "\\", "\\" * 43, "*/", "/*", "//", "#", "??/", "???", "\\n", "\\x41", "\\u1234",
          "{{", "}}", "{%", "%}", "${x}", "%s", "e" * 48, 'aaa"""""#', f'open("{MARKER}","w")#',
          f"__import__('os').mkdir('{MARKER}')", "\\\\\"", " ", "ä", "关节", "\U0001d11e", "(", ")", ";", "\\",
          "compute_C_part0", "kk_"]


def _valid(name: str) -> bool:
    return bool(name) and len(name) <= MAX_NAME and name.isprintable() and name == name.strip() and name != "0"


NAME = st.lists(st.one_of(st.sampled_from(PIECES), st.text(st.characters(codec="utf-8"), max_size=6)),
                min_size=1, max_size=10).map(lambda ps: "".join(ps)[:MAX_NAME].strip()).filter(_valid)


def model_toml(joints, keys, ees, name="hostile") -> str:
    """Trunk joint 0 at frame keys[0]; arms a (keys 1, 2, tool 3) and b (keys
    4, 5, tool 6), alike below their roots; end effectors on the tools and
    on frame keys[2]."""
    s = json.dumps  # a TOML basic string holding the name verbatim
    frames = [  # key index, parent index (-1: world), joint index or None, type, axis, origin
        (0, -1, 0, "revolute", [0, 0, 1], ["0", "0", "L1"]),
        (1, 0, 1, "revolute", [0, 1, 0], ["L2", "0", "0"]),
        (2, 1, 2, "prismatic", [1, 0, 0], ["L1", "0", "0"]),
        (3, 2, None, "fixed", None, ["L2", "0", "0"]),
        (4, 0, 3, "revolute", [0, 1, 0], ["-L2", "0", "0"]),
        (5, 4, 4, "prismatic", [1, 0, 0], ["L1", "0", "0"]),
        (6, 5, None, "fixed", None, ["L2", "0", "0"]),
    ]
    out = [f"name = {s(name)}", 'geometry = ["L1", "L2"]', "gravity = [0, 0, -1]", ""]
    for e, frame in zip(ees, [3, 6, 2]):
        out += ["[[end_effector]]", f"name = {s(e)}", f"frame = {s(keys[frame])}", ""]
    for k, parent, j, typ, axis, origin in frames:
        out += ["[[frame]]", f"key = {s(keys[k])}", f"parent = {s(keys[parent]) if parent >= 0 else s('0')}"]
        if j is not None:
            out += [f"joint = {s(joints[j])}", f"axis = {axis}"]
        out += [f'type = "{typ}"', "rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]",
                "origin = [" + ", ".join(s(o) for o in origin) + "]", ""]
    return "\n".join(out)


def _load(tmp: Path, joints, keys, ees):
    path = tmp / "hostile.toml"
    path.write_text(model_toml(joints, keys, ees), encoding="utf-8")
    return load_model(path)


def _import(so: Path, cwd: Path):
    """Import the extension at `so` (a fresh module object), with `cwd` the working directory."""
    spec = importlib.util.spec_from_file_location(so.name.split(".")[0], so)
    mod = importlib.util.module_from_spec(spec)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        spec.loader.exec_module(mod)
    finally:
        os.chdir(old)
    return mod


def _compile_c(out: Path, c_file: Path, header: Path):
    r = subprocess.run([CC, *WERROR, "-O0", "-c", "-o", str(out / "k.o"), str(c_file)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    if GXX:
        r = subprocess.run([GXX, "-x", "c++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                            "-pedantic", str(header)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]


def _check_stub(pyi: Path):
    """The stub is Python: it parses, and at module level holds only the
    docstring, imports, annotations (each optionally followed by its docstring, a string
    constant), functions and __all__ (nothing runs)."""
    tree = ast.parse(pyi.read_text(encoding="utf-8"))
    first, *rest = tree.body
    assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    allowed = (ast.Import, ast.ImportFrom, ast.AnnAssign, ast.FunctionDef, ast.Assign)

    def ok(prev, n):
        attr_doc = (isinstance(prev, ast.AnnAssign) and isinstance(n, ast.Expr)
                    and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
        return isinstance(n, allowed) or attr_doc

    bad = [ast.dump(n)[:120] for prev, n in zip([first, *rest], rest) if not ok(prev, n)]
    assert not bad, bad
    for fn in (n for n in rest if isinstance(n, ast.FunctionDef)):
        assert [type(x) for x in fn.body] == [ast.Expr] and isinstance(fn.body[0].value.value, str)
    assert not any(isinstance(n, ast.Call) for n in ast.walk(tree))


ISSUE_EES = ["e" * 48, 'aaa"""""#' + "\\" * 43, f'open("{MARKER}","w")#']  # the reported reproducer, verbatim but the path
PLAIN_JOINTS = ["j0", "ja1", "ja2", "jb1", "jb2"]
PLAIN_KEYS = ["k0", "a1", "a2", "at", "b1", "b2", "bt"]


@pytest.mark.system  # a full build per example: CI runs it with the system tier
@pytest.mark.skipif(CC is None, reason="no C compiler")
@settings(max_examples=1, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(joints=st.lists(NAME, min_size=5, max_size=5, unique=True),
       keys=st.lists(NAME, min_size=7, max_size=7, unique=True),
       ees=st.lists(NAME, min_size=1, max_size=3, unique=True),
       prefix=st.one_of(st.none(), NAME))
@example(joints=PLAIN_JOINTS, keys=PLAIN_KEYS, ees=ISSUE_EES, prefix="mini")  # the reported reproducer
def test_hostile_names_build_import_and_round_trip(tmp_path_factory, monkeypatch, joints, keys, ees, prefix):
    # -O0: escaping does not depend on optimization, and the build is several times faster
    monkeypatch.setattr("codegen.build.module.FLAGS", ["-O0", "-std=c99"])
    monkeypatch.setattr("codegen.build.module.X86_FLAGS", [])
    tmp = tmp_path_factory.mktemp("names")
    try:
        model = _load(tmp, joints, keys, ees)
    except ModelError as exc:  # e.g. two end-effector macros alike once uppercased: refused, fine
        assert "macro" in str(exc) or "unique" in str(exc) or "world" in str(exc), exc
        return
    values = random_physical_params(model, np.random.default_rng(1))
    out, cwd = tmp / "out", tmp / "cwd"
    cwd.mkdir()
    try:
        files = generate(model, values, CodegenConfig(out_dir=out, name=prefix, python=True))
    except ModelError as exc:  # a prefix whose macros reach the C library's namespace
        assert "macro" in str(exc), exc
        return
    c_file = next(f for f in files if f.suffix == ".c")
    header = next(f for f in files if f.suffix == ".h")
    so = next(f for f in files if f.suffix in (".so", ".pyd"))
    pyi = next(f for f in files if f.suffix == ".pyi")
    assert "kk_compute_C_part0" in c_file.read_text(), "the shared routines were not emitted"
    _compile_c(tmp, c_file, header)
    _check_stub(pyi)
    mod = _import(so, cwd)
    assert not any(cwd.iterdir()) and not (Path.cwd() / MARKER).exists(), "a name ran as code"
    assert mod.JOINT_NAMES == tuple(joints)
    assert mod.PARAM_NAMES == model.param_names
    assert mod.END_EFFECTORS == tuple(ees)
    q, dq = np.linspace(-1, 1, mod.N_DOF), np.linspace(0.5, -0.5, mod.N_DOF)
    res = mod.compute_all(q, dq)
    assert set(res) == {"A", "C", "Q", "friction", *(f"J_{e}" for e in ees)}
    for i, e in enumerate(ees):
        np.testing.assert_array_equal(mod.jacobian(q, e), mod.jacobian(q, i))
        np.testing.assert_allclose(mod.jacobian(q, e), res[f"J_{e}"], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(mod.fk(q, e), mod.fk(q, i))
    for fn in (mod, mod.compute_all, mod.jacobian, mod.fk):
        assert isinstance(fn.__doc__, str) and not any(e in fn.__doc__ for e in ees if len(e) > 3)


def test_issue_reproducer_renders_a_stub_without_code(tmp_path):
    """The 3-name reproducer at text level (fast): the stub, which carries the
    same docstrings as the module, parses with nothing to run."""
    from codegen.emit.abi import describe
    from codegen.emit.python_module import write_python_module

    model = _load(tmp_path, PLAIN_JOINTS, PLAIN_KEYS, ISSUE_EES)
    _, pyi = write_python_module(describe(model), model, None, tmp_path, "mini_kernels")
    _check_stub(pyi)
    mini = Path(__file__).parent / "models" / "mini.toml"  # the reported robot: mini's frames, three names
    text = mini.read_text().split("[[end_effector]]")[0] + "".join(
        f"[[end_effector]]\nname = {json.dumps(e)}\nframe = \"{f}\"\n\n" for e, f in zip(ISSUE_EES, "abb")) + \
        "[[frame]]" + mini.read_text().split("[[frame]]", 1)[1]
    (tmp_path / "mini3.toml").write_text(text)
    model = load_model(tmp_path / "mini3.toml")
    _, pyi = write_python_module(describe(model), model, None, tmp_path, "mini_kernels")
    _check_stub(pyi)


# ---------------------------------------------------------------------------
# C prefixes against locals
# ---------------------------------------------------------------------------

GENERATOR_WORDS = ["compute_C_part0", "compute_A_part0", "compute_all_part0", "compute_C", "copy_dq_compute_C"]


SHARE_ALL = ("A", "C", "all")


@pytest.fixture(scope="module")
def words_robot(tmp_path_factory):
    """The robot whose joints are named after the generator's routines, and
    its derivation (the C prefix does not enter it: derived once)."""
    model = _load(tmp_path_factory.mktemp("words"), GENERATOR_WORDS, PLAIN_KEYS[:6] + ["overlap"],
                  ["compute_C_part0"])
    return model, random_physical_params(model, np.random.default_rng(2)), derive(model, SHARE_ALL)


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("prefix", ["dq", "c", "s", "p", "kk"])
def test_prefix_equal_to_a_local_kind_compiles(tmp_path, monkeypatch, words_robot, prefix):
    """--name dq with a joint named compute_C_part0 declared the local
    dq_compute_C_part0 in the kernel that called the routine of that name.
    The routines are kk_<kernel>_part<n> now, a namespace no local reaches."""
    model, values, derivation = words_robot
    monkeypatch.setattr("codegen.pipeline.derive", lambda m, share, *derivatives, ready=None: derivation)
    files = generate(model, values, CodegenConfig(out_dir=tmp_path / "out", name=prefix, share_subtrees=SHARE_ALL))
    c_file = next(f for f in files if f.suffix == ".c")
    source = c_file.read_text()
    assert f"double {prefix}_compute_C_part0" in source or prefix in ("kk", "p")
    r = subprocess.run([CC, *WERROR, "-O0", "-shared", "-fPIC", "-o", str(tmp_path / "k.so"), str(c_file), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "kk_compute_C_part0(" in source and "kk_compute_A_part0(" in source


# ---------------------------------------------------------------------------
# URDF robots without end effectors
# ---------------------------------------------------------------------------

LINK = ('<link name="{}"><inertial><origin xyz="0.01 0.02 0.1" rpy="0 0 0"/><mass value="1.5"/>'
        '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.015"/></inertial></link>')
JOINT = ('<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>'
         '<origin xyz="0 0 0.2" rpy="0 0 0"/><axis xyz="{axis}"/>'
         '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>')


def _urdf(types) -> bytes:
    links = ["base"] + [f"l{i}" for i in range(len(types))]
    body = ['<link name="base"/>'] + [LINK.format(name) for name in links[1:]]
    for i, typ in enumerate(types):
        body.append(JOINT.format(name=f"j{i}", type=typ, parent=links[i], child=links[i + 1],
                                 axis="0 0 1" if i % 2 == 0 else "1 0 0"))
    return ('<?xml version="1.0"?>\n<robot name="chain">' + "".join(body) + "</robot>\n").encode()


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("types, trig", [(("revolute", "revolute", "prismatic"), True),
                                         (("revolute", "prismatic"), True), (("prismatic",), False)],
                         ids=["revolute", "base-revolute-only", "prismatic-only"])
def test_urdf_without_end_effectors_compiles_clean(tmp_path, types, trig):
    """No end effector: the Jacobian dispatcher uses none of its arguments
    but J; sincos_q is emitted exactly when a kernel reads sin/cos of a joint:
    a revolute base joint alone leaves the dynamics independent of its angle,
    but not the world-frame CoM and centroidal map; prismatic joints only: no sincos_q."""
    robot = urdf_robot(_urdf(types), name=None, end_effectors=(), snap=True, source="'chain.urdf'")
    assert robot.model.ee_names == ()
    files = generate(robot.model, robot.values, CodegenConfig(out_dir=tmp_path / "out"))
    c_file = next(f for f in files if f.suffix == ".c")
    assert ("sincos_q(q, sq, cq)" in c_file.read_text()) == trig
    r = subprocess.run([CC, *WERROR, "-O2", "-shared", "-fPIC", "-o", str(tmp_path / "k.so"), str(c_file), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


# ---------------------------------------------------------------------------
# names the readers refuse
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "tab\there", "nul\x00", "line\u2028sep", "bidi\u202e"])
def test_names_with_line_breaks_or_controls_are_refused(tmp_path, bad):
    """Newlines and other non-printable characters never reach an emitter:
    both readers refuse them (in a URDF as character references: XML turns
    a literal newline in an attribute into a space)."""
    with pytest.raises(ModelError, match="printable"):
        _load(tmp_path, PLAIN_JOINTS[:4] + [bad], PLAIN_KEYS, ["tool"])
    if "\x00" in bad:
        return  # not an XML character at all
    ref = "".join(c if c.isalnum() else f"&#{ord(c)};" for c in bad)
    with pytest.raises(ModelError, match="printable"):
        urdf_robot(_urdf(("revolute",)).replace(b'name="j0"', f'name="{ref}"'.encode()), name=None,
                   end_effectors=(), snap=True, source="'x.urdf'")

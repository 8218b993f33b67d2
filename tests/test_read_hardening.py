"""Hardening of the model readers (codegen/read): rules the model-file and URDF readers share.

* A free-flying base: the floating frame is the first frame and the world's only
  child, one rule (codegen.read.records.check_free_flyer) for both readers.
* Input files: regular files only, read through one capped reader
  (codegen.read.files.read_input) by every reader, never blocking on a FIFO.
* Parameters: a moving subtree without mass or inertia (a singular A) is refused,
  naming the joint; a moving URDF link without <inertial> is a warning.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.read.model import ModelError, parse_model

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models"

# A free-flying body carrying one revolute arm: the model-file form of a floating base.
FLOATING = '''\
name = "flyer"
gravity = [0, 0, -1]

[[frame]]
key = "body"
parent = "0"
joint = "base_free"
type = "floating"
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "0"]

[[frame]]
key = "arm"
parent = "body"
joint = "shoulder"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0.1", "0", "0"]
'''

# A frame fixed to the world, to be listed before or after the floating frame.
WORLD_FIXED = '''
[[frame]]
key = "post"
parent = "0"
type = "fixed"
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "1"]
'''

WORLD_REVOLUTE = '''
[[frame]]
key = "wheel"
parent = "0"
joint = "spin"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "1"]
'''


def _first(extra: str) -> str:
    """FLOATING with `extra` frames listed before its floating frame."""
    at = FLOATING.index("[[frame]]")
    return FLOATING[:at] + extra.lstrip("\n") + "\n" + FLOATING[at:]


# ------------------------------------------------------------------ floating base

def test_floating_model_reads():
    model = parse_model(FLOATING)
    assert model.floating_base and model.base_body == "body" and model.ndof == 7


@pytest.mark.parametrize("text", [
    _first(WORLD_FIXED),  # accepted once: fk moved the post with the base, A did not
    _first(WORLD_REVOLUTE),
    FLOATING + WORLD_FIXED,
    FLOATING + WORLD_REVOLUTE,
], ids=["fixed before", "revolute before", "fixed after", "revolute after"])
def test_floating_frame_is_first_and_the_worlds_only_child(text):
    with pytest.raises(ModelError, match=r"frame 'body': a floating frame must be the first frame "
                                         r"and the world's only child.*'(post|wheel)'"):
        parse_model(text)


def test_floating_frame_below_another_frame_refused():
    text = _first(WORLD_FIXED).replace('parent = "0"\njoint = "base_free"', 'parent = "post"\njoint = "base_free"')
    with pytest.raises(ModelError, match="frame 'body': a floating frame must be the first frame"):
        parse_model(text)


def test_two_floating_frames_refused():
    second = FLOATING[FLOATING.index("[[frame]]"):FLOATING.index('[[frame]]\nkey = "arm"')]
    text = FLOATING + "\n" + second.replace('"body"', '"body2"').replace('"base_free"', '"free2"')
    with pytest.raises(ModelError, match="frame 'body2': a floating frame must be the first frame"):
        parse_model(text)


def test_urdf_floating_root_joint_beside_another_refused():
    """The URDF reader applies the same rule: a dummy world link carrying the floating
    joint and a second joint would be a second child of the world."""
    from codegen.read.urdf import urdf_robot

    text = (MODELS / "floating_tiny.urdf").read_text()
    extra = ('<link name="post"/><joint name="post_mount" type="fixed"><parent link="world"/>'
             '<child link="post"/></joint></robot>')
    with pytest.raises(ModelError, match="joint 'base_free': a floating frame must be the first frame and the "
                                         "world's only child .*'post_mount'"):
        urdf_robot(text.replace("</robot>", extra).encode())


def test_urdf_floating_model_round_trips_through_the_rule():
    from codegen.read.urdf import load_urdf

    robot = load_urdf(MODELS / "floating_tiny.urdf", snap=False)
    again = parse_model(robot.to_toml()[0])
    assert again.frames == robot.model.frames and again.floating_base


# ------------------------------------------------------------------ input files

def _readers():
    from codegen.read.model import load_model, load_param_values
    from codegen.read.urdf import load_urdf

    mini = load_model(MODELS / "mini.toml")
    return {"URDF": load_urdf, "model file": load_model,
            "parameter file": lambda path: load_param_values(path, mini)}


READERS = ("URDF", "model file", "parameter file")


def _cap(reader):
    from codegen.read import model_fields, urdf_parse

    return urdf_parse.MAX_BYTES if reader == "URDF" else model_fields.MAX_FILE_BYTES


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("target", ["/dev/zero", "symlink to /dev/zero", "directory"])
def test_not_a_regular_file_refused(tmp_path, reader, target):
    path = {"/dev/zero": Path("/dev/zero"), "directory": tmp_path}.get(target, tmp_path / "link")
    if target.startswith("symlink"):
        path.symlink_to("/dev/zero")
    with pytest.raises(ModelError, match=f"cannot read {reader} .*not a regular file"):
        _readers()[reader](path)


@pytest.mark.parametrize("reader", READERS)
def test_oversize_regular_file_refused(tmp_path, reader):
    path = tmp_path / "big"
    with open(path, "wb") as f:
        f.truncate(_cap(reader) + 1)  # sparse: one byte over the cap
    with pytest.raises(ModelError, match=f"cannot read {reader} .*larger than {_cap(reader)} bytes"):
        _readers()[reader](path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_refused_at_once(tmp_path):
    """A FIFO without a writer: a plain open would block forever. In a child process
    with a timeout, so that a regression fails this test instead of hanging the suite."""
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    script = f'''
from tests.test_read_hardening import _readers
from codegen.read.model import ModelError
for what, read in _readers().items():
    try:
        read({str(fifo)!r})
    except ModelError as exc:
        print(what, "->", exc)
    else:
        print(what, "-> read")
'''
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                         cwd=ROOT)  # the checkout's tests package, from the working directory
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 3, out.stdout
    for what, line in zip(READERS, lines):
        assert line.startswith(f"{what} -> cannot read {what} ") and "not a regular file (a FIFO)" in line, line


def test_read_input(tmp_path):
    from codegen.read.files import read_input

    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_input(path, "input", 10) == b"x" * 10  # exactly the cap
    assert read_input(str(path), "input", 11) == b"x" * 10
    with pytest.raises(ModelError, match="cannot read input .*larger than 9 bytes"):
        read_input(path, "input", 9)
    for bad in ("", "nul\x00", tmp_path / "missing"):
        with pytest.raises(ModelError, match="cannot read input"):
            read_input(bad, "input", 10)
    link = tmp_path / "link"
    link.symlink_to(path)
    assert read_input(link, "input", 10) == b"x" * 10  # a symlink to a regular file is one


def test_every_reader_goes_through_read_input():
    """No other way of opening a file in codegen/read: the caps and checks are in one place."""
    import re

    for src in (ROOT / "codegen" / "read").glob("*.py"):
        if src.name == "files.py":
            continue
        text = src.read_text(encoding="utf-8")
        assert not re.search(r"\bopen\(|\.read_bytes\(\)|\.read_text\(|os\.read\b|io\.", text), src.name


# ------------------------------------------------------------------ joints that move nothing

def _mini_values(**changes) -> dict:
    import tomllib

    values = tomllib.loads((MODELS / "mini_params.toml").read_text())["values"]
    values.update(changes)
    return values


def _massless(key) -> dict:
    return {f"{n}_{key}": 0.0 for n in ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")}


def _load_values(tmp_path, values: dict, model_path=MODELS / "mini.toml", head=""):
    from codegen.read.model import load_model, load_param_values
    from codegen.read.urdf_toml import _table

    path = tmp_path / "p.toml"
    path.write_text(head + _table("[values]\n", values), encoding="utf-8")
    return load_param_values(path, load_model(model_path))


SINGULAR = "the mass matrix A is singular"


def test_massless_prismatic_leaf_refused(tmp_path):
    """Prismatic joint 'q_b' moves link 'b' alone (a leaf): without mass, and without rotor
    inertia, its row of A is zero. Accepted once; forward dynamics returned NaN."""
    with pytest.raises(ModelError, match=f"link 'b' \\(joint 'q_b'\\): the link and every link it carries "
                                         f"are massless, so {SINGULAR}.*rotor inertia Ia_b"):
        _load_values(tmp_path, _mini_values(**_massless("b"), Ia_b=0.0))


def test_massless_revolute_subtree_refused(tmp_path):
    """Joint 'q_a' moves link 'a' and the fixed tool 'ta' it carries: both massless."""
    with pytest.raises(ModelError, match=f"link 'a' \\(joint 'q_a'\\).*massless, so {SINGULAR}"):
        _load_values(tmp_path, _mini_values(**_massless("a"), **_massless("ta"), Ia_a=0.0))


def test_mass_on_a_revolute_axis_without_inertia_refused(tmp_path):
    """A point mass on the axis of joint 'q_a' (its axis is -y of frame 'a'), nothing else."""
    point = {**_massless("a"), **_massless("ta"), "m_a": 2.0, "MY_a": 2.0 * 0.3,
             "XX_a": 2.0 * 0.09, "ZZ_a": 2.0 * 0.09, "Ia_a": 0.0}  # J = m (|c|^2 1 - c c^T), c = (0, 0.3, 0)
    with pytest.raises(ModelError, match="link 'a' \\(joint 'q_a'\\).*no inertia about the joint axis"):
        _load_values(tmp_path, _mini_values(**point))


@pytest.mark.parametrize("case", ["rotor inertia", "mass below", "gripper plate"])
def test_what_moves_something_passes(tmp_path, case):
    values = {
        # the joint's own rotor inertia is enough for its row of A
        "rotor inertia": _mini_values(**_massless("b"), Ia_b=1e-6),
        # a massless link carrying a massive one: its subtree has mass
        "mass below": _mini_values(**_massless("a"), Ia_a=0.0),
        # negligible but positive mass and inertia, no rotor inertia
        "gripper plate": _mini_values(**{**_massless("b"), **_massless("a"), **_massless("ta"), "Ia_b": 0.0,
                                         "Ia_a": 0.0, "m_b": 1e-6, "XX_b": 1e-12, "YY_b": 1e-12, "ZZ_b": 1e-12,
                                         "m_ta": 1e-6, "XX_ta": 1e-12, "YY_ta": 1e-12, "ZZ_ta": 1e-12}),
    }[case]
    assert _load_values(tmp_path, values)  # loads


def test_accept_singular_lets_a_file_say_so(tmp_path):
    values = _mini_values(**_massless("b"), Ia_b=0.0)
    assert _load_values(tmp_path, values, head='accept_singular = ["b"]\n')
    with pytest.raises(ModelError, match="accept_singular: 'ta' is not a moving frame"):
        _load_values(tmp_path, values, head='accept_singular = ["ta"]\n')
    with pytest.raises(ModelError, match="accept_singular must be a list of frame keys"):
        _load_values(tmp_path, values, head='accept_singular = "b"\n')


def test_check_params_without_a_model_is_per_link():
    """The compiled modules' check_params has only the names: each link on its own."""
    from codegen.read.model import load_model
    from codegen.read.physical import check_params

    model = load_model(MODELS / "mini.toml")
    values = _mini_values(**_massless("b"), Ia_b=0.0)
    vector = [values.get(n, 0.0) for n in model.param_names]
    check_params(model.param_names, vector)
    with pytest.raises(ValueError, match=f"link 'b'.*{SINGULAR}"):
        check_params(model.param_names, vector, model)
    check_params(model.param_names, vector, model, accepted={"b"})


def test_massless_free_flyer_refused(tmp_path):
    values = {"g": 9.81, **_massless("body"), **_massless("arm")}
    (tmp_path / "m.toml").write_text(FLOATING)
    with pytest.raises(ModelError, match=f"link 'body' \\(joint 'base_free:vx'\\).*massless, so {SINGULAR} .*; "
                                         f"give them a mass and inertia$"):
        _load_values(tmp_path, values, model_path=tmp_path / "m.toml")


def test_krang_and_the_test_robots_pass():
    import numpy as np

    from codegen.read.model import load_model, load_param_values
    from codegen.read.physical import check_params
    from reference.reference_fk import random_physical_params

    krang = load_model(ROOT / "models" / "krang.toml")
    assert load_param_values(ROOT / "models" / "krang_params.toml", krang)
    assert load_param_values(MODELS / "mini_params.toml", load_model(MODELS / "mini.toml"))
    for path in sorted(MODELS.glob("*.toml")):
        if path.name.endswith("_params.toml"):
            continue
        model = load_model(path)
        for seed in range(3):
            values = random_physical_params(model, np.random.default_rng(seed))
            check_params(model.param_names, values, model)


# ------------------------------------------------------------------ URDF: links without <inertial>

def _urdf(*parts) -> bytes:
    return ('<?xml version="1.0"?>\n<robot name="r">' + "".join(parts) + "</robot>").encode()


INERTIAL = ('<inertial><mass value="1"/><origin xyz="0.1 0 0"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')


def _link(name, inertial=True):
    return f'<link name="{name}">{INERTIAL if inertial else ""}</link>'


def _joint(name, parent, child, kind="revolute"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 0.2"/><axis xyz="0 0 1"/></joint>')


def test_urdf_moving_links_without_inertial_warned():
    from codegen.read.urdf import urdf_robot

    robot = urdf_robot(_urdf(
        _link("base", False), _link("upper"), _link("adapter", False), _link("lower", False), _link("hand"),
        _link("tool0", False), _link("stand", False),
        _joint("fix_stand", "base", "stand", "fixed"),  # fixed to the world: does not move
        _joint("shoulder", "base", "upper"),
        _joint("fix_adapter", "upper", "adapter", "fixed"),  # moves and carries a joint
        _joint("elbow", "adapter", "lower"),  # no inertial, but carries the hand
        _joint("wrist", "lower", "hand"),
        _joint("fix_tool", "hand", "tool0", "fixed")))  # a frame at the tip: moves, carries nothing
    assert robot.warnings == ("2 moving link(s) without <inertial>, read as massless: 'adapter', 'lower' "
                              "(give them an <inertial> if they carry mass)",)


def test_urdf_massless_leaf_read_warned_and_reloads(tmp_path):
    """A URDF is read as it is (Pinocchio reads it so too): a massless moving leaf is two
    warnings, and the parameter file written for it says so, so that it reloads."""
    from codegen.read.model import load_model, load_param_values
    from codegen.read.urdf import urdf_robot

    robot = urdf_robot(_urdf(_link("base"), _link("arm"), _link("finger", False),
                             _joint("shoulder", "base", "arm"), _joint("finger_joint", "arm", "finger")))
    assert robot.warnings[0].startswith("1 moving link(s) without <inertial>, read as massless: 'finger'")
    assert robot.warnings[1].startswith("forward dynamics is undefined with the URDF's inertials: "
                                        "link 'finger' (joint 'finger_joint'): ")
    model_text, params_text = robot.to_toml()
    assert 'accept_singular = ["finger"]' in params_text
    (tmp_path / "m.toml").write_text(model_text)
    (tmp_path / "p.toml").write_text(params_text)
    assert tuple(load_param_values(tmp_path / "p.toml", load_model(tmp_path / "m.toml"))) == robot.values
    (tmp_path / "p.toml").write_text(params_text.replace('accept_singular = ["finger"]', ""))
    with pytest.raises(ModelError, match=f"link 'finger' \\(joint 'finger_joint'\\).*{SINGULAR}"):
        load_param_values(tmp_path / "p.toml", load_model(tmp_path / "m.toml"))


def test_urdf_with_inertials_has_no_warning():
    from codegen.read.urdf import load_urdf

    assert load_urdf(MODELS / "floating_tiny.urdf").warnings == ()

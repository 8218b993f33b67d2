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
import sys
sys.path.insert(0, {str(ROOT)!r})
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
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
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

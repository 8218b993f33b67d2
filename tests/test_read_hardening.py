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

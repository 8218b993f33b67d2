"""Pinocchio models of a krang-kernels frame table, for the benchmarks.

Two builds of the same robot:

* `build_unaligned(model, params)`: straight from the frame table, every joint
  a `JointModelRevoluteUnaligned` about its (negative) seed axis, link frames
  exactly the model's frames.
* `write_urdf(model, params, path)`: a URDF whose joint frames are the model's
  frames re-expressed so that every joint axis is +x, +y or +z. For an axis -e
  the frame F is replaced by F' = F * Rot(u, pi), u a coordinate axis
  perpendicular to e; Rot(u, pi) maps e to -e, so F * Rot(-e, q) * Rot(u, pi)
  = F' * Rot(+e, q) with the same q. Origins do not move, so the world-aligned
  Jacobians of the end-effector frames are unchanged. `pin.buildModelFromUrdf`
  turns such joints into JointModelRX/RY/RZ, Pinocchio's fastest revolute
  joints.

Parameters follow codegen.read.model: per frame the Khalil-Dombre standard
parameters m, MX, MY, MZ (first moments m*c) and XX..ZZ (the inertia tensor
about the frame origin, matrix entries: XY is the (0, 1) entry), then Ia (rotor
inertia, Pinocchio's armature), Fv, Fc (friction, not modelled here). Gravity
is g times the model's unit direction.
"""
from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from codegen.read.model import INERTIAL, Model

from .robot import end_effectors, group_key, tick_group

# Rot(u, pi) for u = x, y, z: diagonal sign matrices.
_FLIP = {
    "x": np.diag([1.0, -1.0, -1.0]),
    "y": np.diag([-1.0, 1.0, -1.0]),
    "z": np.diag([-1.0, -1.0, 1.0]),
}
_PERP = {0: "z", 1: "z", 2: "x"}  # a perpendicular axis to flip about, per axis index


def param_dict(model: Model, params) -> dict:
    names = model.param_names
    params = [float(v) for v in params]
    if len(params) != len(names):
        raise ValueError(f"expected {len(names)} parameters, got {len(params)}")
    return dict(zip(names, params))


def numeric_frames(model: Model, params) -> list:
    """Per frame: numbers for rotation, origin, axis, mass, com, inertia about the com."""
    values = param_dict(model, params)
    geo = {s: values[s] for s in model.geometry}
    out = []
    for f in model.frames:
        rot = np.array(f.rotation.tolist(), dtype=float)
        origin = np.array([float(o.subs({s: geo[str(s)] for s in o.free_symbols})) for o in f.origin])
        axis = np.array([float(a) for a in f.axis])
        p = {n: values[f"{n}_{f.key}"] for n in INERTIAL}
        m = p["m"]
        ms = np.array([p["MX"], p["MY"], p["MZ"]])
        j_o = np.array(
            [[p["XX"], p["XY"], p["XZ"]], [p["XY"], p["YY"], p["YZ"]], [p["XZ"], p["YZ"], p["ZZ"]]]
        )
        if m > 0:
            c = ms / m
            i_c = j_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        else:
            c, i_c = np.zeros(3), j_o
        armature = values.get(f"Ia_{f.key}", 0.0) if f.moving else 0.0
        out.append(
            dict(key=f.key, parent=f.parent, joint=f.joint, type=f.type, rotation=rot, origin=origin,
                 axis=axis, mass=m, com=c, inertia=i_c, armature=armature)
        )
    return out


def gravity_vector(model: Model, params) -> np.ndarray:
    g = param_dict(model, params)["g"]
    return g * np.array([float(x) for x in model.gravity])


def _flip_for(frame) -> np.ndarray:
    """The S with F' = F * S that makes this frame's joint axis a positive coordinate axis."""
    axis = frame["axis"]
    if frame["type"] != "revolute" and frame["type"] != "prismatic":
        return np.eye(3)
    k = int(np.argmax(np.abs(axis)))
    if not np.allclose(np.abs(axis), np.eye(3)[k]):
        return np.eye(3)  # not axis-aligned: leave it (Pinocchio makes an unaligned joint)
    if axis[k] > 0:
        return np.eye(3)
    return _FLIP[_PERP[k]]


def _rpy(r: np.ndarray) -> tuple:
    """URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    pitch = math.asin(max(-1.0, min(1.0, -r[2, 0])))
    if abs(r[2, 0]) < 1 - 1e-12:
        roll = math.atan2(r[2, 1], r[2, 2])
        yaw = math.atan2(r[1, 0], r[0, 0])
    else:  # gimbal lock: put everything in yaw
        roll = 0.0
        yaw = math.atan2(-r[0, 1], r[1, 1])
    return roll, pitch, yaw


def _fmt(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def urdf_joint_name(index: int, joint: str) -> str:
    # zero-padded prefix: urdfdom keeps child joints in a name-sorted map, so this
    # keeps Pinocchio's joint order equal to ours. The harness still maps by name.
    return f"j{index:03d}_{joint}"


def urdf_text(model: Model, params) -> str:
    frames = numeric_frames(model, params)
    flips = {"0": np.eye(3)}
    lines = ['<?xml version="1.0"?>', f'<robot name={quoteattr(model.name)}>', '  <link name="link_0"/>']
    for n, f in enumerate(frames):
        s = _flip_for(f)
        flips[f["key"]] = s
        sp = flips[f["parent"]]
        rot = sp.T @ f["rotation"] @ s
        xyz = sp.T @ f["origin"]
        lines.append(f'  <link name="link_{f["key"]}">')
        if f["mass"] != 0 or np.any(f["inertia"] != 0):
            c = s.T @ f["com"]
            i = s.T @ f["inertia"] @ s
            lines += [
                "    <inertial>",
                f'      <origin xyz="{_fmt(c)}" rpy="0 0 0"/>',
                f'      <mass value="{float(f["mass"])!r}"/>',
                f'      <inertia ixx="{float(i[0, 0])!r}" ixy="{float(i[0, 1])!r}" ixz="{float(i[0, 2])!r}" '
                f'iyy="{float(i[1, 1])!r}" iyz="{float(i[1, 2])!r}" izz="{float(i[2, 2])!r}"/>',
                "    </inertial>",
            ]
        lines.append("  </link>")
        if f["type"] == "fixed":
            name = f"fixed_{f['key']}"
            jtype = "fixed"
        else:
            name = urdf_joint_name(n, f["joint"])
            # "revolute", not "continuous": Pinocchio makes continuous joints RevoluteUnbounded
            # (nq = 2, cos/sin), slower and with another q; the limits are never used.
            jtype = f["type"]
        lines.append(f'  <joint name="{name}" type="{jtype}">')
        lines.append(f'    <parent link="link_{f["parent"]}"/>')
        lines.append(f'    <child link="link_{f["key"]}"/>')
        lines.append(f'    <origin xyz="{_fmt(xyz)}" rpy="{_fmt(_rpy(rot))}"/>')
        if f["type"] != "fixed":
            lines.append(f'    <axis xyz="{_fmt(s.T @ f["axis"])}"/>')
            lines.append('    <limit lower="-1e6" upper="1e6" effort="1e6" velocity="1e6"/>')
        lines.append("  </joint>")
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def write_urdf(model: Model, params, path) -> Path:
    path = Path(path)
    path.write_text(urdf_text(model, params))
    return path


def pin_joint_names(model: Model) -> list:
    """URDF joint names of our joints, in our q order."""
    return [urdf_joint_name(n, f.joint) for n, f in enumerate(model.frames) if f.moving]


def ee_frame_name(ee_name: str) -> str:
    """Name of the operational frame added to the Pinocchio model for an end effector."""
    return f"ee_{ee_name}"


def ee_placements(model: Model, params, aligned: bool) -> dict:
    """End-effector name -> (URDF joint name, rotation, translation): its placement in the frame of
    the nearest moving frame at or above it (fixed frames composed on the way up). In the aligned
    URDF model that joint frame is F' = F * S, so the placement is S^T times it."""
    values = param_dict(model, params)
    geo = {s: values[s] for s in model.geometry}
    frames = {f["key"]: (n, f) for n, f in enumerate(numeric_frames(model, params))}
    out = {}
    for ee in end_effectors(model):
        rot = np.eye(3)
        xyz = np.array([float(o.subs({s: geo[str(s)] for s in o.free_symbols})) if hasattr(o, "free_symbols")
                        else float(o) for o in ee.origin])
        key = ee.frame
        while key != "0" and frames[key][1]["type"] == "fixed":
            f = frames[key][1]
            rot, xyz = f["rotation"] @ rot, f["rotation"] @ xyz + f["origin"]
            key = f["parent"]
        if key == "0":
            raise ValueError(f"end effector {ee.name!r} is fixed to the base; the benchmarks need a moving frame")
        n, f = frames[key]
        s = _flip_for(f) if aligned else np.eye(3)
        out[ee.name] = (urdf_joint_name(n, f["joint"]), s.T @ rot, s.T @ xyz)
    return out


def _add_ee_frames(pin, pmodel, model: Model, params, aligned: bool):
    """One OP_FRAME per end effector, named ee_frame_name(name)."""
    for name, (joint, rot, xyz) in ee_placements(model, params, aligned).items():
        jid = pmodel.getJointId(joint)
        pmodel.addFrame(pin.Frame(ee_frame_name(name), jid, pmodel.getFrameId(joint, pin.JOINT),
                                  pin.SE3(rot, xyz), pin.FrameType.OP_FRAME))


def _finish(pin, pmodel, model: Model, params, aligned: bool):
    _add_ee_frames(pin, pmodel, model, params, aligned)
    pmodel.gravity.linear = gravity_vector(model, params)
    frames = [f for f in numeric_frames(model, params) if f["type"] != "fixed"]
    arm = np.zeros(pmodel.nv)
    for name, f in zip(pin_joint_names(model), frames):
        arm[pmodel.joints[pmodel.getJointId(name)].idx_v] = f["armature"]
    pmodel.armature = arm
    return pmodel


def build_aligned(model: Model, params, urdf_path):
    import pinocchio as pin

    write_urdf(model, params, urdf_path)
    return _finish(pin, pin.buildModelFromUrdf(str(urdf_path)), model, params, aligned=True)


def build_unaligned(model: Model, params):
    """The frame table as is: RevoluteUnaligned / PrismaticUnaligned joints, fixed frames merged."""
    import pinocchio as pin

    frames = numeric_frames(model, params)
    pm = pin.Model()
    # where each frame lives: (pin joint id, placement of the frame in that joint)
    at = {"0": (0, pin.SE3.Identity())}
    for n, f in enumerate(frames):
        pj, pplace = at[f["parent"]]
        local = pplace * pin.SE3(f["rotation"], f["origin"])
        inertia = pin.Inertia(f["mass"], f["com"], f["inertia"])
        if f["type"] == "fixed":
            pm.appendBodyToJoint(pj, inertia, local)
            at[f["key"]] = (pj, local)
            continue
        jm = (pin.JointModelRevoluteUnaligned if f["type"] == "revolute" else pin.JointModelPrismaticUnaligned)(
            f["axis"]
        )
        jid = pm.addJoint(pj, jm, local, urdf_joint_name(n, f["joint"]))
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        at[f["key"]] = (jid, pin.SE3.Identity())
    return _finish(pin, pm, model, params, aligned=False)


def q_permutation(pmodel, model: Model) -> np.ndarray:
    """perm[i] = Pinocchio's index of our q[i] (all joints are 1-dof)."""
    return np.array([pmodel.joints[pmodel.getJointId(n)].idx_q for n in pin_joint_names(model)])


_SHORT = {"JointModelRX": "RX", "JointModelRY": "RY", "JointModelRZ": "RZ",
          "JointModelPX": "PX", "JointModelPY": "PY", "JointModelPZ": "PZ",
          "JointModelRevoluteUnaligned": "RU", "JointModelPrismaticUnaligned": "PU",
          # URDF continuous joints: Pinocchio's (cos, sin) configuration; the harness converts our angle
          "JointModelRUBX": "RUBX", "JointModelRUBY": "RUBY", "JointModelRUBZ": "RUBZ",
          # a floating base: the harness reads the free-flyer's 7 configuration entries as ours
          "JointModelFreeFlyer": "FF"}


def harness_model_text(pmodel, model: Model, urdf_path) -> str:
    """bench_pin.cpp's model file for a model built by build_aligned."""
    return pin_harness_text(pmodel, urdf_path, pin_joint_names(model),
                            [(ee.name, ee_frame_name(ee.name)) for ee in end_effectors(model)])


def pin_harness_text(pmodel, urdf_path, order, ees) -> str:
    """The model file bench_pin.cpp reads: Pinocchio's own model (joints in its
    order, placements, merged inertias), gravity, armature, our q order (Pinocchio
    joint names), end effectors ((name, Pinocchio frame name), ...) as a point in
    their parent joint's frame, and the keys of all of them together."""
    lines = [f"urdf {Path(urdf_path).resolve()}", "gravity " + _fmt(pmodel.gravity.linear)]
    for j in range(1, pmodel.njoints):
        short = pmodel.joints[j].shortname()
        if short not in _SHORT:
            raise ValueError(f"joint {pmodel.names[j]}: {short} is not supported by bench_pin.cpp")
        parent = pmodel.parents[j]
        pname = "universe" if parent == 0 else pmodel.names[parent]
        pl = pmodel.jointPlacements[j]
        axis = f" {_fmt(pmodel.joints[j].extract().axis)}" if _SHORT[short] in ("RU", "PU") else ""
        lines.append(f"joint {pmodel.names[j]} {pname} {_SHORT[short]} "
                     f"{_fmt(pl.rotation.reshape(-1))} {_fmt(pl.translation)}{axis}")
    for j in range(1, pmodel.njoints):
        y = pmodel.inertias[j]
        lines.append(f"inertia {pmodel.names[j]} {float(y.mass)!r} {_fmt(y.lever)} {_fmt(y.inertia.reshape(-1))}")
    for j in range(1, pmodel.njoints):
        lines.append(f"armature {pmodel.names[j]} {float(pmodel.armature[pmodel.joints[j].idx_v])!r}")
    lines.append("order " + " ".join(order))
    for name, frame in ees:
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"end effector name {name!r}: the harness model file needs a name without blanks")
        fr = pmodel.frames[pmodel.getFrameId(frame)]
        lines.append(f"ee {name} {pmodel.names[fr.parentJoint]} {_fmt(fr.placement.translation)}")
    names = [name for name, _ in ees]
    lines.append(f"group {group_key(names)} {tick_group(names)}")
    return "\n".join(lines) + "\n"

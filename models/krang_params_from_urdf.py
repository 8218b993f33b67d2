#!/usr/bin/env python3
"""Write models/krang_params.toml (Krang's default parameter values) from the
lab's URDF, converted to the frames and standard parameters of models/krang.toml.

Usage:  python models/krang_params_from_urdf.py [--check]

Without options the parameter file is (re)written; with --check nothing is
written and the exit status is 1 if the file on disk differs from what would
be written. The output is deterministic: all arithmetic is exact (fractions of
the decimal numbers in the URDF, integer rotation matrices) and each value is
printed as repr(float) of the correctly rounded result.

Only the standard library and numpy (for the eigenvalue checks) are used.
"""
from __future__ import annotations

import argparse
import math
import sys
import tomllib
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / "tests" / "data" / "krang_fixed_wheel.urdf"  # the lab's copy, tests/data/README.md
MODEL = REPO / "models" / "krang.toml"
OUTPUT = REPO / "models" / "krang_params.toml"
URDF_ORIGIN = (
    "zubair-irshad/manipulator_parameter_identification, commit e556156, "
    "path 09-URDF/KrangFixedWheels/krang_fixed_wheel.urdf"
)

# Seed frame key -> (URDF link, URDF joint carrying it).
LINKS = {"1": ("Base", "JLWheel"), "2": ("Spine", "JWaist"), "3": ("Bracket", "JTorso")}
for _s, _S in (("l", "L"), ("r", "R")):
    for _i in range(1, 7):
        LINKS[f"{_i + 3}{_s}"] = (f"{_S}{_i}", f"{_S}J{_i}")
    LINKS[f"10{_s}"] = (f"{_s}Gripper", f"{_S}JFT")
BASE_LINK = "Base"  # = seed frame 1 in orientation (checked below)
KINECT = ("Kinect", "JKinect", "3")  # lumped into frame 3
# Kinect inertia about its COM: uniform solid box with the URDF collision-box
# dimensions (x, y, z in the Kinect link frame), see the header.
KINECT_BOX = ("0.28", "0.07", "0.063")
DROPPED = ("lgPlate1", "lgPlate2", "rgPlate1", "rgPlate2")
NOT_IN_MODEL = ("LWheel",)  # the wheels are fixed: not a link of the model
GRAVITY = "9.81"
# The report's lengths (Zafar 2015, section 2.1) as read off the URDF joint origins.
REPORT_LENGTHS = {
    "L1": "0.499", "L2": "0.091", "L3": "0.584", "L4": "0.1088", "L5": "0.0845",
    "L6": "0.2823", "L7": "0.328", "L8": "0.2765", "L9": "0.200",
}
# Offsets of the URDF joint origins that the report drops: seed origin minus
# URDF origin (both in the parent seed frame), per frame key.
DROPPED_OFFSETS = {"2": ("-0.026", "0", "0"), "3": ("0.0285", "0", "0")}

F = Fraction


class ConversionError(RuntimeError):
    pass


# ---------------------------------------------------------------- exact 3x3 algebra
def mat_mul(a, b):
    return [[sum((a[i][k] * b[k][j] for k in range(3)), F(0)) for j in range(3)] for i in range(3)]


def mat_vec(a, v):
    return [sum((a[i][k] * v[k] for k in range(3)), F(0)) for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def eye():
    return [[F(int(i == j)) for j in range(3)] for i in range(3)]


def mat_add(a, b):
    return [[a[i][j] + b[i][j] for j in range(3)] for i in range(3)]


def scale(s, a):
    return [[s * a[i][j] for j in range(3)] for i in range(3)]


def steiner(m, s):
    """m (s^T s I3 - s s^T): inertia of a point mass m at s about the origin."""
    ss = sum((x * x for x in s), F(0))
    return [[m * ((ss if i == j else 0) - s[i] * s[j]) for j in range(3)] for i in range(3)]


def quarter_turns(angle: str, what: str) -> int:
    """The multiple of pi/2 nearest to `angle`; it must be within 0.01 rad."""
    a = float(angle)
    n = round(a / (math.pi / 2))
    if abs(a - n * math.pi / 2) > 0.01:
        raise ConversionError(f"{what}: angle {angle} is not close to a multiple of pi/2")
    return n


def axis_rotation(axis: int, n: int):
    """Exact rotation by n*pi/2 about coordinate axis 0/1/2 (x/y/z)."""
    c, s = ((1, 0), (0, 1), (-1, 0), (0, -1))[n % 4]
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = eye()
    r[i][i], r[i][j], r[j][i], r[j][j] = F(c), F(-s), F(s), F(c)
    return r


def rpy_matrix(rpy: list, what: str):
    """URDF rpy -> R = Rz(yaw) Ry(pitch) Rx(roll), angles rounded to multiples of pi/2."""
    roll, pitch, yaw = (quarter_turns(a, what) for a in rpy)
    return mat_mul(axis_rotation(2, yaw), mat_mul(axis_rotation(1, pitch), axis_rotation(0, roll)))


def check_rotation(r, what):
    if any(x.denominator != 1 for row in r for x in row):
        raise ConversionError(f"{what}: rotation is not an integer matrix")
    if mat_mul(transpose(r), r) != eye():
        raise ConversionError(f"{what}: rotation is not orthogonal")
    if round(np.linalg.det(np.array(r, dtype=float))) != 1:
        raise ConversionError(f"{what}: rotation has det != 1")


# ---------------------------------------------------------------- inputs
def parse_urdf(path: Path):
    root = ET.parse(path).getroot()
    links, joints = {}, {}
    for link in root.findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            links[link.get("name")] = None
            continue
        mass = F(inertial.find("mass").get("value"))
        origin = inertial.find("origin")
        com = [F(x) for x in origin.get("xyz").split()] if origin is not None else [F(0)] * 3
        if origin is not None and origin.get("rpy") not in (None, "0 0 0"):
            raise ConversionError(f"link {link.get('name')}: rotated inertial frames are not handled")
        i = inertial.find("inertia")
        g = {k: F(i.get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        inertia = [
            [g["ixx"], g["ixy"], g["ixz"]],
            [g["ixy"], g["iyy"], g["iyz"]],
            [g["ixz"], g["iyz"], g["izz"]],
        ]
        links[link.get("name")] = (mass, com, inertia)
    for joint in root.findall("joint"):
        origin = joint.find("origin")
        axis = joint.find("axis")
        joints[joint.get("name")] = dict(
            type=joint.get("type"),
            parent=joint.find("parent").get("link"),
            child=joint.find("child").get("link"),
            xyz=[F(x) for x in origin.get("xyz", "0 0 0").split()],
            rpy=origin.get("rpy", "0 0 0").split(),
            axis=[F(x) for x in axis.get("xyz").split()] if axis is not None else None,
        )
    return links, joints


def load_frames(path: Path):
    raw = tomllib.loads(path.read_text())
    frames = {}
    for f in raw["frame"]:
        frames[f["key"]] = dict(
            parent=f["parent"],
            type=f["type"],
            axis=[F(x) for x in f.get("axis", (0, 0, 0))],
            rotation=[[F(x) for x in row] for row in f["rotation"]],
            origin=f["origin"],
        )
    return raw["geometry"], frames


def param_order(geometry, frames):
    """The order of codegen.read.model.Model.param_names (checked by the tests)."""
    names = list(geometry) + ["g"]
    for key, f in frames.items():
        per = ["m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ"]
        if f["type"] != "fixed":
            per += ["Ia", "Fv", "Fc"]
        names += [f"{n}_{key}" for n in per]
    return names


# ---------------------------------------------------------------- physical checks
def inertia_problems(inertia, what) -> list:
    """Positive definiteness and triangle inequalities of a COM inertia."""
    a = np.array(inertia, dtype=float)
    if not np.allclose(a, a.T, rtol=0, atol=0):
        return [f"{what}: not symmetric"]
    e = np.linalg.eigvalsh(a)
    out = []
    if e[0] <= 0:
        out.append(f"{what}: not positive definite (eigenvalues {e})")
    if e[0] + e[1] < e[2] * (1 - 1e-12):
        out.append(f"{what}: principal moments {e} violate the triangle inequality")
    return out


# ---------------------------------------------------------------- conversion
def convert(urdf_path: Path = URDF, model_path: Path = MODEL):
    links, joints = parse_urdf(urdf_path)
    geometry, frames = load_frames(model_path)
    by_child = {j["child"]: (name, j) for name, j in joints.items()}
    notes = []

    # Lengths from the URDF joint origins, checked against the report's values.
    xyz = {name: j["xyz"] for name, j in joints.items()}
    lengths = {
        "L1": xyz["JWaist"][1], "L2": -xyz["JWaist"][2],
        "L3": xyz["JTorso"][1], "L4": xyz["JTorso"][2],
        "L5": xyz["LJ1"][1], "L6": xyz["LJ1"][0],
        "L7": -xyz["LJ3"][1], "L8": -xyz["LJ5"][1], "L9": -xyz["LJFT"][1],
    }
    if list(lengths) != list(geometry):
        raise ConversionError(f"model geometry {geometry} is not L1..L9")
    for name, value in lengths.items():
        if value != F(REPORT_LENGTHS[name]):
            raise ConversionError(f"{name} = {value} in the URDF, the report has {REPORT_LENGTHS[name]}")
    subs = {name: value for name, value in lengths.items()}

    def seed_origin(key):
        out = []
        for text in frames[key]["origin"]:
            text = text.replace(" ", "")
            sign = -1 if text.startswith("-") else 1
            text = text.lstrip("+-")
            out.append(sign * (subs[text] if text in subs else F(text)))
        return out

    # Orientation of every seed frame and every URDF link relative to frame 1 / Base.
    seed_rot = {"1": eye()}
    for key, f in frames.items():
        if key != "1":
            seed_rot[key] = mat_mul(seed_rot[f["parent"]], f["rotation"])
    urdf_rot = {BASE_LINK: eye()}

    def urdf_orientation(link):
        if link not in urdf_rot:
            _, j = by_child[link]
            urdf_rot[link] = mat_mul(urdf_orientation(j["parent"]), rpy_matrix(j["rpy"], link))
        return urdf_rot[link]

    link_of = {key: LINKS[key][0] for key in frames}
    rot = {}
    for key in frames:
        link, jname = LINKS[key]
        if by_child[link][0] != jname:
            raise ConversionError(f"{link} is carried by {by_child[link][0]}, expected {jname}")
        r = mat_mul(transpose(seed_rot[key]), urdf_orientation(link))
        check_rotation(r, f"R_{key}")
        rot[key] = r
        j = joints[jname]
        if key == "1":
            # Frame 1 = Base: the report's q_imu is the body pitch about -x, the
            # URDF's JLWheel the Base about the wheel axis +x; not used here.
            if r != eye():
                raise ConversionError("seed frame 1 and URDF Base differ in orientation")
            continue
        # Same joint: URDF axis mapped into the seed frame = the seed axis.
        if mat_vec(r, j["axis"]) != frames[key]["axis"]:
            raise ConversionError(f"frame {key}: URDF axis {j['axis']} does not map to the seed axis")
        # Same place: seed origin = URDF joint origin in the parent seed frame,
        # except for the offsets the report drops.
        parent = frames[key]["parent"]
        urdf_origin = mat_vec(rot[parent], j["xyz"])
        diff = [a - b for a, b in zip(seed_origin(key), urdf_origin)]
        expected = [F(x) for x in DROPPED_OFFSETS.get(key, ("0", "0", "0"))]
        if diff != expected:
            raise ConversionError(f"frame {key}: seed origin - URDF origin = {diff}, expected {expected}")

    # Source inertias: check every one in the URDF, report the bad ones.
    for name, data in links.items():
        if data is not None:
            notes += inertia_problems(data[2], f"URDF link {name} COM inertia")
    used = set(link_of.values()) | {KINECT[0]} | set(DROPPED) | set(NOT_IN_MODEL)
    unused = {n for n, d in links.items() if d is not None} - used
    if unused:
        raise ConversionError(f"URDF links not accounted for: {sorted(unused)}")

    # Standard parameters per frame.
    params = {}
    for key in frames:
        mass, com, ic = links[link_of[key]]
        r = rot[key]
        s = mat_vec(r, com)
        j = mat_add(mat_mul(mat_mul(r, ic), transpose(r)), steiner(mass, s))
        params[key] = [mass, [mass * x for x in s], j]

    # Kinect: fixed (q_Kinect = 0) to the Bracket; its COM in the Bracket frame,
    # then in frame 3; inertia about its COM = uniform box (see header).
    kname, kjoint, kkey = KINECT
    kmass, kcom, _ = links[kname]
    kj = joints[kjoint]
    if kj["parent"] != link_of[kkey]:
        raise ConversionError("Kinect is not attached to the Bracket")
    kr = mat_mul(rot[kkey], rpy_matrix(kj["rpy"], kjoint))  # frame 3 <- Kinect link
    check_rotation(kr, "R_Kinect")
    ks = [x + y for x, y in zip(mat_vec(rot[kkey], kj["xyz"]), mat_vec(kr, kcom))]
    a, b, c = (F(x) for x in KINECT_BOX)
    kic = [[F(0)] * 3 for _ in range(3)]
    kic[0][0], kic[1][1], kic[2][2] = (kmass * (b * b + c * c) / 12, kmass * (a * a + c * c) / 12,
                                       kmass * (a * a + b * b) / 12)
    kjj = mat_add(mat_mul(mat_mul(kr, kic), transpose(kr)), steiner(kmass, ks))
    m3, ms3, j3 = params[kkey]
    params[kkey] = [m3 + kmass, [x + kmass * y for x, y in zip(ms3, ks)], mat_add(j3, kjj)]

    # Resulting COM inertias must be physically valid.
    for key, (m, ms, j) in params.items():
        s = [x / m for x in ms]
        ic = mat_add(j, scale(F(-1), steiner(m, s)))
        problems = inertia_problems(ic, f"frame {key} COM inertia")
        if problems:
            raise ConversionError("; ".join(problems))

    values = {name: value for name, value in lengths.items()}
    values["g"] = F(GRAVITY)
    for key, (m, ms, j) in params.items():
        values[f"m_{key}"] = m
        for n, v in zip(("MX", "MY", "MZ"), ms):
            values[f"{n}_{key}"] = v
        for n, (i, k) in zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ"),
                             ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
            values[f"{n}_{key}"] = j[i][k]
        if frames[key]["type"] != "fixed":
            for n in ("Ia", "Fv", "Fc"):
                values[f"{n}_{key}"] = F(0)
    order = param_order(geometry, frames)
    if set(order) != set(values):
        raise ConversionError("parameter names do not match the model")
    return dict(values=[(n, values[n]) for n in order], rot=rot, links=links,
                kinect=(kmass, ks), notes=notes, frames=frames)


def fmt(x: Fraction) -> str:
    return repr(float(x) + 0.0)  # + 0.0: no "-0.0"


def matrix_text(r) -> str:
    return "[" + ", ".join("[" + ", ".join(str(int(x)) for x in row) + "]" for row in r) + "]"


def render(result) -> str:
    rot, links = result["rot"], result["links"]
    kmass, ks = result["kinect"]
    total = sum((v for n, v in result["values"] if n.startswith("m_")), F(0))
    plates = sum((links[p][0] for p in DROPPED), F(0))
    non_identity = [f"#   R_{k} = {matrix_text(r)}   ({LINKS[k][0]})" for k, r in rot.items() if r != eye()]
    mapping = ", ".join(f"{LINKS[k][0]}->{k}" for k in rot)
    notes = result["notes"] or ["none"]
    header = f"""\
# Default parameter values of Golem Krang on fixed wheels (models/krang.toml).
# GENERATED by models/krang_params_from_urdf.py from the Golems lab's URDF;
# do not edit by hand: change the script and rerun it (`--check` verifies).
#
# Source: shared/data/krang_fixed_wheel.urdf, i.e. {URDF_ORIGIN}.
# The URDF's own header marks its masses and centres of mass as provisional
# ("TODO: Set the correct masses"); these are defaults, not identified values.
#
# Links -> seed frames: {mapping}.
#
# Lengths: read off the URDF joint origins and equal to the report's values
# (Zafar 2015, section 2.1): L1, L2 = JWaist y, -z; L3, L4 = JTorso y, z;
# L6, L5 = LJ1 x, y (RJ1 = -x, y); L7, L8, L9 = -y of LJ3, LJ5, LJFT. The
# report drops two small x offsets of the URDF: the waist's 0.026 (JWaist)
# and the torso's -0.0285 (JTorso): along frame 1's x (the lateral axis)
# the URDF puts the Spine frame at x = 0.026 and the Bracket frame (and the
# arms on it) at x = 0.026 - 0.0285 = -0.0025, the report's frames 2 and 3
# at x = 0. g = {GRAVITY} m/s^2.
#
# Frames: the URDF link frame of every link is compared with the seed frame
# at q = 0 by composing both chains from frame 1 = Base (identical in
# orientation: checked by the joint origins of JWaist/JTorso/LJ1/RJ1, which
# match the report's origins in frames 1, 2, 3 up to the dropped x offsets).
# URDF rpy -> R = Rz(yaw) Ry(pitch) Rx(roll), each angle rounded to the
# nearest multiple of pi/2 (the URDF writes 3.14 and 3.1416 for pi), which
# gives exact integer matrices. R_k = (1R_k seed)^T (BaseR_link URDF) maps
# link-frame coordinates to seed-frame-k coordinates; each is checked to be
# orthogonal with det 1, and to map the URDF joint axis onto the seed's e_k
# (so q_k is the URDF joint angle for k >= 2; the report's q_imu is not the
# URDF's wheel joint JLWheel). R_k is the identity for every link except
{chr(10).join(non_identity)}
# i.e. the gripper frames are turned by -pi/2 about z (the joint axis).
#
# Standard parameters (Khalil-Dombre, in seed frame k, about its ORIGIN):
# with the URDF link's mass m, COM c and COM inertia I_c (in the link frame,
# I_c = [[ixx,ixy,ixz],[ixy,iyy,iyz],[ixz,iyz,izz]]):
#   S = R_k c,  [MX, MY, MZ] = m S,
#   J = R_k I_c R_k^T + m (S^T S I3 - S S^T),
#   [XX, XY, XZ, YY, YZ, ZZ] = J[0,0], J[0,1], J[0,2], J[1,1], J[1,2], J[2,2].
# Back: S = MS/m, I_c = R_k^T (J - m (S^T S I3 - S S^T)) R_k.
# Choice: each COM is kept relative to its own joint frame (S = R_k c), not
# to the URDF position of that frame: with the dropped waist/torso offsets
# the COMs of the Spine (by -0.026 m) and of the Bracket, Kinect and arms
# (by +0.0025 m) move laterally with their frames instead of staying where
# the URDF puts them.
# Ia, Fv, Fc (rotor inertia, viscous and Coulomb friction) are not in the
# URDF and are written explicitly as 0.0.
#
# Lumping and dropped links:
# - Kinect ({float(kmass)!r} kg, joint JKinect, at q = 0 fixed to the Bracket): lumped
#   into frame 3 at its COM, which is at S = {[float(x) for x in ks]} in
#   frame 3. Its URDF inertia is a copy of the wheel's (ixx = 0.102019, ...),
#   implausible for a 0.7 kg sensor (radius of gyration ~0.36 m for a 0.28 m
#   box), so it is replaced by a uniform solid box of the URDF collision-box
#   size {' x '.join(KINECT_BOX)} m (Kinect link axes) centred at the COM:
#   diag(m(b^2+c^2), m(a^2+c^2), m(a^2+b^2))/12.
# - Gripper plates lgPlate1/2, rgPlate1/2 (0.0001 kg each, {float(plates)!r} kg in
#   all, also carrying a copy of the wheel's inertia): dropped.
# - LWheel (and the commented-out RWheel): not a link of the fixed-wheel model.
#
# Physical validity: every COM inertia written here (URDF links, and frame 3
# with the Kinect) is positive definite and satisfies the triangle
# inequalities (checked by the script). Problems found in the URDF's own
# inertias: {'; '.join(notes)}.
#
# Total mass: {float(total)!r} kg (mapped links + Kinect).
#
# All arithmetic is exact (decimal fractions, integer rotations); numbers are
# repr(float) of the correctly rounded results.

[values]
"""
    body = "".join(f"{n} = {fmt(v)}\n" for n, v in result["values"])
    return header + body


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    args = parser.parse_args(argv)
    if not URDF.exists():
        print(f"URDF not found: {URDF.resolve()}", file=sys.stderr)
        return 2
    text = render(convert())
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(REPO)} is out of date: run python models/krang_params_from_urdf.py",
                  file=sys.stderr)
            return 1
        print(f"{OUTPUT.relative_to(REPO)} is up to date")
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

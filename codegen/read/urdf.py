"""URDF -> Model: a fixed-base tree robot from a URDF file.

`load_urdf(path, name=None, end_effectors=(), snap=True) -> UrdfRobot` with the
model (codegen.read.model.Model), the default parameter vector and `to_toml()`.

Conventions (ROS URDF specification; Pinocchio's URDF parser agrees):
* The tree has exactly one root link, fixed to the world. Links attached to
  it through fixed joints are part of the world (their inertia does not act).
* Free-flying base (codegen/read/records.py, BASE_TYPES): floating_base=True
  (--floating-base) puts a free-flyer named "root_joint" (Pinocchio's name)
  between the world and the root link, which becomes the base body (links
  fixed to it are lumped into it). A root link whose only joint is
  `floating` is a dummy world link: that joint (identity <origin>) is the
  free-flyer and its child the base, with or without the flag (Pinocchio's
  URDF parser makes it a JointModelFreeFlyer). Other floating joints and
  every planar joint are refused, naming the joint; a floating root joint
  beside other joints of the root breaks the model files' rule (the floating
  frame is the first frame and the world's only child: records.check_free_flyer).
* revolute and continuous joints -> Frame type "revolute" with ONE coordinate
  (the angle; Pinocchio uses (cos, sin) for continuous joints), continuous
  joints without position limits; prismatic -> "prismatic"; floating and
  planar joints are refused (naming the joint).
* Mimic joints (a moving joint with <mimic joint multiplier offset>, q =
  multiplier * q_master + offset): the coupling is not modelled. mimic="refuse"
  (the default, UrdfOptions.mimic) raises one ModelError naming them, their
  masters and the option; mimic="independent" reads each as its own coordinate,
  as Pinocchio's buildModelFromUrdf(..., mimic=False) does (UrdfRobot.mimic lists
  them for the summary line; a master that is not a joint of the URDF is a
  warning then). <mimic> on a fixed joint moves nothing: ignored.
* fixed joints: the child link is merged into its moving parent body. One
  Frame per moving joint, key = child link name, joint = URDF joint name
  verbatim, placement = the joint's <origin> composed with the fixed
  placements of the merged links between the moving parent body and the
  joint; axis normalized, in the child frame. rpy -> R = Rz(yaw) Ry(pitch) Rx(roll).
* Coordinate order: Pinocchio's (pin.buildModelFromUrdf(path).names): a
  depth-first walk from the root, the children of a link in order of their
  joint names (urdfdom keeps joints in a std::map, i.e. sorted by name).
* Inertials: the links merged into a body are lumped exactly into the body's
  10 standard parameters (Khalil-Dombre; Featherstone 2008, §2.13 for the
  parallel-axis theorem): about the body frame origin, in body axes,
  m = sum m_i, MS = sum m_i c_i, J = sum (R_i I_i R_i^T + m_i (c_i^T c_i I3 - c_i c_i^T)).
  A link without <inertial> is massless (a warning when it moves, UrdfRobot.warnings;
  so is a joint that moves no mass, which makes A singular: codegen/read/singular.py).
  Defaults: <dynamics damping friction> -> Fv, Fc; rotor inertia Ia = 0; g = 9.81
  along gravity (0, 0, -1).
* Snapping (snap=True; codegen/read/urdf_numbers.py): URDFs write pi/2 as 1.5707963268, so a rotation or
  axis entry within SNAP_TOL = 1e-9 of 0 becomes an exact 0, and an entry
  within SNAP_TOL of +-1 becomes exact when the other entries of its row and
  column (for an axis: the other entries) snap to 0; the zeros then fold away
  in the derivation. Origin entries within ORIGIN_SNAP_TOL = 1e-12 of 0 become
  exact 0. Every other entry is the exact double (53-bit Float). A rotation
  whose snapped form would not be orthonormal to 1e-9 stays unsnapped.
  snap=False keeps every value as computed (exact 0 and +-1 stay exact).
* End effectors: any link, merged or not: EndEffector(name = link name,
  frame = key of the moving body carrying it, placement of the link frame in
  that body frame). A link fixed to the root does not move: refused.
* Names (links, joints) are kept verbatim: 1..64 printable characters, not
  "0". The model name defaults to the robot name made a C identifier
  (other characters -> "_"); `name=` must be a C identifier.
* Checks: the model files' (a URDF is a model file by another route): names,
  numbers and counts (codegen/read/urdf_parse.py; at most MAX_END_EFFECTORS end
  effectors, refused before parsing), every origin within expr.MAX_MAGNITUDE, and
  the lumped bodies' parameters through physical.check_params, as a parameter
  file's (negative or non-triangle inertia, mass 0 with inertia, negative
  damping or friction): whatever loads here reloads from to_toml().
* The model has no geometry symbols: origins are numbers. Its sha256 is that
  of the model TOML that to_toml() writes, so loading it gives the same hash.
"""
from __future__ import annotations

import difflib
import hashlib
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy as sp

from ..support.options import MIMIC_CHOICES
from .physical import about_origin, check_params
from .singular import singular_joints
from .model import ACTUATOR, INERTIAL, MAX_END_EFFECTORS, EndEffector, Frame, Limits, Model, ModelError
from .records import CONTACT_KINDS, MAX_CONTACTS, Contact, check_free_flyer, floating_error, free_flyer_frames
from .urdf_numbers import ORIGIN_SNAP_TOL, SNAP_TOL, axis, origin, rotation, rpy_matrix  # noqa: F401 (re-exported)
from .urdf_parse import MOVING_TYPES, Urdf, check_name, parse_urdf, read_bytes
from .urdf_toml import model_toml, params_toml
from .urdf_warnings import urdf_warnings

GRAVITY = 9.81
MIMIC_DEFAULT = "refuse"  # UrdfOptions.mimic's default
MIMIC_SHOWN = 6  # mimic joints named in one message
# the model files' name rule (codegen/read/model.py): a letter first
_C_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}", re.ASCII)
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while".split())


@dataclass(frozen=True)
class UrdfRobot:
    """A robot read from a URDF: its Model record (fixed links merged into their moving parent),
    the default parameter vector from the URDF's inertials (SI units, model.param_names order),
    the SHA-256 of the URDF file and the warnings for the user (moving links without
    <inertial>, joints that move no mass: codegen/read/urdf_warnings.py)."""
    model: Model
    values: tuple  # default parameter vector, model.param_names order
    source_sha256: str
    warnings: tuple = ()  # one line each: what was read as given but is likely a mistake
    mimic: tuple = ()  # (joint, master) of the mimic joints read as independent coordinates

    def to_toml(self) -> tuple:
        """(model TOML text, parameter TOML text) for codegen.read.model.load_model /
        load_param_values; loading them gives this model and these values."""
        return model_toml(self.model, self.source_sha256), params_toml(self.model, self.values)


def _model_name(name, robot_name: str) -> str:
    if name is not None:
        if not isinstance(name, str) or not _C_IDENT.fullmatch(name) or name in _C_KEYWORDS:
            raise ModelError(f"model name {name!r} must be a C identifier of at most 64 characters "
                             f"and not a C keyword")
        return name
    base = re.sub(r"[^A-Za-z0-9_]", "_", robot_name, flags=re.ASCII)[:64] or "robot"
    if not base[0].isalpha():
        base = ("robot_" + base)[:64]
    if base in _C_KEYWORDS or keyword.iskeyword(base):
        base += "_robot"
    return base


def _tree(urdf: Urdf):
    """(root link, {link: [joints to children, sorted by joint name]}, {link: joint to it})."""
    links = {x.name: x for x in urdf.links}
    parent_joint, children = {}, {n: [] for n in links}
    for j in urdf.joints:
        for end in (j.parent, j.child):
            if end not in links:
                raise ModelError(f"joint {j.name!r}: link {end!r} is not defined")
        if j.child in parent_joint:
            raise ModelError(f"link {j.child!r} has two parents (joints {parent_joint[j.child].name!r} "
                             f"and {j.name!r}): a URDF must be a tree")
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [n for n in links if n not in parent_joint]
    if not links:
        raise ModelError("the URDF has no <link>")
    if not roots:
        raise ModelError("the URDF has no root link (every link has a parent: a cycle)")
    if len(roots) > 1:
        shown = ", ".join(repr(r) for r in roots[:5])
        raise ModelError(f"the URDF has {len(roots)} root links ({shown}): exactly one is needed")
    for js in children.values():
        js.sort(key=lambda j: j.name)
    reached, stack = set(), [roots[0]]
    while stack:
        n = stack.pop()
        reached.add(n)
        stack.extend(j.child for j in children[n])
    if len(reached) != len(links):
        cyc = sorted(set(links) - reached)[:5]
        raise ModelError(f"links {cyc} are not reachable from the root {roots[0]!r}: "
                         f"their joints form a cycle")
    return roots[0], children


def _lump(body, link, R_bl, p_bl):
    """Add link's inertial (placed at (R_bl, p_bl) in the body frame) to body's
    standard parameters [m, MS(3), J(3x3)]."""
    if link.inertial is None:
        return
    ine = link.inertial
    R = R_bl @ rpy_matrix(ine.pose.rpy)
    c = p_bl + R_bl @ np.array(ine.pose.xyz)
    ixx, ixy, ixz, iyy, iyz, izz = ine.inertia
    Ic = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    m = ine.mass
    body[0] += m
    body[1] = body[1] + m * c
    # the parallel-axis term m (c.c 1 - c c^T) added to the running sum
    body[2] = about_origin(m, c, body[2] + R @ Ic @ R.T)


def load_urdf(path, *, name=None, end_effectors=(), snap=True, floating_base=False,
              mimic=MIMIC_DEFAULT, contacts=()) -> UrdfRobot:
    """The robot of the URDF file `path` (see the module docstring)."""
    data = read_bytes(path)
    return urdf_robot(data, name=name, end_effectors=end_effectors, snap=snap, source=repr(Path(path).name),
                      floating_base=floating_base, mimic=mimic, contacts=contacts)


def _mimic_joints(urdf: Urdf, mode: str, source: str) -> tuple:
    """((joint, master) of each moving joint with <mimic>, warnings), or the refusal
    (mode "refuse"): one line naming the joints, their masters and the option."""
    if mode not in MIMIC_CHOICES:
        raise ModelError(f"mimic: one of {', '.join(map(repr, MIMIC_CHOICES))}, not {str(mode)[:80]!r}")
    joints = {j.name for j in urdf.joints}
    mimics = [j for j in urdf.joints if j.mimic is not None and j.type in MOVING_TYPES]
    if not mimics:
        return (), ()
    lost = [j for j in mimics if j.mimic.joint not in joints or j.mimic.joint == j.name]

    def told(j):
        m = j.mimic.joint
        why = ("itself" if m == j.name else f"{m!r}, not a joint of the URDF") if j in lost else repr(m)
        return f"{j.name!r} (mimics {why})"

    shown = ", ".join(told(j) for j in mimics[:MIMIC_SHOWN])
    shown += f" and {len(mimics) - MIMIC_SHOWN} more" if len(mimics) > MIMIC_SHOWN else ""
    if mode == "refuse":
        raise ModelError(
            f"{source}: {len(mimics)} mimic joint(s) {shown}: the coupling q = multiplier * q_master + offset "
            f"is not modelled; pass --mimic independent (import_urdf(..., mimic=\"independent\")) to read each "
            f"as an independent coordinate, as Pinocchio's default buildModelFromUrdf(..., mimic=False) does")
    warns = () if not lost else (
        f"{len(lost)} <mimic> joint(s) name no other joint of the URDF as their master, read as independent "
        f"coordinates anyway: {', '.join(told(j) for j in lost[:MIMIC_SHOWN])}"
        + (f" and {len(lost) - MIMIC_SHOWN} more" if len(lost) > MIMIC_SHOWN else ""),)
    return tuple((j.name, j.mimic.joint) for j in mimics), warns


FREE_FLYER_JOINT = "root_joint"  # the free-flyer's name when --floating-base adds it (Pinocchio's)


def _floating_root(root, children, floating_base):
    """(base body link, free-flyer joint name) or (None, None) for a fixed base.
    A root link whose only joint is `floating` is a dummy world link: its child
    is the base (Pinocchio's URDF parser makes that joint a JointModelFreeFlyer)."""
    js = children[root]
    floating = [j for j in js if j.type == "floating"]
    if floating and len(js) > 1:  # the dummy world link would carry the base and more
        other = next(j for j in js if j is not floating[0])
        raise floating_error(f"joint {floating[0].name!r}",
                             f"the root link {root!r} also carries joint {other.name!r}")
    if len(js) == 1 and js[0].type == "floating":
        j = js[0]
        if any(abs(x) > 0 for x in tuple(j.pose.xyz) + tuple(j.pose.rpy)):
            raise ModelError(f"joint {j.name!r}: a floating root joint must have an identity <origin> "
                             f"(the base pose is q[0:7])")
        return j.child, j.name
    if floating_base:
        return root, FREE_FLYER_JOINT
    return None, None


def _attached(link, what, links, where, snap) -> tuple:
    """(name, moving body, rotation, origin) of an operational frame at URDF link `link`."""
    link = check_name(link, what)
    if link not in links:
        close = difflib.get_close_matches(link, list(links), n=3)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ModelError(f"{what} {link!r}: no such link in the URDF{hint}")
    body, R_bl, p_bl = where[link]
    if body == "0":
        raise ModelError(f"{what} {link!r}: the link does not move (it is fixed to the root)")
    return (link, body, sp.ImmutableMatrix(rotation(R_bl, snap, f"{what} {link!r}")),
            origin(p_bl, snap, f"{what} {link!r}"))


def _given_once(frames: tuple, what: str) -> tuple:
    """`frames` if no two share a name, else ModelError naming the first repeated one."""
    names = [f.name for f in frames]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ModelError(f"{what} {twice!r} is given twice")
    return frames


def urdf_robot(data: bytes, *, name=None, end_effectors=(), snap=True, source="<urdf>",
               floating_base=False, mimic=MIMIC_DEFAULT, contacts=()) -> UrdfRobot:
    """load_urdf on bytes already read; `floating_base`: a free-flyer between
    the world and the root link (codegen/read/records.py, BASE_TYPES); `mimic`:
    "refuse" or "independent" (the module docstring, UrdfOptions.mimic); `contacts`:
    (link, "3d" or "6d") of each frame that can touch (codegen/read/records.py, Contact)."""
    end_effectors = tuple(end_effectors)
    if len(end_effectors) > MAX_END_EFFECTORS:  # before any work (the model files' bound)
        raise ModelError(f"{len(end_effectors)} end effectors (the limit is {MAX_END_EFFECTORS})")
    contacts = tuple(contacts)
    if len(contacts) > MAX_CONTACTS:
        raise ModelError(f"{len(contacts)} contacts (the limit is {MAX_CONTACTS})")
    for c in contacts:
        if not (isinstance(c, tuple) and len(c) == 2 and c[1] in CONTACT_KINDS):
            raise ModelError(f"contact {str(c)[:80]!r}: (link, '3d' or '6d')")
    urdf = parse_urdf(data, source)
    links = {x.name: x for x in urdf.links}
    root, children = _tree(urdf)
    mimics, mimic_warnings = _mimic_joints(urdf, mimic, source)
    model_name = _model_name(name, urdf.name)
    base, ff_joint = _floating_root(root, children, floating_base)
    # where[link] = (key of the moving body carrying it or "0", R, p of the link in that body)
    where = {root: ("0", np.eye(3), np.zeros(3))}
    frames, inertia, actuator = [], {}, {}
    stack = list(reversed(children[root]))
    if base is not None:
        frames += free_flyer_frames(base, ff_joint)
        where[base] = (base, np.eye(3), np.zeros(3))
        inertia[base] = [0.0, np.zeros(3), np.zeros((3, 3))]
        stack = list(reversed(children[base]))
    while stack:  # depth-first preorder, children in joint-name order (Pinocchio's order)
        j = stack.pop()
        stack.extend(reversed(children[j.child]))
        body, R_bl, p_bl = where[j.parent]
        R_j, p_j = rpy_matrix(j.pose.rpy), np.array(j.pose.xyz)
        R, p = R_bl @ R_j, p_bl + R_bl @ p_j
        if j.type == "fixed":
            where[j.child] = (body, R, p)
            continue
        what = f"joint {j.name!r}"
        if j.type in ("floating", "planar"):
            raise ModelError(f"{what}: type {j.type!r} is not supported (revolute, continuous, prismatic, "
                             f"fixed; floating only as the root joint, from a dummy world link)")
        lim = dict(j.limit)
        if j.type == "continuous":
            lim.pop("lower", None)
            lim.pop("upper", None)
        if lim.get("lower") is not None and lim.get("upper") is not None and lim["lower"] > lim["upper"]:
            raise ModelError(f"{what} <limit>: lower {lim['lower']} > upper {lim['upper']}")
        frames.append(Frame(
            key=j.child, parent=body, joint=j.name,
            type="prismatic" if j.type == "prismatic" else "revolute",
            axis=axis(j.axis, snap, what), rotation=rotation(R, snap, what),
            origin=origin(p, snap, what), index=len(frames),
            limits=Limits(**lim) if lim else None))
        where[j.child] = (j.child, np.eye(3), np.zeros(3))
        inertia[j.child] = [0.0, np.zeros(3), np.zeros((3, 3))]
        actuator[j.child] = (0.0, j.damping, j.friction)
    if not frames:  # (a free-flyer alone is a model: one rigid body in free flight)
        raise ModelError("the URDF has no moving joint (revolute, continuous or prismatic)")
    check_free_flyer(frames)  # the model files' rule (built so here: a safety net)
    for link, (body, R_bl, p_bl) in where.items():
        if body != "0":
            _lump(inertia[body], links[link], R_bl, p_bl)
    ees = _given_once(tuple(EndEffector(*_attached(ee, "end effector", links, where, snap)) for ee in end_effectors),
                      "end effector")
    cs = _given_once(tuple(Contact(*_attached(link, "contact", links, where, snap), kind) for link, kind in contacts),
                     "contact")
    values = {"g": GRAVITY}
    for f in frames:
        if f.massless:
            continue
        m, ms, J = inertia[f.key]
        nums = (m, *ms, J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2], *actuator.get(f.key, ()))
        for n, v in zip(INERTIAL + ACTUATOR, nums):
            values[f"{n}_{f.key}"] = float(v)
    gravity = (sp.S.Zero, sp.S.Zero, sp.S.NegativeOne)
    floating = base is not None
    if len(set(f.joint for f in frames if f.moving)) != sum(f.moving for f in frames):
        raise ModelError("two joints have the same name (the free-flyer's velocities are named "
                         f"{ff_joint!r}:vx ... :wz)")
    draft = Model(model_name, tuple(frames), (), gravity, ees, "", floating, cs)
    if len(set(draft.param_names)) != len(draft.param_names):
        raise ModelError("two links give the same parameter name")
    vector = [values[n] for n in draft.param_names]
    # A joint that moves no mass (a link without <inertial> on a revolute joint) makes A
    # singular: read as given and warned about; params_toml lists it so the file reloads.
    singular = singular_joints(draft, draft.param_names, vector)
    try:  # the parameter files' checks (codegen/read/model.py load_param_values), on the lumped bodies
        check_params(draft.param_names, vector, draft, {j.key for j in singular})
    except ValueError as exc:
        raise ModelError(f"{source}: physically impossible parameters: {exc}") from None
    source_sha = hashlib.sha256(data).hexdigest()
    sha = hashlib.sha256(model_toml(draft, source_sha).encode()).hexdigest()
    model = Model(model_name, tuple(frames), (), gravity, ees, sha, floating, cs)
    return UrdfRobot(model, tuple(values[n] for n in model.param_names), source_sha,
                     urdf_warnings(urdf, where, frames, singular) + mimic_warnings, mimics)

"""Read a URDF file into typed records: untrusted data, bounded, never evaluated.

Only what the dynamics needs is read (ROS URDF specification, wiki.ros.org/urdf/XML):
<robot name>, <link name> with <inertial> (<origin xyz rpy>, <mass value>,
<inertia ixx ixy ixz iyy iyz izz>), and <joint name type> with <parent link>,
<child link>, <origin xyz rpy>, <axis xyz>, <limit lower upper velocity effort>,
<dynamics damping friction>, <mimic joint multiplier offset> (what codegen.read.urdf
does with it: UrdfOptions.mimic). Visual/collision geometry, materials,
<calibration>, <safety_controller>, <transmission>, <gazebo> and any other element
are ignored. Defaults follow the specification: origin 0, axis (1, 0, 0), damping
and friction 0, mimic multiplier 1 and offset 0; an absent <limit> attribute is None
(metadata only). A <mimic> needs its joint attribute (a name); whether that joint
exists is the reader's concern.

Every bad input raises one codegen.read.model.ModelError naming the element and the
attribute: XML with a DTD, entities or external references (defusedxml; the
"billion laughs" expansion is refused before it starts), a file larger than
MAX_BYTES or not a regular file, more than MAX_ELEMENTS links or joints, a name
that is empty, longer than MAX_NAME characters or not printable, and any number
that is not a plain decimal float literal (no nan/inf, hex, underscores) of
magnitude <= MAX_MAGNITUDE (joint limits: LIMIT_MAGNITUDE), an XML declaration naming
an encoding the parser cannot read (UTF-7, UTF-32, Shift-JIS...).

The bounds are the model files' (a URDF is a model file by another route,
codegen/read/model.py): names as model_fields.check_name (no surrounding
whitespace), numbers within expr.MAX_MAGNITUDE, at most MAX_ELEMENTS links and
joints (the model's frames and base) and MAX_DOF moving joints, counted before
any element is read.
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as DET
from defusedxml import DefusedXmlException

from . import model_fields
from .files import read_input
from .expr import MAX_MAGNITUDE, parse_numbers
from .model_fields import MAX_NAME, ModelError  # noqa: F401 - MAX_NAME: the model files' bound
from .model import MAX_DOF, MAX_FRAMES

# URDFs carry meshes' and sensors' descriptions the model files do not: a larger file
MAX_BYTES = 10 * 1024 * 1024
# <link> and <joint> elements, each: a model file's frames and its base (the fixed joints
# are merged away, so a loaded URDF has at most MAX_DOF frames)
MAX_ELEMENTS = MAX_FRAMES + 1
LIMIT_MAGNITUDE = 1e300
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
MOVING_TYPES = ("revolute", "continuous", "prismatic")


def _numbers(text, n: int, what: str, bound: float = MAX_MAGNITUDE) -> tuple:
    """n plain float literals (the model files' number rule), finite, |x| <= bound."""
    return parse_numbers(text, n, what, bound)


def check_name(name, what: str) -> str:
    """A URDF name, kept verbatim: the model files' rule (model_fields.check_name:
    1..MAX_NAME printable characters, no surrounding whitespace), and not '0'
    (frame key '0' is the world in our models)."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"{what}: missing or empty name")
    model_fields.check_name(name, f"{what}: name")
    if name == "0":
        raise ModelError(f"{what}: name '0' is reserved for the world frame")
    return name


@dataclass(frozen=True)
class Pose:
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Inertial:
    pose: Pose
    mass: float
    inertia: tuple  # ixx, ixy, ixz, iyy, iyz, izz about the COM, in the inertial frame


@dataclass(frozen=True)
class Link:
    name: str
    inertial: Inertial | None


@dataclass(frozen=True)
class Mimic:
    """<mimic>: q = multiplier * q_joint + offset (ROS URDF specification)."""
    joint: str  # the master joint's name, as written (not checked here)
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    pose: Pose
    axis: tuple
    limit: dict  # lower/upper/velocity/effort -> float, only those given
    damping: float
    friction: float
    mimic: Mimic | None = None


@dataclass(frozen=True)
class Urdf:
    name: str
    links: tuple
    joints: tuple


def read_bytes(path) -> bytes:
    """The URDF file at `path`: files.read_input with the URDF cap (at most MAX_BYTES of a
    regular file; FIFOs, devices, directories refused without blocking on them)."""
    return read_input(path, "URDF", MAX_BYTES)


def _attr(el, key, what):
    v = el.get(key)
    if v is None:
        raise ModelError(f"{what}: missing attribute {key!r}")
    return v


def _pose(el, what) -> Pose:
    o = el.find("origin")
    if o is None:
        return Pose()
    xyz = _numbers(o.get("xyz", "0 0 0"), 3, f"{what} <origin xyz>")
    rpy = _numbers(o.get("rpy", "0 0 0"), 3, f"{what} <origin rpy>")
    return Pose(xyz, rpy)


def _link(el) -> Link:
    name = check_name(el.get("name"), "<link name>")
    what = f"link {name!r}"
    ie = el.find("inertial")
    if ie is None:
        return Link(name, None)
    me, ine = ie.find("mass"), ie.find("inertia")
    if me is None or ine is None:
        raise ModelError(f"{what} <inertial>: needs <mass> and <inertia>")
    (mass,) = _numbers(_attr(me, "value", f"{what} <mass>"), 1, f"{what} <mass value>")
    if mass < 0:
        raise ModelError(f"{what} <mass value>: negative mass {mass!r}")
    inertia = tuple(_numbers(_attr(ine, k, f"{what} <inertia>"), 1, f"{what} <inertia {k}>")[0]
                    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    return Link(name, Inertial(_pose(ie, f"{what} <inertial>"), mass, inertia))


def _joint(el) -> Joint:
    name = check_name(el.get("name"), "<joint name>")
    what = f"joint {name!r}"
    jtype = el.get("type")
    if jtype not in JOINT_TYPES:
        raise ModelError(f"{what}: unknown type {str(jtype)[:80]!r} (URDF types: {', '.join(JOINT_TYPES)})")
    ends = []
    for tag in ("parent", "child"):
        e = el.find(tag)
        if e is None:
            raise ModelError(f"{what}: missing <{tag} link>")
        ends.append(check_name(e.get("link"), f"{what} <{tag} link>"))
    ae = el.find("axis")
    axis = _numbers(ae.get("xyz", "1 0 0"), 3, f"{what} <axis xyz>") if ae is not None else (1.0, 0.0, 0.0)
    limit = {}
    le = el.find("limit")
    if le is not None:
        for k in ("lower", "upper", "velocity", "effort"):
            if le.get(k) is not None:
                # metadata only; URDFs write "no limit" as e.g. -1e16
                limit[k] = _numbers(le.get(k), 1, f"{what} <limit {k}>", LIMIT_MAGNITUDE)[0]
    damping = friction = 0.0
    de = el.find("dynamics")
    if de is not None:
        damping = _numbers(de.get("damping", "0"), 1, f"{what} <dynamics damping>")[0]
        friction = _numbers(de.get("friction", "0"), 1, f"{what} <dynamics friction>")[0]
    return Joint(name, jtype, ends[0], ends[1], _pose(el, what), axis, limit, damping, friction,
                 _mimic(el.find("mimic"), what))


def _mimic(el, what) -> Mimic | None:
    if el is None:
        return None
    master = check_name(el.get("joint"), f"{what} <mimic joint>")
    multiplier = _numbers(el.get("multiplier", "1"), 1, f"{what} <mimic multiplier>")[0]
    offset = _numbers(el.get("offset", "0"), 1, f"{what} <mimic offset>")[0]
    return Mimic(master, multiplier, offset)


def parse_urdf(data: bytes, source: str = "<urdf>") -> Urdf:
    """Typed records from URDF bytes (see the module docstring for the rules)."""
    if len(data) > MAX_BYTES:
        raise ModelError(f"{source}: larger than {MAX_BYTES} bytes")
    try:
        root = DET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise ModelError(f"{source}: refused XML ({type(exc).__name__}: DTDs, entities and "
                         f"external references are not allowed)") from None
    except ParseError as exc:
        raise ModelError(f"{source}: not well-formed XML ({exc})") from None
    except (ValueError, LookupError) as exc:  # expat: "multi-byte encodings are not supported"
        raise ModelError(f"{source}: unreadable XML declaration or encoding ({exc}; "
                         f"a URDF is UTF-8)") from None
    if root.tag != "robot":
        raise ModelError(f"{source}: the root element is <{str(root.tag)[:80]}>, not <robot>")
    name = root.get("name", "")
    if not isinstance(name, str) or len(name) > 256:
        raise ModelError(f"{source}: <robot name> is longer than 256 characters")
    link_els, joint_els = root.findall("link"), root.findall("joint")
    for tag, els in (("link", link_els), ("joint", joint_els)):
        if len(els) > MAX_ELEMENTS:
            raise ModelError(f"{source}: more than {MAX_ELEMENTS} <{tag}> elements")
    moving = sum(e.get("type") in MOVING_TYPES for e in joint_els)
    if moving > MAX_DOF:
        raise ModelError(f"{source}: more than {MAX_DOF} moving joints (the limit is {MAX_DOF}; "
                         f"{moving} here)")
    links = tuple(_link(e) for e in link_els)
    joints = tuple(_joint(e) for e in joint_els)
    for what, names in (("link", [x.name for x in links]), ("joint", [j.name for j in joints])):
        seen = set()
        for n in names:
            if n in seen:
                raise ModelError(f"{source}: two <{what}> elements named {n!r}")
            seen.add(n)
    return Urdf(name, links, joints)

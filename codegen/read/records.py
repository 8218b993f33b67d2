"""The typed records of a robot model: joint limits, frames, operational frames, the model.

A model is a tree of frames (Khalil-Dombre style, as in the Krang report, Zafar 2015,
sections 2.1-2.2 and 5.1). Each frame is a link carried by one joint: revolute,
prismatic or fixed; a free-flying base is six frames (BASE_TYPES below). The
records are built by codegen/read/model.py (model files) and codegen/read/urdf.py
(URDF files), checked there; nothing here knows about files or C.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .expr import ModelError

JOINT_TYPES = ("revolute", "prismatic", "fixed", "floating")
# A free-flying base ("floating" in a model file, a URDF floating root joint or
# --floating-base) is held in Model.frames as six one-DOF frames in a chain from
# the world, with identity placements: three "base_linear" (base x, y, z) then
# three "base_angular" (x, y, z). Their velocities are the quasi-velocities of
# Pinocchio's JointModelFreeFlyer, v = (linear velocity of the base origin,
# angular velocity), both in base axes; their motion subspace is the unit twist
# along the axis, in base axes (Featherstone 2008, sec. 9.3: floating base with
# S = 1). The first five are massless and parameter-free; the sixth is the base
# body (the URDF root link) and carries its inertia. The orientation and
# position (q[0:7]) never enter the chain: codegen/derive/kinematics.py feeds
# them to gravity (in base axes) and the world poses only.
BASE_TYPES = ("base_linear", "base_angular")
BASE_SUFFIXES = ("vx", "vy", "vz", "wx", "wy", "wz")  # velocity names: "<joint>:vx" ...
# Khalil-Dombre standard inertial parameters: first moments MS = m*S and the
# inertia J about the frame origin (Zafar 2015, the Krang report, eq. 11, appendix A).
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")
# Rotor inertia (eq. 18), viscous and Coulomb friction (eq. 17).
ACTUATOR = ("Ia", "Fv", "Fc")


@dataclass(frozen=True)
class Limits:
    """Joint limits (URDF <limit>), metadata only: the kernels never clamp."""
    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None


@dataclass(frozen=True)
class Frame:
    """One link frame of the tree: its parent, the joint that moves it (revolute, prismatic or
    fixed; `axis` a unit vector in this frame), and its placement in the parent at q = 0
    (`rotation` parentR_frame, `origin` parentP_frame in m, symbolic in the geometry names)."""
    key: str
    parent: str
    joint: str | None  # generalized coordinate name; None for a fixed frame
    type: str
    axis: tuple  # unit joint axis e in this frame (exact Integers where 0/+-1, else 53-bit Floats)
    rotation: sp.Matrix  # parentR_frame at q = 0 (same number rule as axis)
    origin: tuple  # parentP_frame, sympy expressions in the geometry symbols
    index: int  # position in the velocity vector v (= in q for a fixed base), -1 for a fixed frame
    limits: Limits | None = None
    massless: bool = False  # one of the five parameter-free frames of a free-flyer (BASE_TYPES)

    @property
    def moving(self) -> bool:
        return self.type != "fixed"

    @property
    def base(self) -> bool:
        """One of the six quasi-velocity frames of a free-flying base."""
        return self.type in BASE_TYPES

    @property
    def angular(self) -> bool:
        """Its motion subspace is a unit rotation (revolute, base angular velocity)."""
        return self.type in ("revolute", "base_angular")

    def param_names(self) -> tuple:
        if self.massless:
            return ()
        names = INERTIAL + (ACTUATOR if self.moving and not self.base else ())
        return tuple(f"{n}_{self.key}" for n in names)


@dataclass(frozen=True)
class EndEffector:
    """An operational frame: rigidly attached to frame `frame` with the
    constant placement (rotation frameR_ee, origin frameP_ee). It carries no
    parameters; its Jacobian is that of its origin."""
    name: str
    frame: str
    rotation: sp.ImmutableMatrix = sp.ImmutableMatrix.eye(3)
    origin: tuple = (sp.S.Zero, sp.S.Zero, sp.S.Zero)

    @property
    def offset(self) -> bool:
        return self.rotation != sp.eye(3) or any(o != 0 for o in self.origin)


CONTACT_KINDS = {"3d": 3, "6d": 6}  # a contact's kind -> its constraint rows
# The run-time mask of active contacts is a C int, bit k for contact k; the dense contact
# system of the kernels (at most 6 MAX_CONTACTS rows) lives on the caller's stack.
MAX_CONTACTS = 16


@dataclass(frozen=True)
class Contact(EndEffector):
    """A frame that can touch the environment (docs/contact-dynamics.md): an operational frame
    with a kind, "3d" (a point: its origin's linear velocity is constrained, the force acts at
    the origin, world axes: Pinocchio's CONTACT_3D, LOCAL_WORLD_ALIGNED) or "6d" (a flat contact:
    its whole twist, force and moment in its own axes: CONTACT_6D, LOCAL)."""
    kind: str = "3d"

    @property
    def rows(self) -> int:
        return CONTACT_KINDS[self.kind]

    @property
    def ref_size(self) -> int:
        """Its reference placement's entries: a point (3), or a pose [R | p] (12)."""
        return 3 if self.kind == "3d" else 12


@dataclass(frozen=True)
class Model:
    """A tree robot as data, fixed to the world or (floating_base) on a free-flyer: frames
    (parents first), geometry names (lengths in m read at run time), the unit gravity direction
    in frame 0 (magnitude: parameter g) and the end effectors. `ndof` (NV), `nq`,
    `param_names`, `ee_names` are derived from them."""
    name: str
    frames: tuple  # parents before children
    geometry: tuple
    gravity: tuple
    end_effectors: tuple  # EndEffector records, in ee index order
    sha256: str
    floating_base: bool = False  # frames[:6] are a free-flyer (BASE_TYPES); q has 7 base entries
    contacts: tuple = ()  # Contact records, in the order of the contact mask's bits

    @property
    def contact_names(self) -> tuple:
        return tuple(c.name for c in self.contacts)

    @property
    def contact_rows(self) -> int:
        """The constraint rows of all contacts (3 per 3d contact, 6 per 6d one)."""
        return sum(c.rows for c in self.contacts)

    @property
    def contact_ref_size(self) -> int:
        """The entries of all contacts' reference placements (Contact.ref_size each)."""
        return sum(c.ref_size for c in self.contacts)

    @property
    def nq(self) -> int:
        """Entries of q: [x, y, z, qx, qy, qz, qw, joints...] on a free-flyer, else NDOF."""
        return self.ndof + (1 if self.floating_base else 0)

    @property
    def q_offset(self) -> int:
        """q index of the coordinate of velocity index i >= 6 (or any i, fixed base) minus i."""
        return self.nq - self.ndof

    @property
    def base_body(self) -> str | None:
        """Key of the base body (the sixth base frame), None for a fixed base."""
        return self.frames[5].key if self.floating_base else None

    @property
    def joints(self) -> tuple:
        return tuple(f for f in self.frames if f.moving)

    @property
    def joint_names(self) -> tuple:
        return tuple(f.joint for f in self.joints)

    @property
    def ndof(self) -> int:
        return len(self.joints)

    @property
    def param_names(self) -> tuple:
        names = list(self.geometry) + ["g"]
        for f in self.frames:
            names += f.param_names()
        return tuple(names)

    def frame(self, key: str) -> Frame:
        for f in self.frames:
            if f.key == key:
                return f
        raise KeyError(key)

    @property
    def ee_names(self) -> tuple:
        return tuple(e.name for e in self.end_effectors)

    def end_effector(self, name: str) -> EndEffector:
        for e in self.end_effectors:
            if e.name == name:
                return e
        raise KeyError(name)

    def actuated(self, frame: Frame) -> bool:
        """The joint has rotor inertia and friction parameters (not the free-flyer)."""
        return frame.moving and not frame.base

    def chain(self, key: str) -> list:
        """Frames from the root to `key` (inclusive)."""
        out = []
        while key != "0":
            f = self.frame(key)
            out.append(f)
            key = f.parent
        return out[::-1]


def free_flyer_frames(key: str, joint: str, first_index: int = 0, parent: str = "0") -> tuple:
    """The six frames of a free-flyer whose base body is link `key` (see
    BASE_TYPES), named after `joint` (velocity names "<joint>:vx" ... "<joint>:wz"),
    hung from `parent` as declared (check_free_flyer refuses any but the world).
    The five massless frames get keys that no model file or URDF name can
    take (a control character), so they never collide and never reach C."""
    eye, zero = sp.ImmutableMatrix.eye(3), (sp.S.Zero,) * 3
    out = []
    for k, suffix in enumerate(BASE_SUFFIXES):
        axis = [0, 0, 0]
        axis[k % 3] = 1
        last = k == len(BASE_SUFFIXES) - 1
        fkey = key if last else f"{key}\x1f{suffix}"
        out.append(Frame(fkey, parent, f"{joint}:{suffix}", BASE_TYPES[k // 3], tuple(sp.Integer(a) for a in axis),
                         eye, zero, first_index + k, None, massless=not last))
        parent = fkey
    return tuple(out)


def floating_error(what: str, why: str) -> ModelError:
    """The error of a free-flyer placed against check_free_flyer's rule, `what` naming it."""
    return ModelError(f"{what}: a floating frame must be the first frame and the world's only child ({why})")


def check_free_flyer(frames) -> None:
    """The placement rule of a free-flying base, the same for model files and URDFs: its six
    frames (BASE_TYPES) come first, hang from the world "0", and nothing else does. The
    kernels take frames[:6] as the base and q[0:7] as its pose; a second child of the world
    would be moved with the base by fk while A and the Jacobians treat it as decoupled.
    Raises ModelError naming the floating frame (its base body) and the frame in the way."""
    base = [i for i, f in enumerate(frames) if f.base]
    if not base:
        return
    bodies = [frames[i].key for i in base if not frames[i].massless]
    body = bodies[0] if bodies else frames[base[0]].key
    if len(bodies) > 1:
        raise floating_error(f"frame {bodies[1]!r}", f"frame {body!r} is floating already")
    if base != list(range(len(BASE_SUFFIXES))):
        raise floating_error(f"frame {body!r}", f"frame {frames[0].key!r} comes before it")
    if frames[0].parent != "0":
        raise floating_error(f"frame {body!r}", f"its parent is {frames[0].parent!r}, not the world '0'")
    for f in frames[len(base):]:
        if f.parent == "0":
            raise floating_error(f"frame {body!r}", f"frame {f.key!r} is a child of the world too")

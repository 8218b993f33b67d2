"""The typed records of a robot model: joint limits, frames, operational frames, the model.

A model is a tree of frames (Khalil-Dombre style, as in the Krang report, Zafar 2015,
sections 2.1-2.2 and 5.1). Each frame is a link carried by one joint: revolute,
prismatic or fixed. The records are built by codegen/read/model.py (model files) and
codegen/read/urdf.py (URDF files), checked there; nothing here knows about files or C.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

JOINT_TYPES = ("revolute", "prismatic", "fixed")
# Khalil-Dombre standard inertial parameters: first moments MS = m*S and the
# inertia J about the frame origin (seed 003 eq. 11, appendix A).
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
    key: str
    parent: str
    joint: str | None  # generalized coordinate name; None for a fixed frame
    type: str
    axis: tuple  # unit joint axis e in this frame (exact Integers where 0/+-1, else 53-bit Floats)
    rotation: sp.Matrix  # parentR_frame at q = 0 (same number rule as axis)
    origin: tuple  # parentP_frame, sympy expressions in the geometry symbols
    index: int  # position in q, -1 for a fixed frame
    limits: Limits | None = None

    @property
    def moving(self) -> bool:
        return self.type != "fixed"

    def param_names(self) -> tuple:
        names = INERTIAL + (ACTUATOR if self.moving else ())
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


@dataclass(frozen=True)
class Model:
    name: str
    frames: tuple  # parents before children
    geometry: tuple
    gravity: tuple
    end_effectors: tuple  # EndEffector records, in ee index order
    sha256: str

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

    def chain(self, key: str) -> list:
        """Frames from the root to `key` (inclusive)."""
        out = []
        while key != "0":
            f = self.frame(key)
            out.append(f)
            key = f.parent
        return out[::-1]

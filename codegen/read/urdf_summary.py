"""What a URDF build did that a user comparing with Pinocchio must know, in one line.

    summary_line(model, values, module, friction, snap, mimic=()) -> str

* NAME and the module name (the C prefix NAME_, module NAME_kernels);
* the end effectors, or that there are none (jacobian/fk then refuse);
* friction: the URDF's <dynamics damping friction> become the default Fv, Fc
  of the joints, so inverse_dynamics = Pinocchio's rnea + Fv dq + Fc sign(dq)
  (Pinocchio's rnea ignores them); --no-friction makes those defaults 0;
* mimic joints read as independent coordinates (--mimic independent; the
  default refuses them, codegen.read.urdf): which, and their masters;
* rotation snapping (codegen.read.urdf, SNAP_TOL): how many rotation, axis
  and origin entries moved, the largest move, and a first-order bound on the
  relative change of the poses it causes: a rotation whose entries move by at
  most d moves by at most 3 d in the 2-norm (the Frobenius norm of a 3x3
  matrix with entries <= d), and a chain of n joints composes n of them, so
  poses change by at most about 3 n d relative (plus the origin moves, which
  are absolute and at most codegen.read.urdf.ORIGIN_SNAP_TOL).
"""
from __future__ import annotations

from dataclasses import dataclass

from .records import ACTUATOR


@dataclass(frozen=True)
class SnapReport:
    moved: int  # entries changed by snapping
    largest: float  # the largest change
    depth: int  # joints on the longest chain

    @property
    def bound(self) -> float:
        return 3 * self.depth * self.largest


def _entries(model) -> list:
    out = []
    for f in model.frames:
        out += [float(x) for x in f.rotation] + [float(x) for x in f.axis] + [float(x) for x in f.origin]
    for e in model.end_effectors:
        out += [float(x) for x in e.rotation] + [float(x) for x in e.origin]
    return out


def _depth(model) -> int:
    parent = {f.key: f.parent for f in model.frames}
    best = 0
    for key in parent:
        n = 0
        while key in parent:
            key, n = parent[key], n + 1
        best = max(best, n)
    return best


def snap_report(snapped, unsnapped) -> SnapReport:
    """Compare the models read with and without snapping (same URDF, same options)."""
    a, b = _entries(snapped), _entries(unsnapped)
    if len(a) != len(b):
        raise ValueError("the snapped and unsnapped models differ in shape")
    moves = [abs(x - y) for x, y in zip(a, b) if x != y]
    return SnapReport(len(moves), max(moves, default=0.0), _depth(snapped))


def friction_joints(model, values) -> list:
    """Joints whose default Fv or Fc is nonzero."""
    index = {n: i for i, n in enumerate(model.param_names)}
    fric = [n for n in ACTUATOR if n != "Ia"]
    return [f.joint for f in model.frames
            if any(values[index[f"{n}_{f.key}"]] != 0 for n in fric if f"{n}_{f.key}" in index)]


def without_friction(model, values) -> tuple:
    """The default parameters with every Fv and Fc made 0."""
    fric = {f"{n}_{f.key}" for f in model.frames for n in ACTUATOR if n != "Ia"}
    return tuple(0.0 if n in fric else v for n, v in zip(model.param_names, values))


MIMIC_SHOWN = 6  # mimic joints named in the line


def summary_line(model, values, module: str, friction: bool, snap: SnapReport | None, mimic=()) -> str:
    """The line; `mimic`: (joint, master) of the mimic joints read as independent coordinates."""
    ees = ", ".join(e.name for e in model.end_effectors) or "none (jacobian, fk unavailable; --end-effector LINK)"
    parts = [f"NAME={module.removesuffix('_kernels')} (module {module})", f"{model.ndof} DOF",
             f"end effectors: {ees}"]
    joints = friction_joints(model, values)
    if not friction:
        parts.append("friction: off (--no-friction; inverse_dynamics matches Pinocchio's rnea)")
    elif joints:
        parts.append(f"friction: from URDF <dynamics> on {len(joints)} joint(s), in inverse_dynamics "
                     "(Pinocchio's rnea has none; --no-friction to drop)")
    else:
        parts.append("friction: none in the URDF")
    if mimic:
        shown = ", ".join(f"{j} (mimics {m})" for j, m in mimic[:MIMIC_SHOWN])
        more = f" and {len(mimic) - MIMIC_SHOWN} more" if len(mimic) > MIMIC_SHOWN else ""
        parts.append(f"mimic joints as independent coordinates (--mimic independent, Pinocchio's mimic=False): "
                     f"{shown}{more}")
    if snap is None:
        parts.append("snapping: off (--no-snap)")
    elif snap.moved == 0:
        parts.append("snapping: no entry moved")
    else:
        parts.append(f"snapping: {snap.moved} entries moved, largest {snap.largest:.1e}, poses within "
                     f"~{snap.bound:.0e} relative of the URDF's numbers (--no-snap to keep them)")
    return "; ".join(parts)

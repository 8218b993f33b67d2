"""What a URDF says that is read as written but is likely a mistake: one line each.

* Links without <inertial> that move (attached by a moving joint or the free-flyer, or
  fixed to a moving body and carrying a moving joint) are read as massless: right for a
  dummy link between two joints, a silent error for a forgotten inertial. Frames at a
  tip (tool0, sensors) and links fixed to the world carry nothing that moves: no warning.
* Joints that move no mass or inertia (codegen/read/singular.py): the mass matrix A is
  singular and forward dynamics undefined. A URDF is read as it is (Pinocchio reads it
  so too); a parameter file must accept them by name (accept_singular).
"""
from __future__ import annotations

from .singular import describe
from .urdf_parse import Urdf


def _names(names, most=8) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def urdf_warnings(urdf: Urdf, where: dict, frames, singular) -> tuple:
    """The warnings of a URDF read (codegen.read.urdf.urdf_robot): `where` maps each link
    to (key of the moving body carrying it or "0", its placement), `frames` are the model's,
    `singular` its joints that move no mass (codegen.read.singular.singular_joints)."""
    moving = {f.key for f in frames if not f.massless}  # links attached by a moving joint
    parent = {j.child: j.parent for j in urdf.joints}
    carries = set()  # links with a moving joint below them
    for key in moving:
        link = parent.get(key)
        while link is not None and link not in carries:
            carries.add(link)
            link = parent.get(link)
    bare = [x.name for x in urdf.links if x.inertial is None and where[x.name][0] != "0"
            and (x.name in moving or x.name in carries)]
    out = []
    if bare:
        out.append(f"{len(bare)} moving link(s) without <inertial>, read as massless: {_names(bare)} "
                   f"(give them an <inertial> if they carry mass)")
    if singular:
        more = f" ({len(singular) - 1} more: {_names([j.joint for j in singular[1:]])})" if len(singular) > 1 else ""
        out.append(f"forward dynamics is undefined with the URDF's inertials: {describe(singular[0])}{more}")
    return tuple(out)

"""Physical validity of a parameter vector with the model: the runtime's
per-link checks (krang_kernels.physical: masses, inertias, rotor inertia,
friction; re-exported here) and what no single link shows, a moving joint
whose subtree (the link it moves and every link that link carries) has no
mass, or, for a rotation, no inertia about the joint axis, and no rotor
inertia: the joint's diagonal entry of the mass matrix A is then 0 and A is
singular (forward dynamics returns NaN). The inertia is that of the composite
body at q = 0, from the frames' placements (codegen/read/singular.py).
"""
from __future__ import annotations

from typing import Sequence

from krang_kernels.physical import (INERTIAL, NONNEGATIVE, TOL, about_origin, check_link,  # noqa: F401 - re-exported
                                    is_physical, standard_params)
from krang_kernels.physical import check_params as check_links


def check_params(param_names: Sequence[str], values, model=None, accepted=()) -> None:
    """Raise ValueError naming the link and the fault if `values` (in
    `param_names` order) is not physically valid; return None if it is.
    With `model` (a codegen.read.records.Model whose param_names these are),
    also refuse a joint that moves no mass or inertia, a singular A
    (codegen/read/singular.py), unless its frame key is in `accepted`."""
    check_links(param_names, values)
    if model is not None:
        import numpy as np

        from .singular import describe, singular_joints  # the tree's check (SymPy records)

        for joint in singular_joints(model, list(param_names), np.asarray(values, dtype=float).reshape(-1)):
            if joint.key not in accepted:
                raise ValueError(describe(joint))


__all__ = ["check_params", "check_link", "is_physical", "about_origin", "standard_params", "TOL"]

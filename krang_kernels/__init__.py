"""krang_kernels: compiled dynamics of Golem Krang on fixed wheels (17 DOF).

    Gamma = A(q) ddq + C(q, dq) dq + Q(q) + friction(dq)

All kernels read the robot's parameters at run time from a float64 vector in
PARAM_NAMES order (default: the lab's URDF values, see models/krang_params.toml),
so identified parameters can be swapped in without regenerating code.

>>> import numpy as np, krang_kernels as kk
>>> q = np.zeros(kk.N_DOF)
>>> A = kk.compute_A(q)
>>> A.shape, bool(np.allclose(A, A.T))
((17, 17), True)
"""
from __future__ import annotations

import numpy as np

from ._kernels import (
    JOINT_NAMES,
    N_DOF,
    N_PARAMS,
    PARAM_NAMES,
    compute_A,
    compute_all,
    compute_C,
    compute_Q,
    default_params,
    friction,
    jacobian,
)

__version__ = "0.1.0"
__all__ = [
    "N_DOF", "N_PARAMS", "JOINT_NAMES", "PARAM_NAMES", "default_params", "params_from_dict",
    "compute_A", "compute_C", "compute_Q", "jacobian", "friction", "compute_all",
]

_INDEX = {name: i for i, name in enumerate(PARAM_NAMES)}


def params_from_dict(values, base=None):
    """A parameter vector with `values` (name -> number) set on top of `base`
    (default: default_params()). An unknown name raises KeyError naming it."""
    p = default_params() if base is None else np.array(base, dtype=np.float64, copy=True)
    if p.shape != (N_PARAMS,):
        raise ValueError(f"base must have shape ({N_PARAMS},), got {p.shape}")
    for name, value in dict(values).items():
        if name not in _INDEX:
            raise KeyError(f"unknown parameter {name!r} (see krang_kernels.PARAM_NAMES)")
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"parameter {name} = {value} is not finite")
        p[_INDEX[name]] = value
    return p


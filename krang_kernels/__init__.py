"""krang_kernels: compiled dynamics of Golem Krang on fixed wheels (17 DOF).

    Gamma = A(q) ddq + C(q, dq) dq + Q(q) + friction(dq)

All kernels read the robot's parameters at run time from a float64 vector in
PARAM_NAMES order (default: the lab's URDF values, see models/krang_params.toml),
so identified parameters can be swapped in without regenerating code.

The module krang_kernels._kernels is generated (`make generate`) from the same
template as the module of any other robot (`python -m codegen ... --python`);
this file only re-exports it.

>>> import numpy as np, krang_kernels as kk
>>> q = np.zeros(kk.N_DOF)
>>> A = kk.compute_A(q)
>>> A.shape, bool(np.allclose(A, A.T))
((17, 17), True)
>>> kk.END_EFFECTORS
('left', 'right')
"""
from __future__ import annotations

from ._kernels import *  # noqa: F403
from ._kernels import __all__

__version__ = "0.1.0"

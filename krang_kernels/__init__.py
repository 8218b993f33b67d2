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

from pathlib import Path

from codegen import __version__  # the one version of the distribution
from ._kernels import *  # noqa: F403
from ._kernels import __all__

_HERE = Path(__file__).resolve().parent
# Installed from a wheel, the C library ships inside the package (setup.py
# copies it); in a checkout or an editable install it is generated/.
_C_DIRS = (_HERE / "include", _HERE / "src", _HERE.parent / "generated")


def _find(filename: str) -> Path:
    for d in _C_DIRS:
        if (d / filename).is_file():
            return d / filename
    raise FileNotFoundError(f"{filename} not found in {', '.join(map(str, _C_DIRS))}")


def get_include() -> str:
    """The directory holding krang_kernels.h, for C and C++ compilers
    (`cc -I "$(python -c 'import krang_kernels; print(krang_kernels.get_include())')"`)."""
    return str(_find("krang_kernels.h").parent)


def get_sources() -> list[str]:
    """The C sources of the kernels (C99, link with -lm): compile them into a
    C or C++ program next to get_include()'s header."""
    return [str(_find("krang_kernels.c"))]

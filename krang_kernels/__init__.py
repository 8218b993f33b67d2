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
>>> kk.fk(q, "left").shape, kk.jdot_qdot(q, q, "right").shape
((4, 4), (6,))
>>> qs = np.zeros((5, kk.N_DOF))     # a batch of 5 states: a C loop, the GIL released
>>> kk.inverse_dynamics(qs, qs, qs).shape
(5, 17)
"""
from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from ._kernels import *  # noqa: F403
from ._kernels import __all__  # noqa: F401  (the package's public names are the module's)

_HERE = Path(__file__).resolve().parent


def _version() -> str:
    """The distribution's version, defined once in codegen/__init__.py, read without
    importing codegen (the runtime needs numpy only, and importing codegen would set
    its SymPy environment variable): the text of the codegen/__init__.py that ships
    next to this package (a checkout, an editable install and a wheel all have it, so
    it is never stale), else the installed distribution's metadata."""
    try:
        text = (_HERE.parent / "codegen" / "__init__.py").read_text(encoding="utf-8")
        found = re.search(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", text, re.M)
        if found:
            return found.group(1)
    except OSError:
        pass
    try:
        return importlib.metadata.version("krang-kernels")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()  # the one version of the distribution (codegen/__init__.py)
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

"""Physical validity of a parameter vector: masses, inertias, rotor inertias
and friction that a real body could have (pure numpy, nothing of the
generator: the Python modules' check_params at run time, and the generator's
codegen.read.physical, which adds the model's tree check).

Per link k the 10 standard inertial parameters (Khalil-Dombre; Krang report
(Zafar 2015), eq. 11 and appendix A) are the mass m, the first moments
MS = (MX, MY, MZ) = m S (S: centre of mass in the frame) and the inertia
matrix about the frame origin
    J = [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]
(XY is the matrix entry, i.e. minus the product integral). By the parallel
axis theorem J = I_c + m (S^T S 1 - S S^T), so the inertia about the centre
of mass is
    I_c = J - (|MS|^2 1 - MS MS^T) / m.
A real body has m >= 0 and I_c positive semidefinite with principal moments
that satisfy the triangle inequalities (I1 + I2 >= I3 for every ordering;
Wensing, Kim and Slotine 2017, "Linear matrix inequalities for physically
consistent inertial parameter identification"). A massless link (m = 0) must have MS = 0 and J = 0: the whole link
is zero, which is legal (a frame that carries nothing). Rotor inertia Ia
(eq. 18) and the friction coefficients Fv, Fc (eq. 17) must be >= 0.

Tolerance: the tests on I_c are relative, TOL times the trace of J (the
scale of the link's inertia), so parameters rounded to print precision pass.

What no single link shows (a joint that moves no mass: a singular A) needs
the model's tree: codegen.read.physical.check_params with the model.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")
NONNEGATIVE = ("Ia", "Fv", "Fc")
TOL = 1e-9


def _links(param_names: Sequence[str]) -> dict:
    """frame key -> {parameter: index}, for every key that has all 10 inertials."""
    by_key: dict = {}
    for i, name in enumerate(param_names):
        prefix, sep, key = str(name).partition("_")
        if sep and (prefix in INERTIAL or prefix in NONNEGATIVE):
            by_key.setdefault(key, {})[prefix] = i
    return {k: v for k, v in by_key.items() if all(n in v for n in INERTIAL)}


def check_link(key: str, m, ms, J) -> None:
    """One link's inertial parameters (see the module docstring)."""
    where = f"link {key!r}"
    if not m >= 0:
        raise ValueError(f"{where}: mass m_{key} = {m!r} is negative")
    if m == 0:
        if np.any(ms != 0) or np.any(J != 0):
            raise ValueError(f"{where}: mass is 0 but the first moments or the inertia are not "
                             f"(a massless link must have all 10 inertial parameters 0)")
        return
    Ic = J - (ms @ ms * np.eye(3) - np.outer(ms, ms)) / m
    scale = max(float(np.trace(J)), 0.0)
    tol = TOL * scale
    lam = np.linalg.eigvalsh((Ic + Ic.T) / 2)
    if lam[0] < -tol:
        raise ValueError(f"{where}: the inertia about the centre of mass is not positive semidefinite "
                         f"(smallest principal moment {lam[0]:.6g}; I_c = J - m (S^T S 1 - S S^T), "
                         f"tolerance {tol:.3g})")
    if lam[0] + lam[1] < lam[2] - tol:
        raise ValueError(f"{where}: the principal moments of inertia about the centre of mass "
                         f"{lam[0]:.6g}, {lam[1]:.6g}, {lam[2]:.6g} violate the triangle inequality "
                         f"(I1 + I2 >= I3; tolerance {tol:.3g})")


def check_params(param_names: Sequence[str], values) -> None:
    """Raise ValueError naming the link and the fault if `values` (in
    `param_names` order) is not physically valid; return None if it is."""
    names = list(param_names)
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.shape[0] != len(names):
        raise ValueError(f"expected {len(names)} parameter values, got {v.shape[0]}")
    bad = [names[i] for i in np.flatnonzero(~np.isfinite(v))]
    if bad:
        raise ValueError(f"parameter {bad[0]} = {v[names.index(bad[0])]!r} is not finite")
    for key, idx in _links(names).items():
        get = {n: v[i] for n, i in idx.items()}
        for n in NONNEGATIVE:
            if n in get and not get[n] >= 0:
                what = {"Ia": "rotor inertia", "Fv": "viscous friction", "Fc": "Coulomb friction"}[n]
                raise ValueError(f"link {key!r}: {what} {n}_{key} = {get[n]!r} is negative")
        ms = np.array([get["MX"], get["MY"], get["MZ"]])
        J = np.array([[get["XX"], get["XY"], get["XZ"]],
                      [get["XY"], get["YY"], get["YZ"]],
                      [get["XZ"], get["YZ"], get["ZZ"]]])
        check_link(key, float(get["m"]), ms, J)


def about_origin(m, c, Ic):
    """Inertia about the frame origin of a body of mass m, centre of mass c
    and inertia Ic about c (same axes): J = Ic + m (c.c 1 - c c^T), the
    parallel-axis theorem (Featherstone 2008, eq. 2.63)."""
    c = np.asarray(c, dtype=float)
    return np.asarray(Ic, dtype=float) + m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def standard_params(mass, com, inertia_at_com) -> tuple:
    """The 10 standard parameters (INERTIAL order: m, MX, MY, MZ, XX, XY, XZ,
    YY, YZ, ZZ) of a body from its mass, centre of mass (3) and inertia about
    the centre of mass (3 x 3, symmetric), all in the link frame: MS = m c,
    J = about_origin(m, c, I_c). Shapes, finiteness and symmetry are checked
    (ValueError); physical validity is check_link's job."""
    try:
        m = float(mass)
        c = np.array(com, dtype=float)
        Ic = np.array(inertia_at_com, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"mass, com and inertia_at_com must be real numbers: {exc}") from None
    if c.shape != (3,):
        raise ValueError(f"com must have shape (3,), got {c.shape}")
    if Ic.shape != (3, 3):
        raise ValueError(f"inertia_at_com must have shape (3, 3), got {Ic.shape}")
    if not (np.isfinite(m) and np.isfinite(c).all() and np.isfinite(Ic).all()):
        raise ValueError("mass, com and inertia_at_com must be finite")
    if not np.allclose(Ic, Ic.T, rtol=1e-12, atol=0.0):
        raise ValueError("inertia_at_com must be symmetric")
    J = about_origin(m, c, (Ic + Ic.T) / 2)
    ms = m * c
    return (m, float(ms[0]), float(ms[1]), float(ms[2]),
            float(J[0, 0]), float(J[0, 1]), float(J[0, 2]), float(J[1, 1]), float(J[1, 2]), float(J[2, 2]))


def is_physical(param_names: Sequence[str], values) -> bool:
    try:
        check_params(param_names, values)
    except ValueError:
        return False
    return True


__all__ = ["check_params", "check_link", "is_physical", "about_origin", "standard_params", "TOL"]

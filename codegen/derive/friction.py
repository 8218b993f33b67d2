"""Joint friction, Zafar 2015 (the Krang report) eq. 17:  Gamma_f = diag(dq) Fv + diag(sign(dq)) Fc."""
from __future__ import annotations

import sympy as sp

from .symbols import Symbols


def friction(syms: Symbols) -> sp.Matrix:
    rows = []
    for f, dq in zip(syms.model.joints, syms.dq):
        if not syms.model.actuated(f):  # the free-flyer has no friction
            rows.append(sp.S.Zero)
            continue
        rows.append(syms.p(f"Fv_{f.key}") * dq + syms.p(f"Fc_{f.key}") * sp.sign(dq))
    return sp.Matrix(rows)

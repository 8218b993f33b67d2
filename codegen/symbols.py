"""The symbols of a model: joint positions and velocities, sin/cos of the
revolute joints, and the parameter vector (read at run time, never baked)."""
from __future__ import annotations

import sympy as sp

from .model import Model


def _sym(name):
    return sp.Symbol(name, real=True)


class Symbols:
    def __init__(self, model: Model):
        self.model = model
        self.q = [_sym(j) for j in model.joint_names]
        self.dq = [_sym(f"d{j}") for j in model.joint_names]
        # inputs of inverse and forward dynamics (codegen/rnea.py, forward_dynamics.py);
        # a leading underscore is reserved in model names, so these cannot clash
        self.ddq = [_sym(f"_ddq{i}") for i in range(model.ndof)]
        self.tau = [_sym(f"_tau{i}") for i in range(model.ndof)]
        # sin/cos as plain symbols: the recursive derivation never
        # differentiates, and the C code computes each once.
        self.s = [_sym(f"s_{j}") for j in model.joint_names]
        self.c = [_sym(f"c_{j}") for j in model.joint_names]
        self.params = {n: _sym(n) for n in model.param_names}

    def p(self, name):
        return self.params[name]

    def inertia(self, frame):
        """(mass, MS, J) of a frame's link, Khalil-Dombre standard parameters."""
        k = frame.key
        P = lambda n: self.params[f"{n}_{k}"]  # noqa: E731
        J = sp.Matrix(
            [[P("XX"), P("XY"), P("XZ")], [P("XY"), P("YY"), P("YZ")], [P("XZ"), P("YZ"), P("ZZ")]]
        )
        return (P("m"), [P("MX"), P("MY"), P("MZ")], J)

    def gravity(self):
        g = self.params["g"]
        return [g * x for x in self.model.gravity]

    def origin(self, frame):
        """parentP_frame at q = 0 in terms of the parameter symbols."""
        sub = {sp.Symbol(n, real=True): self.params[n] for n in self.model.geometry}
        return [sp.sympify(o).xreplace(sub) for o in frame.origin]

    def trig_to_functions(self):
        """Map s_j, c_j to sin(q_j), cos(q_j) (for closed forms)."""
        out = {}
        for q, s, c in zip(self.q, self.s, self.c):
            out[s] = sp.sin(q)
            out[c] = sp.cos(q)
        return out

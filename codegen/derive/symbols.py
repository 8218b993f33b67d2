"""The symbols of a model: joint positions and velocities, sin/cos of the
revolute joints, and the parameter vector (read at run time, never baked).

Each symbol carries a (kind, index) tag in its name, so symbols are distinct
by construction whatever the model names: joints "x" and "dx", or "q1" and
"s_q1", give different symbols for every position, velocity, sine and
parameter. `cnames` maps each to its C local (codegen.emit.cnames: a kind prefix
and a per-kind unique fragment of the model name)."""
from __future__ import annotations

from collections import Counter

import sympy as sp

from ..read.model import Model, ModelError


def _sym(name):
    return sp.Symbol(name, real=True)


class Symbols:
    def __init__(self, model: Model):
        self.model = model
        # Two quantities sharing a name would share a symbol (and an entry of p): refuse, never merge.
        for names, what in ((model.joint_names, "joint"), (model.param_names, "parameter")):
            dupes = [n for n, k in Counter(names).items() if k > 1]
            if dupes:
                raise ModelError(f"{what} names must be unique: {dupes[0]!r} occurs more than once")
        self.tags = {}  # Symbol -> (kind, index): which C local holds it

        def make(kind, index, name):
            # Unique by construction: the (kind, index) tag. The readable
            # part comes first and the tag after a space (below every
            # printable character), so that symbols sort, and hence CSE and
            # the printed term order come out, as with plain names.
            sym = _sym(f"{name} #{kind}{index}")
            self.tags[sym] = (kind, index)
            return sym

        joints = model.joint_names
        self.q = [make("q", i, j) for i, j in enumerate(joints)]
        self.dq = [make("dq", i, f"d{j}") for i, j in enumerate(joints)]
        # inputs of inverse and forward dynamics (codegen/derive/rnea.py, forward_dynamics.py)
        self.ddq = [make("ddq", i, f"_ddq{i}") for i in range(len(joints))]
        self.tau = [make("tau", i, f"_tau{i}") for i in range(len(joints))]
        # sin/cos as plain symbols: the recursive derivation never
        # differentiates, and the C code computes each once.
        self.s = [make("s", i, f"s_{j}") for i, j in enumerate(joints)]
        self.c = [make("c", i, f"c_{j}") for i, j in enumerate(joints)]
        self.params = {n: make("p", k, n) for k, n in enumerate(model.param_names)}

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

"""A straight-line program of intermediate variables (customized symbolic).

The recursive derivations build the model link by link; every non-trivial
quantity (a rotated inertia entry, a velocity component, ...) becomes a named
intermediate variable instead of growing into one huge expression. This is
Khalil and Dombre's "customized symbolic" technique: zeros and +-1 of the
model's rotations fold away automatically, identical expressions are stored
once, and the expression size stays linear in the number of links.
"""
from __future__ import annotations

import sympy as sp


def is_trivial(expr) -> bool:
    """Atoms and negated atoms cost nothing to use again."""
    if expr.is_Atom:
        return True
    if expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1 and expr.args[1].is_Atom:
        return True
    return False


class Program:
    """Ordered assignments `symbol = expr` whose right sides use earlier symbols."""

    def __init__(self, prefix: str = "t"):
        self.prefix = prefix
        self.assignments: list[tuple[sp.Symbol, sp.Expr]] = []
        self._by_expr: dict = {}
        self._definition: dict = {}

    def var(self, expr):
        """Return a symbol (or trivial expression) standing for `expr`."""
        expr = sp.sympify(expr)
        if is_trivial(expr):
            return expr
        hit = self._by_expr.get(expr)
        if hit is not None:
            return hit
        hit = self._by_expr.get(-expr)
        if hit is not None:
            return -hit
        sym = sp.Symbol(f"{self.prefix}{len(self.assignments)}", real=True)
        self.assignments.append((sym, expr))
        self._by_expr[expr] = sym
        self._definition[sym] = expr
        return sym

    def vec(self, items):
        return [self.var(x) for x in items]

    def mat(self, m):
        return sp.Matrix(m.rows, m.cols, [self.var(x) for x in m])

    def needed(self, outputs) -> list:
        """Assignments the outputs depend on, in program order (dead code removed)."""
        live = set()
        stack = [s for e in outputs for s in sp.sympify(e).free_symbols]
        while stack:
            s = stack.pop()
            if s in live or s not in self._definition:
                continue
            live.add(s)
            stack.extend(self._definition[s].free_symbols)
        return [(s, e) for s, e in self.assignments if s in live]

    def inline(self, expr):
        """Substitute every intermediate back: the closed form (small models only)."""
        expr = sp.sympify(expr)
        cache: dict = {}

        def expand(sym):
            if sym not in cache:
                rhs = self._definition[sym]
                cache[sym] = rhs.xreplace({s: expand(s) for s in rhs.free_symbols if s in self._definition})
            return cache[sym]

        return expr.xreplace({s: expand(s) for s in expr.free_symbols if s in self._definition})

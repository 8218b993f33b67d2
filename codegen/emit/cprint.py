"""C99 printing of the emitted statements: SymPy expressions as plain C
(KernelPrinter, ccode: double literals, multiplications for small powers, a
branch-free sign, only <math.h> functions). Unknown symbols or functions
are a ModelError: a model's names never reach the C unchecked
(codegen/emit/cnames.py). The operation counts: codegen/emit/op_count.py."""
from __future__ import annotations

import math
import re

import sympy as sp
from sympy.printing.c import C99CodePrinter

from .cnames import GENERATED_PATTERN
from ..read.model import ModelError

# SymPy function -> C99 <math.h> function: everything the model language
# and the derivation can produce (sign has its own branch-free printer).
FUNCTIONS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log",
    "Abs": "fabs", "floor": "floor", "ceiling": "ceil", "Min": "fmin", "Max": "fmax",
}
# Expression classes the printer accepts; anything else is a ModelError.
_STRUCTURE = (sp.Add, sp.Mul, sp.Pow, sp.Symbol, sp.sign)
# Array elements the kernels read (right sides of the input reads).
ELEMENT = re.compile(r"(q|dq|ddq|tau|fext|lambda_c|v|a|p|pl|sq|cq|vin|pose|o[a-z]*[0-9]+)\[[0-9]+\]")


def c_double(value) -> str:
    """A double literal that reads back as exactly `value` (shortest repr)."""
    v = float(value)
    if not math.isfinite(v):
        raise ModelError(f"constant {value} is not a finite double")
    return repr(v)


class KernelPrinter(C99CodePrinter):
    """Plain C99 with multiplications instead of pow() for small powers and
    a branch-free sign(). Every constant is a double literal of the nearest
    double (pi -> 3.141592653589793, sqrt(2), Catalan, 10**20 -> 1e+20): no
    M_PI-style macros, which are not C99, and no integer literal that could
    overflow. Symbols print through `names` (Symbol -> C identifier);
    unknown symbols, functions or expression types raise ModelError."""

    def __init__(self, names=None, settings=None):
        super().__init__(settings or {})
        self.names = names or {}

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Basic) and not isinstance(expr, (sp.Symbol, sp.Integer, sp.Rational, sp.Float)):
            if expr.is_number:
                return self._print_constant(expr)
            if not isinstance(expr, _STRUCTURE) and type(expr).__name__ not in FUNCTIONS:
                raise ModelError(f"cannot print {type(expr).__name__} in C (in {str(expr)[:80]}): "
                                 f"supported functions are {', '.join(sorted(FUNCTIONS))}, sign")
        return super()._print(expr, **kwargs)

    def _print_constant(self, expr):
        value = expr.evalf(30)
        if not value.is_Float:
            raise ModelError(f"constant {str(expr)[:80]} is not a finite real number")
        return c_double(value)

    def _print_Integer(self, expr):
        return c_double(int(expr)) if abs(expr) < 2**1030 else c_double(math.inf)

    def _print_Rational(self, expr):
        return c_double(expr)

    def _print_Float(self, expr):
        return c_double(expr)

    def _print_Symbol(self, expr):
        name = self.names.get(expr)
        if name is None and (GENERATED_PATTERN.fullmatch(expr.name) or ELEMENT.fullmatch(expr.name)):
            name = expr.name
        if name is None:
            raise ModelError(f"no C name for symbol {expr.name!r}")
        return name

    def _print_Function(self, expr):
        fn = FUNCTIONS.get(type(expr).__name__)
        if fn is None:
            raise ModelError(f"cannot print function {type(expr).__name__} in C")
        return f"{fn}({', '.join(self._print(a) for a in expr.args)})"

    _print_Min = _print_Max = _print_Abs = _print_floor = _print_ceiling = _print_Function

    def _print_Pow(self, expr):
        b, e = expr.args
        if e.is_Integer and 2 <= e <= 4:
            base = self.parenthesize(b, 50)
            return "*".join([base] * int(e))
        if e == -1:
            return f"1.0/{self.parenthesize(b, 50)}"
        return super()._print_Pow(expr)

    def _print_sign(self, expr):
        x = self._print(expr.args[0])
        return f"(double)(({x} > 0) - ({x} < 0))"


def ccode(expr, names=None) -> str:
    return KernelPrinter(names).doprint(expr)

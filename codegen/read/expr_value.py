"""Expressions bounded in value, not only in syntax: every subexpression of an
origin is evaluated numerically (IEEE doubles, a fixed amount of work per node)
and must be a finite real number of magnitude <= MAX_MAGNITUDE.

Two uses (codegen/read/expr.py's grammar bounds the text; this bounds what it means):
  - while an expression is built, every subexpression without geometry symbols
    is evaluated, so "(pi**8)**8" (6.6e31) is refused at the node that grows
    past the bound, before SymPy is asked anything about a huge number
    ("sin(((((((pi**8)**8)**8)**8)**8)**8)**8)" took minutes in sin's
    automatic evaluation);
  - once the default parameter values are known, every origin is evaluated at
    them, so "1/(L1 - 1)" or "sqrt(L1 - 2)" with L1 = 1 is an error naming the
    frame and the expression at load time, not kernels returning inf or NaN.

Double arithmetic is enough for a bound: it is the arithmetic of the generated C.
"""
from __future__ import annotations

import math

import sympy as sp

from .expr import MAX_MAGNITUDE, ModelError

__all__ = ["evaluate", "check_value", "check_origins"]

# SymPy function class -> the double function the C calls for it
_FUNCTIONS = {
    sp.sin: math.sin, sp.cos: math.cos, sp.tan: math.tan, sp.atan: math.atan,
    sp.atan2: math.atan2, sp.Abs: abs, sp.sign: lambda x: float((x > 0) - (x < 0)),
}


class _Bad(ArithmeticError):
    """A subexpression that is not a bounded finite real (the reason in args[0])."""


def _bounded(v, node) -> float:
    if isinstance(v, complex):
        raise _Bad(f"not real ({node} is complex)")
    if not math.isfinite(v):
        raise _Bad(f"not finite ({node} is {v})")
    if abs(v) > MAX_MAGNITUDE:
        raise _Bad(f"out of range ({node} = {v:.6g}, beyond {MAX_MAGNITUDE:g})")
    return float(v)


def _eval(e, env: dict) -> float:
    """e (SymPy) at env (Symbol name -> float); every node checked by _bounded."""
    if e.is_Number or e.is_NumberSymbol:
        v = float(e)
    elif e.is_Symbol:
        v = env[e.name]
    elif e.is_Add:
        v = math.fsum(_eval(a, env) for a in e.args)
    elif e.is_Mul:
        v = 1.0
        for a in e.args:
            v *= _eval(a, env)
    elif e.is_Pow:
        base, ex = _eval(e.base, env), e.exp
        if not ex.is_Rational:  # the grammar allows constant (half-)integer exponents only
            raise _Bad(f"not a bounded expression ({e} has exponent {ex})")
        if ex.q == 1:
            v = base ** int(ex.p)
        elif base < 0:
            raise _Bad(f"not real ({e}: a root of {base:.6g})")
        else:
            v = math.sqrt(base) ** int(ex.p) if ex.q == 2 else base ** float(ex)
    elif e.func in _FUNCTIONS:
        v = _FUNCTIONS[e.func](*(_eval(a, env) for a in e.args))
    else:
        raise _Bad(f"not a bounded expression ({type(e).__name__} {e})")
    return _bounded(v, e)


def evaluate(expr, env: dict | None = None) -> float:
    """The double value of expr at env (geometry name -> value); ValueError
    naming the first subexpression that is not a finite real of magnitude
    <= MAX_MAGNITUDE."""
    try:
        return _eval(sp.sympify(expr), env or {})
    except _Bad as exc:
        raise ValueError(exc.args[0]) from None
    except (ZeroDivisionError, OverflowError, ValueError) as exc:  # 0**-1, 1e300**8, domain errors
        raise ValueError(f"not finite ({type(exc).__name__}: {exc})") from None


def check_value(expr, what: str, text: str) -> None:
    """While building: refuse a constant subexpression beyond the bounds."""
    if expr.free_symbols:
        return
    try:
        evaluate(expr)
    except ValueError as exc:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ModelError(f"{what}: {shown!r} is {exc}") from None


def check_origins(model, values, source: str = "model") -> None:
    """Every frame origin at the default parameter values (model.param_names
    order; the geometry parameters come first) is a bounded finite real."""
    env = dict(zip(model.geometry, (float(v) for v in values)))
    for f in model.frames:
        for i, o in enumerate(f.origin):
            try:
                evaluate(o, env)
            except ValueError as exc:
                used = ", ".join(f"{s} = {env[str(s)]:g}" for s in sorted(map(str, o.free_symbols)))
                raise ModelError(f"{source}: frame {f.key!r}: origin[{i}] = {str(o)[:80]!r} is {exc} "
                                 f"at the default parameters" + (f" ({used})" if used else "")) from None

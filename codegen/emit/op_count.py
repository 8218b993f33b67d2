"""Operation counts of the emitted statements, as SymPy's count_ops counts
them, without building the negated and split expressions count_ops builds
on the way (count_ops was 13 % of a 48-DOF robot's emission time).

count(e) == int(sympy.count_ops(e)) for every expression (tested against it on
whole robots): the forms the emitted statements take (sums and products of
symbols and float or integer constants, small integer powers, 1/x, functions
of one argument) are counted here; any other node is handed to count_ops,
which counts a node's operations and those below it independently of what
lies above it.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

_NEG_ONE = sp.S.NegativeOne


def _is_neg_number(x) -> bool:
    return x.is_Number and x.is_extended_negative


def _number(x) -> int | None:
    """The count of a number, None for a number count_ops treats otherwise."""
    if x.is_Integer:
        return 1 if x.p < 0 else 0
    if x.is_Float:
        return 0
    return None


def _plain_mul(args) -> bool:
    """No factor count_ops's fraction() would move to a denominator."""
    for f in args:
        if f.is_Pow:
            if not (f.exp.is_Integer and f.exp.p >= 0):
                return False
        elif f.is_Number and not (f.is_Integer or f.is_Float):
            return False
    return True


def _mul(args) -> int:
    """A product with a non-negative leading factor and no denominator."""
    n = len(args) - 1
    for f in args:
        n += count(f)
    return n


def _positive(e):
    """count(-e) for an e whose leading coefficient is a negative number, None
    for a form not counted here."""
    if e.is_Number:
        return _number(-e)
    args = e.args
    if args[0] is _NEG_ONE:
        rest = args[1:]
        if len(rest) == 1:
            return None if rest[0].is_Add else count(rest[0])
        return _mul(rest) if _plain_mul(rest) else None
    if (args[0].is_Float or args[0].is_Integer) and _plain_mul(args):
        return count(-args[0]) + len(args) - 1 + sum(count(f) for f in args[1:])
    return None


@lru_cache(maxsize=1 << 17)
def count(e) -> int:
    """int(sympy.count_ops(e))."""
    n = _count(e)
    return int(sp.count_ops(e)) if n is None else n


def _count(e):
    if e.is_Symbol:
        return 0
    if e.is_Number:
        return _number(e)
    if e.is_Add:
        args = e.args
        n, negs = len(args) - 1, 0
        for a in args:
            if (a.is_Mul and _is_neg_number(a.args[0])) or _is_neg_number(a):
                negs += 1
                m = _positive(a)
                n += int(sp.count_ops(-a)) if m is None else m
            else:
                n += count(a)
        return n + (negs == len(args))
    if e.is_Mul:
        if _is_neg_number(e.args[0]):
            m = _positive(e)
            return None if m is None else 1 + m
        return _mul(e.args) if _plain_mul(e.args) else None
    if e.is_Pow and e.base is not sp.S.Exp1 and (e.exp is _NEG_ONE or (e.exp.is_Integer and e.exp.p >= 2)):
        return 1 + count(e.base)
    if e.is_Function and len(e.args) == 1:
        return 1 + count(e.args[0])
    return None


def op_count(exprs) -> int:
    return sum(count(e) for e in exprs)

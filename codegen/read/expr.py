"""A small, safe expression language for model files: text is data, never code.

Origin expressions such as "L1 + L3/2" are parsed with Python's `ast` module
(mode "eval": an expression, never a statement) and the tree is checked
against an allow-list before a SymPy expression is built from it node by
node. Nothing is ever passed to eval, exec, sympify or parse_expr, so a model
file cannot run code. Every bound below is checked before the work it limits.

Grammar (anything else is refused with a ModelError naming the field):
  - number literals: integers and decimals (123, 0.5, 1e-3, 2.5E2), no
    underscores, complex or hex; nonzero magnitude in [MIN_MAGNITUDE,
    MAX_MAGNITUDE] and at most MAX_LITERAL_CHARS characters;
  - names: the declared geometry parameters and the constant `pi`;
  - binary + - * / ** and unary - +, parentheses;
  - the functions in FUNCTIONS: sqrt(x), sin(x), cos(x), tan(x), atan2(y, x).

Numbers. Integer literals and ratios of integers stay exact ("L3/2" is L3/2,
"1/3" is the Rational 1/3). A decimal literal with an integral value is the
exact Integer (1.0 -> 1) so zeros and ones still fold away; any other decimal
is the exact IEEE double nearest to it, sp.Float(x, precision=53): the same
rule as TOML numbers and URDF attributes, so "0.1" and 0.1 mean the same
number, the C gets the value as written, and exact rationals with large
denominators never appear in the derivation.

Exponents must be constant integers or half-integers with |e| <= MAX_EXPONENT
(L**2, L**-1, L**(1/2)); every numeric constant in a result must stay within
MAX_MAGNITUDE (and exact ratios within MAX_MAGNITUDE in numerator and
denominator), so 2**10**10 or (10**8)**8 are refused at once instead of being
computed.

Values (codegen/read/expr_value.py): every subexpression without geometry names
is evaluated as it is built and must stay a finite real within MAX_MAGNITUDE
("(pi**8)**8" is 6.6e31: refused), and no exponent in a result may exceed
MAX_RESULT_EXPONENT; the model loader evaluates every origin at the default
parameters the same way.
"""
from __future__ import annotations

import ast
import math
import re
import warnings

import sympy as sp

from ..support.errors import ModelError  # the tool's error type for bad input; re-exported

__all__ = [
    "ModelError", "FUNCTIONS", "RESERVED_NAMES", "parse_expression", "from_number",
    "parse_number", "parse_numbers",
    "MAX_TEXT", "MAX_NODES", "MAX_DEPTH", "MAX_LITERAL_CHARS", "MAX_MAGNITUDE",
    "MIN_MAGNITUDE", "MAX_EXPONENT", "MAX_RESULT_EXPONENT",
]


MAX_TEXT = 1000  # characters in one expression or attribute
MAX_NODES = 256  # expression nodes (numbers, names, operations, calls) in one expression
MAX_DEPTH = 64  # nesting depth of those nodes (a + b + c nests one level per term)
MAX_LITERAL_CHARS = 64  # characters in one number literal
MAX_MAGNITUDE = 1e12  # |x| of any literal and of any constant in a result
MIN_MAGNITUDE = 1e-12  # smallest nonzero |x| of a literal (so 1/x stays bounded)
MAX_EXPONENT = 8  # |e| of an exponent, which must be an integer or a half-integer
# |e| of an exponent in a result: (L1**8)**8 is L1**64, while (((L1**8)**8)**8)**8 would
# put pow(L1, 4096) in the C
MAX_RESULT_EXPONENT = MAX_EXPONENT ** 2

# name -> (SymPy function, number of arguments)
FUNCTIONS = {
    "sqrt": (sp.sqrt, 1),
    "sin": (sp.sin, 1),
    "cos": (sp.cos, 1),
    "tan": (sp.tan, 1),
    "atan2": (sp.atan2, 2),
}
CONSTANTS = {"pi": sp.pi}
# Names a geometry parameter may not take: they mean something in expressions.
RESERVED_NAMES = frozenset(FUNCTIONS) | frozenset(CONSTANTS)

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_UNARY = {ast.USub: "-", ast.UAdd: "+"}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MAX_RATIONAL = int(MAX_MAGNITUDE)


def _show(text: str) -> str:
    """The text for an error message: one line, not too long."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _literal(value: float | int, what: str, shown: str) -> sp.Expr:
    """A bounded number as an exact SymPy number (see the module docstring)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(f"{what}: {shown} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ModelError(f"{what}: {shown} is not a finite number")
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        raise ModelError(f"{what}: the number {shown} is out of range "
                         f"(nonzero magnitudes must lie in [{MIN_MAGNITUDE:g}, {MAX_MAGNITUDE:g}])")
    if isinstance(value, int) or float(value).is_integer():
        return sp.Integer(int(value))
    return sp.Float(value, precision=53)


def from_number(value, what: str) -> sp.Expr:
    """A TOML number (int or float) used where an expression is expected."""
    return _literal(value, what, repr(value))


def _check_constants(expr: sp.Expr, what: str, text: str) -> sp.Expr:
    """Refuse results whose constants grew beyond the bounds (or to inf/nan/complex)."""
    if expr.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        raise ModelError(f"{what}: {_show(text)} is not finite (a division by zero?)")
    if expr.has(sp.I):
        raise ModelError(f"{what}: {_show(text)} is not a real expression")
    for c in expr.atoms(sp.Number):
        if c.is_Rational and (abs(c.p) > _MAX_RATIONAL or c.q > _MAX_RATIONAL):
            raise ModelError(f"{what}: {_show(text)} has a constant beyond {MAX_MAGNITUDE:g}")
        if c.is_Float and not abs(float(c)) <= MAX_MAGNITUDE:
            raise ModelError(f"{what}: {_show(text)} has a constant beyond {MAX_MAGNITUDE:g}")
    for p in expr.atoms(sp.Pow):
        if p.exp.is_Number and not abs(p.exp) <= MAX_RESULT_EXPONENT:
            raise ModelError(f"{what}: {_show(text)}: the exponent {p.exp} of {str(p)[:40]} is beyond "
                             f"{MAX_RESULT_EXPONENT} (exponents multiply when powers nest)")
    check_value(expr, what, text)
    return expr


def _exponent(e: sp.Expr, what: str, text: str) -> sp.Expr:
    if e.is_Float:
        e = sp.Rational(float(e)) if float(2 * e).is_integer() else e
    if not (e.is_Rational and (2 * e).is_Integer and abs(e) <= MAX_EXPONENT):
        raise ModelError(f"{what}: {_show(text)}: exponents must be constant integers or half-integers "
                         f"of magnitude <= {MAX_EXPONENT}")
    return e


def _measure(tree: ast.AST, what: str, text: str) -> None:
    """Expression-node count and depth, iteratively (no recursion on untrusted
    trees). Operator and context nodes (Add, Load) are not counted."""
    count, stack = 0, [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, ast.expr):
            continue
        count += 1
        if count > MAX_NODES:
            raise ModelError(f"{what}: {_show(text)} has more than {MAX_NODES} nodes")
        if depth > MAX_DEPTH:
            raise ModelError(f"{what}: {_show(text)} is nested deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Builder:
    def __init__(self, text: str, symbols: dict, what: str):
        self.text, self.symbols, self.what = text, symbols, what

    def fail(self, reason: str):
        raise ModelError(f"{self.what}: cannot parse {_show(self.text)}: {reason}")

    def build(self, node: ast.AST) -> sp.Expr:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(f"{type(value).__name__} literals are not allowed")
            seg = ast.get_source_segment(self.text, node) or ""
            if len(seg) > MAX_LITERAL_CHARS:
                self.fail(f"a number literal is longer than {MAX_LITERAL_CHARS} characters")
            if "_" in seg or seg[:2].lower() in ("0x", "0o", "0b"):
                self.fail(f"{seg!r} is not a plain decimal number")
            return _literal(value, self.what, repr(seg))
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return self.symbols[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            if node.id in FUNCTIONS:
                self.fail(f"function {node.id!r} must be called")
            raise ModelError(f"{self.what}: {_show(self.text)} uses undeclared geometry {node.id!r} "
                             f"(declared: {sorted(self.symbols)}; also allowed: pi, {', '.join(FUNCTIONS)})")
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            arg = self.build(node.operand)
            return -arg if isinstance(node.op, ast.USub) else arg
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.build(node.left), self.build(node.right)
            op = type(node.op)
            if op is ast.Add:
                out = left + right
            elif op is ast.Sub:
                out = left - right
            elif op is ast.Mult:
                out = left * right
            elif op is ast.Div:
                if right == 0:
                    raise ModelError(f"{self.what}: {_show(self.text)} is not finite (division by zero)")
                out = left / right
            else:
                e = _exponent(right, self.what, self.text)
                if left == 0 and e < 0:
                    raise ModelError(f"{self.what}: {_show(self.text)} is not finite (0 to a negative power)")
                out = left ** e
            return _check_constants(out, self.what, self.text)
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if name not in FUNCTIONS:
                self.fail(f"only the functions {', '.join(FUNCTIONS)} may be called")
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                self.fail(f"{name}() takes plain arguments only")
            fn, arity = FUNCTIONS[name]
            if len(node.args) != arity:
                self.fail(f"{name}() takes {arity} argument(s), got {len(node.args)}")
            out = fn(*(self.build(a) for a in node.args))
            return _check_constants(out, self.what, self.text)
        self.fail(f"{type(node).__name__} is not allowed (only numbers, geometry names, pi, "
                  f"+ - * / **, parentheses and {', '.join(FUNCTIONS)})")


def parse_expression(text, symbols: dict, what: str) -> sp.Expr:
    """A finite real SymPy expression in `symbols` (name -> sp.Symbol) from text
    of the grammar in the module docstring. `what` names the field in errors."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ModelError(f"{what}: expected an expression string, got {text!r}"[:200])
    if len(text) > MAX_TEXT:
        raise ModelError(f"{what}: expression of {len(text)} characters (the limit is {MAX_TEXT})")
    src = text.strip()
    if not src:
        raise ModelError(f"{what}: cannot parse an empty expression")
    try:
        with warnings.catch_warnings():  # e.g. "'int' object is not callable" on "1(2)"
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes
        raise ModelError(f"{what}: cannot parse {_show(text)} ({type(exc).__name__}: "
                         f"{getattr(exc, 'msg', None) or exc})".replace("\n", " ")) from None
    except (RecursionError, MemoryError):
        raise ModelError(f"{what}: cannot parse {_show(text)}: nested too deeply") from None
    _measure(tree, what, text)
    expr = _Builder(src, symbols, what).build(tree.body)
    if not isinstance(expr, sp.Expr):  # pragma: no cover - the builder only makes Exprs
        raise ModelError(f"{what}: {_show(text)} is not a scalar expression")
    _check_constants(expr, what, text)
    if expr.is_extended_real is False:
        raise ModelError(f"{what}: {_show(text)} is not a real expression")
    unknown = {str(s) for s in expr.free_symbols} - set(symbols)
    if unknown:  # pragma: no cover - names are resolved through `symbols` only
        raise ModelError(f"{what}: {_show(text)} uses undeclared geometry {sorted(unknown)}")
    return expr


def parse_number(text, what: str, bound: float = MAX_MAGNITUDE) -> float:
    """One plain decimal literal ("0.25", "-1e-3", "+2."), finite, |x| <= bound.
    For attributes of other formats (URDF); no names, no arithmetic."""
    if not isinstance(text, str):
        raise ModelError(f"{what}: expected a number as text, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ModelError(f"{what}: {len(text)} characters (the limit is {MAX_TEXT})")
    s = text.strip()
    if len(s) > MAX_LITERAL_CHARS or not _DECIMAL.fullmatch(s):
        raise ModelError(f"{what}: {_show(text)} is not a plain decimal number")
    value = float(s)
    if not math.isfinite(value) or abs(value) > bound:
        raise ModelError(f"{what}: {_show(text)} is out of range (|x| <= {bound:g})")
    return value


def parse_numbers(text, n: int, what: str, bound: float = MAX_MAGNITUDE) -> tuple:
    """Exactly n whitespace-separated plain decimal literals (URDF xyz="0 0.1 0.2")."""
    if not isinstance(text, str):
        raise ModelError(f"{what}: expected {n} numbers as text, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ModelError(f"{what}: {len(text)} characters (the limit is {MAX_TEXT})")
    parts = text.split()
    if len(parts) != n:
        raise ModelError(f"{what}: expected {n} numbers, got {len(parts)} in {_show(text)}")
    return tuple(parse_number(p, what, bound) for p in parts)


from .expr_value import check_value  # noqa: E402 - it needs ModelError and the bounds above

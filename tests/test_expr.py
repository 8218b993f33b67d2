"""The model-file expression language (codegen/read/expr.py): what it accepts, that
numbers stay exact, and that every bound is a clear ModelError.

Expected values are written independently with SymPy constructors (never by
parsing text), so a wrong parse cannot agree with itself.
"""
from __future__ import annotations

import pytest
import sympy as sp

from codegen.read import expr as ex
from codegen.read.expr import ModelError, parse_expression, parse_number, parse_numbers

pytestmark = pytest.mark.unit

L1, L2, L3 = (sp.Symbol(n, real=True) for n in ("L1", "L2", "L3"))
SYMS = {"L1": L1, "L2": L2, "L3": L3}


def parse(text):
    return parse_expression(text, SYMS, "origin[0]")


ACCEPTED = {
    "0": sp.Integer(0),
    "12": sp.Integer(12),
    "L1": L1,
    "-L2": -L2,
    "+L2": L2,
    "L1 + L2": L1 + L2,
    "L1 - L2": L1 - L2,
    "2*L1": 2 * L1,
    "L3/2": L3 * sp.Rational(1, 2),
    "L3 / 2": L3 * sp.Rational(1, 2),
    "1/3": sp.Rational(1, 3),
    "(L1 + L2) * (L1 - L2)": (L1 + L2) * (L1 - L2),
    "L1**2": L1 ** 2,
    "L1**-1": 1 / L1,
    "L1**(1/2)": sp.sqrt(L1),
    "L1**0.5": sp.sqrt(L1),
    "L1**-1.5": L1 ** sp.Rational(-3, 2),
    "-L1**2": -(L1 ** 2),  # ** binds tighter than unary minus, as in Python
    "2**2**3": sp.Integer(2) ** 8,  # right associative
    "pi": sp.pi,
    "pi/4": sp.pi / 4,
    "sqrt(2)": sp.sqrt(2),
    "sqrt(2)/2*L1": sp.sqrt(2) / 2 * L1,
    "sin(L1)": sp.sin(L1),
    "cos(pi/3)": sp.Rational(1, 2),
    "tan(L2)": sp.tan(L2),
    "atan2(L1, L2)": sp.atan2(L1, L2),
    "1.0": sp.Integer(1),  # integral decimals are exact Integers
    "2.5e2": sp.Integer(250),
    "1e12": sp.Integer(10 ** 12),
    "  L1  ": L1,
    "L1\n": L1,
}


@pytest.mark.parametrize("text", list(ACCEPTED))
def test_accepted(text):
    got = parse(text)
    assert got == ACCEPTED[text], (text, got)


@pytest.mark.parametrize("text, value", [("0.1", 0.1), ("-0.3", -0.3), ("1.2345678901234567", 1.2345678901234567),
                                         ("1e-12", 1e-12), ("0.7071067811865476", 0.7071067811865476)])
def test_decimals_are_the_exact_double(text, value):
    """A non-integral decimal is the double nearest to it (53-bit Float), as written."""
    got = parse(text)
    assert got.is_Float and got._prec == 53
    assert float(got) == value and sp.Rational(got) == sp.Rational(value)


def test_decimal_times_symbol():
    got = parse("0.1*L1")
    assert got.free_symbols == {L1} and float(got.coeff(L1)) == 0.1


def test_integer_ratios_stay_exact():
    assert parse("L1/3 + L2/6") == L1 / 3 + L2 / 6
    assert parse("(1/3)*3") == 1  # exact: no 0.9999...
    assert parse("1/7/7/7") == sp.Rational(1, 343)


def test_from_number():
    assert ex.from_number(3, "o") == 3 and ex.from_number(0.25, "o") == sp.Float(0.25, precision=53)
    assert ex.from_number(2.0, "o").is_Integer
    for bad in (1e20, float("nan"), float("inf"), True, "1", 10 ** 400):
        with pytest.raises(ModelError, match="origin"):
            ex.from_number(bad, "origin")


def expect(text, *words, symbols=SYMS):
    with pytest.raises(ModelError) as info:
        parse_expression(text, symbols, "frame 'x': origin[1]")
    msg = str(info.value)
    assert msg.startswith("frame 'x': origin[1]"), msg  # names the field
    assert "\n" not in msg and len(msg) < 400, msg
    for w in words:
        assert w.lower() in msg.lower(), f"{msg!r} lacks {w!r}"
    return msg


REFUSED = {
    # not in the grammar
    "attribute": ("L1.real", ["Attribute"]),
    "subscript": ("L1[0]", ["Subscript"]),
    "string": ("'L1'", ["str"]),
    "bytes": ("b'L1'", ["bytes"]),
    "complex literal": ("2j", ["complex"]),
    "boolean literal": ("True", ["bool"]),
    "None": ("None", ["NoneType"]),
    "call of a name": ("open('f')", ["functions"]),
    "call of an attribute": ("L1.conjugate()", ["functions"]),
    "call of a call": ("sqrt(2)(3)", ["functions"]),
    "keyword argument": ("sqrt(x=2)", ["plain arguments"]),
    "star argument": ("atan2(*L1)", ["plain arguments"]),
    "wrong arity": ("sin(L1, L2)", ["1 argument"]),
    "function not called": ("sqrt", ["must be called"]),
    "lambda": ("lambda: 1", ["Lambda"]),
    "comparison": ("L1 < L2", ["Compare"]),
    "boolean operator": ("L1 and L2", ["BoolOp"]),
    "not": ("not L1", ["UnaryOp"]),
    "invert": ("~L1", ["UnaryOp"]),
    "floor division": ("L1 // 2", ["BinOp"]),
    "modulo": ("L1 % 2", ["BinOp"]),
    "matmul": ("L1 @ L2", ["BinOp"]),
    "bit operations": ("L1 ^ L2", ["BinOp"]),
    "conditional": ("L1 if L2 else L3", ["IfExp"]),
    "tuple": ("(L1, L2)", ["Tuple"]),
    "list": ("[L1]", ["List"]),
    "dict": ("{1: 2}", ["Dict"]),
    "set": ("{L1}", ["Set"]),
    "comprehension": ("[x for x in (1,)]", ["ListComp"]),
    "generator": ("sum(x for x in (1,))", ["functions"]),
    "f-string": ("f'{L1}'", ["JoinedStr"]),
    "walrus": ("(x := 1)", ["NamedExpr"]),
    "starred": ("*L1", ["parse"]),
    "statement": ("import os", ["parse"]),
    "assignment": ("L1 = 2", ["parse"]),
    "two lines": ("L1\nL2", ["parse"]),
    "empty": ("", ["empty"]),
    "blank": ("   ", ["empty"]),
    "NUL": ("L1\x00", ["parse"]),
    "unbalanced": ("(L1", ["parse"]),
    "dangling operator": ("L1 +", ["parse"]),
    # names
    "undeclared name": ("L4", ["undeclared", "'L4'"]),
    "sympy's I is not a name": ("I", ["undeclared"]),
    "E is not a name": ("E", ["undeclared"]),
    "nan is not a name": ("nan", ["undeclared"]),
    "oo is not a name": ("oo", ["undeclared"]),
    "builtins are not names": ("__builtins__", ["undeclared"]),
    # numbers
    "hex": ("0x10", ["plain decimal"]),
    "octal": ("0o10", ["plain decimal"]),
    "binary": ("0b10", ["plain decimal"]),
    "underscores": ("1_000", ["plain decimal"]),
    "too large": ("1e20", ["out of range", "1e+12"]),
    "too large integer": ("1000000000001", ["out of range"]),
    "too small": ("1e-13", ["out of range", "1e-12"]),
    "overflowing literal": ("1e400", ["finite"]),
    "long literal": ("1." + "0" * 70, [f"longer than {ex.MAX_LITERAL_CHARS}"]),
    # exponents
    "power tower": ("2**10**10", ["exponent", "8"]),
    "nine nines": ("9**9**9", ["exponent"]),
    "large exponent": ("L1**9", ["exponent"]),
    "symbolic exponent": ("2**L1", ["exponent"]),
    "irrational exponent": ("2**pi", ["exponent"]),
    "non-half exponent": ("L1**0.3", ["exponent"]),
    "third power root": ("L1**(1/3)", ["exponent"]),
    "grown constant": ("(10**8)**8", ["constant beyond"]),
    # bounded in value, not only in syntax (every exponent <= 8, but nested)
    "grown pi power": ("(pi**8)**8", ["out of range", "pi**64", "1e+12"]),
    "nested pi tower": ("sin(((((((pi**8)**8)**8)**8)**8)**8)**8)", ["out of range"]),
    "grown decimal": ("35.5**8", ["beyond 1e+12"]),
    "grown root": ("sqrt(2*pi)**8*1e9", ["out of range"]),
    "grown symbolic exponent": ("((L1**8)**8)**8", ["exponent 512", "64"]),
    "grown symbolic product": ("(L1**8)**8*L1", ["exponent 65"]),
    "grown product": ("1e12*1e12", ["constant beyond"]),
    "grown denominator": ("1/7/7/7/7/7/7/7/7/7/7/7/7/7/7/7", ["constant beyond"]),
    "factorial": ("factorial(10**7)", ["functions"]),
    # values
    "division by zero": ("L1/0", ["finite"]),
    "division by a zero expression": ("L1/(L2 - L2)", ["finite"]),
    "zero to a negative power": ("0**-1", ["finite"]),
    "tan pole": ("tan(pi/2)", ["finite"]),
    "atan2(0, 0)": ("atan2(0, 0)", ["finite"]),
    "imaginary": ("sqrt(-1)*L1", ["real"]),
    "imaginary constant": ("(-4)**(1/2)", ["real"]),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused(case):
    text, words = REFUSED[case]
    expect(text, *words)


def test_not_a_string():
    for bad in (None, True, [1], {"a": 1}):
        expect(bad, "expected an expression string")


def test_length_bound():
    ok = "+".join(["L1"] * 60)  # 179 characters, 119 nodes, depth 60
    assert parse(ok) == 60 * L1
    expect("L1" + " " * ex.MAX_TEXT, f"limit is {ex.MAX_TEXT}")
    msg = expect("1" * 10 ** 6, "characters", str(ex.MAX_TEXT))
    assert len(msg) < 200  # the text is not echoed in full


def test_node_bound():
    group = "(" + "+".join(["L1"] * 8) + ")"  # 15 nodes, depth 8
    assert parse("*".join([group] * 8)) == (8 * L1) ** 8  # 127 nodes
    text = "*".join([group] * 20)  # 319 nodes, depth 27
    assert len(text) <= ex.MAX_TEXT
    expect(text, f"more than {ex.MAX_NODES} nodes")


def test_depth_bound():
    assert parse("-" * (ex.MAX_DEPTH - 3) + "L1") in (L1, -L1)
    expect("-" * 500 + "L1", f"deeper than {ex.MAX_DEPTH}")
    expect("sin(" * 70 + "L1" + ")" * 70, "deeper")
    expect("(" * 400 + "L1" + ")" * 400, "parse")  # Python's parser refuses this nesting


def test_geometry_symbols_are_the_callers():
    """The result uses exactly the Symbol objects passed in (assumptions and all)."""
    x = sp.Symbol("x", positive=True)
    got = parse_expression("2*x", {"x": x}, "o")
    assert got.free_symbols == {x} and next(iter(got.free_symbols)) is x


def test_functions_table_is_documented():
    doc = ex.__doc__
    for name in ex.FUNCTIONS:
        assert f"{name}(" in doc
    assert ex.RESERVED_NAMES == set(ex.FUNCTIONS) | {"pi"}


# ----------------------------------------------------------------------------
# plain numbers (URDF attributes)
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("0", 0.0), ("-0.5", -0.5), ("+2.", 2.0), (".25", 0.25),
                                         ("1e-3", 1e-3), ("3.0E+2", 300.0), (" 7 ", 7.0),
                                         ("1.5707963267948966", 1.5707963267948966), ("1e-300", 1e-300)])
def test_parse_number(text, value):
    assert parse_number(text, "mass") == value


@pytest.mark.parametrize("text", ["", " ", "nan", "inf", "-inf", "1e13", "0x1", "1_0", "1 2", "1,2", "L1",
                                  "1/2", "pi", "1e", "--1", "1e400", "(1)", "٣", "1" * 100])
def test_parse_number_refused(text):
    with pytest.raises(ModelError, match="^mass: "):
        parse_number(text, "mass")


def test_parse_number_types():
    for bad in (None, 1.0, b"1"):
        with pytest.raises(ModelError, match="mass"):
            parse_number(bad, "mass")


def test_parse_numbers():
    assert parse_numbers("0 0.1 -0.2", 3, "xyz") == (0.0, 0.1, -0.2)
    assert parse_numbers("\t1\n2  3 ", 3, "xyz") == (1.0, 2.0, 3.0)
    for bad in ("0 0.1", "0 0.1 0.2 0.3", "0 0.1 x", "", "0, 0, 0"):
        with pytest.raises(ModelError, match="^xyz: "):
            parse_numbers(bad, 3, "xyz")
    with pytest.raises(ModelError, match="limit"):
        parse_numbers("0 " * 10 ** 6, 3, "xyz")


def test_nested_powers_refused_fast_and_never_reach_the_c():
    """Hostile input: every exponent <= 8 but nested; this ran past 120 s in SymPy's sin()."""
    import time
    t0 = time.perf_counter()
    expect("sin(((((((pi**8)**8)**8)**8)**8)**8)**8)", "out of range")
    assert time.perf_counter() - t0 < 1.0
    # the largest constant any accepted result can hold is within the literal bound
    for text in ("pi**8", "(pi**8)**2*pi", "(2**8)**4", "1e6*1e6", "sqrt(2)**8*pi"):
        value = float(parse(text))
        assert abs(value) <= ex.MAX_MAGNITUDE, text


def test_every_constant_subexpression_is_bounded():
    """A sum that ends within the bound is still refused if a term on the way is not
    (the C evaluates the terms); symbols bound only exponents at parse time."""
    expect("(pi**8)**8 - (pi**8)**8", "out of range")
    assert parse("(L1**8)**8") == L1 ** 64  # its value is checked at the default parameters

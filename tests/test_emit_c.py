"""The C printer (codegen/emit/cprint.py): constants as exact double literals,
known functions from a table, and a ModelError (never a traceback or C that
does not compile) for anything else. Reference values: Python's float and
math module, not our printer."""
from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp

from codegen.emit.cprint import FUNCTIONS, ccode
from codegen.read.model import ModelError

pytestmark = pytest.mark.unit

mpmath.mp.dps = 50
x, y = sp.symbols("x y", real=True)
NAMES = {x: "q_x", y: "p_y"}


def c(expr):
    return ccode(expr, NAMES)


@pytest.mark.parametrize("expr,value", [
    (sp.pi, math.pi), (sp.E, math.e), (sp.sqrt(2), math.sqrt(2)), (sp.sqrt(3) / 2, math.sqrt(3) / 2),
    (sp.Catalan, float(mpmath.catalan)), (sp.GoldenRatio, (1 + math.sqrt(5)) / 2),
    (sp.EulerGamma, 0.577215664901532860606512090082), (2 * sp.pi / 3, float(mpmath.mpf(2) * mpmath.pi / 3)),
    (sp.Rational(1, 3), 1 / 3), (sp.Integer(10) ** 20, 1e20), (sp.Integer(2) ** 64 + 1, 2.0 ** 64),
    (sp.Integer(-7), -7.0), (sp.Float(0.1), 0.1), (sp.Float("0.1", 40), 0.1),
    (sp.cos(sp.Rational(1, 7)), float(mpmath.cos(mpmath.mpf(1) / 7))),
])
def test_constants_are_the_nearest_double(expr, value):
    text = c(expr)
    assert float(text) == value, text
    assert "M_" not in text and ("." in text or "e" in text), text  # a double literal, no math.h macro


def test_constants_inside_expressions():
    text = c(sp.pi * x + sp.sqrt(2) * y + sp.Integer(10) ** 20)
    assert "3.141592653589793*q_x" in text and "1.4142135623730951*p_y" in text and "1e+20" in text
    assert "M_PI" not in c(sp.pi * x) and "M_SQRT2" not in c(sp.sqrt(2) * x)


def test_big_integers_never_become_integer_literals():
    for n in (2 ** 63, 2 ** 64, 10 ** 20, 10 ** 300):
        text = c(sp.Integer(n) * x)
        assert float(text.split("*")[0]) == float(n), text


@pytest.mark.parametrize("expr", [sp.Integer(10) ** 400 * x, sp.I * x, sp.zoo, sp.nan, sp.oo * x])
def test_non_finite_or_complex_constants_are_model_errors(expr):
    with pytest.raises(ModelError):
        c(expr)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_known_functions_table(name):
    fn = getattr(sp, name)
    args = (x, y) if name in ("atan2", "Min", "Max") else (x,)
    text = c(fn(*args))
    assert text.startswith(FUNCTIONS[name] + "("), text


@pytest.mark.parametrize("expr", [sp.gamma(x), sp.besselj(0, x), sp.Piecewise((x, x > 0), (y, True)), sp.erf(x),
                                  sp.Function("f")(x), sp.LambertW(x), sp.Derivative(sp.Function("f")(x), x)])
def test_unsupported_is_a_model_error_naming_it(expr):
    with pytest.raises(ModelError, match=type(expr).__name__):
        c(expr)


def test_unknown_symbols_are_model_errors():
    with pytest.raises(ModelError, match="no C name"):
        ccode(sp.Symbol("mystery") * x, NAMES)
    assert ccode(sp.Symbol("t12") + sp.Symbol("x3"), {}) == "t12 + x3"  # generator temporaries


def test_powers_and_sign():
    assert c(x ** 2) == "q_x*q_x"
    assert c(1 / x) == "1.0/q_x"
    assert c(sp.sqrt(x)) == "sqrt(q_x)"
    assert c(x ** 7) == "pow(q_x, 7.0)"
    assert c(sp.sign(x)) == "(double)((q_x > 0) - (q_x < 0))"

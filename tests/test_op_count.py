"""codegen/emit/op_count.py: the operation counts equal SymPy's count_ops, on
hand-picked forms (every branch, and the forms it hands back to count_ops)
and on every statement CSE gives for whole derivations."""
from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from codegen.derive.outputs import derive
from codegen.emit.op_count import count, op_count
from codegen.read.model import load_model

pytestmark = pytest.mark.module

MODELS = Path(__file__).resolve().parent / "models"
x, y, z = sp.symbols("x y z", real=True)
FORMS = [
    x, -x, 2 * x, -2 * x, -2.5 * x, 2.5 * x * y, -x * y, -x - y, x - y, -x + y, x / y, 1 / x, -1 / x,
    x**2, -x**3, x**-2, x**0.5, sp.sqrt(x), sp.Rational(1, 2) * x, -sp.Rational(1, 3), sp.Float(-3.5),
    sp.Integer(-1), sp.Integer(0), sp.Integer(7), -1.0 * x, 1.0 * x, sp.sign(x), -sp.sign(x) * y,
    2 * sp.sin(x), sp.atan2(x, y), sp.exp(x), sp.E**x, 1 / sp.E, sp.Mul(-1, x + y, evaluate=False),
    sp.Mul(-1, x + y, z, evaluate=False), sp.Mul(-2, x + y, evaluate=False), x * y * z - 2 * x * (y + z),
    -x * (y - z), (x + y)**-1, -(x + y) * z, -x - 2.0 * y - z * x, -x / 2 - y / 3, sp.Add(-x, -y, -z),
]


@pytest.mark.parametrize("expr", FORMS, ids=str)
def test_count_is_count_ops(expr):
    assert count(expr) == int(sp.count_ops(expr))


@pytest.mark.parametrize("case", ["mini", "floating_tiny_model"])
def test_count_is_count_ops_on_emitted_statements(case):
    if case == "mini":
        model = load_model(MODELS / "mini.toml")
    else:
        from codegen.read.urdf import load_urdf
        model = load_urdf(MODELS / "floating_tiny.urdf", end_effectors=("foot",)).model
    d = derive(model)
    prog = d.program
    outs = [e for key in ("A", "C", "Q", "tau", "ddq") for e in d[key]]
    subs, reduced = sp.cse([rhs for _, rhs in prog.needed(outs)] + outs)
    exprs = [e for _, e in subs] + list(reduced)
    assert len(exprs) > 50
    assert [count(e) for e in exprs] == [int(sp.count_ops(e)) for e in exprs]
    assert op_count(exprs) == sum(int(sp.count_ops(e)) for e in exprs)

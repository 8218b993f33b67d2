"""The forward-mode transform of codegen/derive/differentiate.py on small
programs, against sympy.diff of the expanded expression (the inlined closed
form, s_j, c_j replaced by sin q_j, cos q_j)."""
from __future__ import annotations

import sympy as sp
import pytest

from codegen.derive import differentiate as D
from codegen.derive.program import Program

pytestmark = pytest.mark.unit

q0, q1, v0, x = sp.symbols("q0 q1 v0 x", real=True)
s0, c0, s1, c1 = sp.symbols("s0 c0 s1 c1", real=True)
TRIG = {s0: sp.sin(q0), c0: sp.cos(q0), s1: sp.sin(q1), c1: sp.cos(q1)}
SEEDS = {q0: {"q0": 1}, s0: {"q0": c0}, c0: {"q0": -s0},
         q1: {"q1": 1}, s1: {"q1": c1}, c1: {"q1": -s1}, v0: {"v0": 1}, x: {"x": 1}}
WRT = {"q0": q0, "q1": q1, "v0": v0, "x": x}


def _program():
    """A chain in the style of the recursions: rotations by (c, s), products, a sign (Coulomb)."""
    p = Program()
    a = p.var(c0 * v0 + s0 * x)
    b = p.var(-s0 * v0 + c0 * x)
    r = p.var(c1 * a - s1 * b)
    w = p.var(r * r + a * b * x)
    f = p.var(w / (2 + c1 * c1) + 3 * x * sp.sign(v0))
    g = p.var(x * x)  # depends on x only
    return p, [f, r, g, w * q1]


def test_tangents_match_sympy_diff_of_the_closed_form():
    p, outs = _program()
    tans = D.tangents(p, outs, SEEDS)
    for out, tan in zip(outs, tans):
        closed = p.inline(out).xreplace(TRIG)
        for key, sym in WRT.items():
            ref = sp.diff(closed, sym).replace(sp.DiracDelta, lambda *_: 0)
            got = p.inline(tan.get(key, sp.S.Zero)).xreplace(TRIG)
            assert sp.simplify(got - ref) == 0, (out, key, got, ref)


def test_structural_zeros_are_not_created():
    p, outs = _program()
    before = len(p.assignments)
    tans = D.tangents(p, outs, SEEDS)
    assert set(tans[2]) == {"x"}  # g = x^2: no q0, q1, v0 entry at all
    assert set(tans[1]) == {"q0", "q1", "x", "v0"}
    assert set(tans[0]) == {"q0", "q1", "v0", "x"}
    # every new statement is the tangent or a partial of one the outputs need
    assert len(p.assignments) > before
    q1_only = D.tangents(p, [p.var(c1 * x)], {q1: {"q1": 1}, s1: {"q1": c1}, c1: {"q1": -s1}})
    assert set(q1_only[0]) == {"q1"}


def test_shared_with_the_primal_and_deterministic():
    p1, outs1 = _program()
    p2, outs2 = _program()
    t1 = D.tangents(p1, outs1, SEEDS)
    t2 = D.tangents(p2, outs2, SEEDS)
    assert p1.assignments == p2.assignments and t1 == t2
    # d/dv0 of a = c0 v0 + s0 x is c0 itself: the primal's symbol, no new statement
    a = p1.assignments[0][0]
    assert D.tangents(p1, [a], SEEDS)[0]["v0"] == c0


def test_constants_are_not_walked():
    p = Program()
    y = p.var(s0 * x + c0)  # a quantity held fixed (forward dynamics' ddq)
    z = p.var(y * y * x + s0)
    (tan,) = D.tangents(p, [z], SEEDS, constants={y})
    Y = sp.Symbol("Y")
    closed = p.assignments[1][1].xreplace({y: Y})  # z's statement, y a free symbol
    for key, sym in WRT.items():
        ref = sp.diff(closed.xreplace(TRIG), sym).xreplace({Y: p.inline(y)}).xreplace(TRIG)
        got = p.inline(tan.get(key, 0)).xreplace(TRIG)
        assert sp.simplify(got - ref) == 0, (key, got, ref)


def test_jacobian_layout():
    tans = [{"a": x, "c": 2}, {}]
    J = D.jacobian(tans, ["a", "b", "c"])
    assert J == sp.Matrix([[x, 0, 2], [0, 0, 0]])

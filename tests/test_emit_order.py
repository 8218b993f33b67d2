"""The emission passes that reorder and share work keep every output's value.

`_cse` (SymPy CSE placed before first use) and `demand_order` (reordering
for short live ranges) must not change what a kernel computes: the
statement lists they return are evaluated numerically, in order, at random
inputs and compared with the derivation's own straight-line program
(Program.assignments, before any emission pass). Also: every statement is
defined before it is read, nothing is computed twice, op_count agrees with
SymPy's count_ops, and progress lines go to stderr only.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import sympy as sp

from codegen.support import progress
from codegen.derive.outputs import derive
from codegen.emit.op_count import op_count
from codegen.emit.cse import _cse, _leaves_first, demand_order
from codegen.read.model import load_model
from codegen.derive.program import Program

pytestmark = pytest.mark.module

HERE = Path(__file__).resolve().parent


def evaluate(statements, env):
    """Run (symbol, expr) statements in order on numeric inputs; a statement
    reading an undefined symbol fails (xreplace leaves it symbolic)."""
    env = dict(env)
    for sym, e in statements:
        assert sym not in env, f"{sym} assigned twice"
        value = sp.sympify(e).xreplace(env)
        assert value.is_Number, f"{sym} reads undefined {value.free_symbols}"
        env[sym] = value
    return env


def value(expr, env):
    v = sp.sympify(expr).xreplace(env)
    assert v.is_Number
    return float(v)


def random_inputs(symbols, rng):
    return {s: sp.Float(rng.uniform(-1.5, 1.5), 30) for s in symbols}


@pytest.fixture(scope="module")
def mini():
    model = load_model(HERE / "models" / "mini.toml")
    return model, derive(model)


def inputs_of(d):
    syms = d.symbols
    return (list(syms.q) + list(syms.dq) + list(syms.ddq) + list(syms.tau) + list(syms.fext) + list(syms.s) + list(syms.c)
            + list(syms.params.values()))


@pytest.mark.parametrize("names", [["A"], ["C"], ["Q"], ["A", "C", "Q", "J_tool_world"]])
def test_cse_and_demand_order_keep_every_output(mini, names):
    model, d = mini
    prog = d.program
    outputs = {n: d[n] for n in names}
    exprs = [e for m in outputs.values() for e in m]
    needed = prog.needed(exprs)
    body, final = _cse(needed, exprs)
    assert len(final) == len(exprs)
    order = [final[k] for k in _leaves_first(outputs)]
    ordered = demand_order(body, order)
    # nothing computed that no output reads, nothing left out
    assert {s for s, _ in ordered} <= {s for s, _ in body}
    rng = random.Random(7)
    for _ in range(3):
        env = random_inputs(inputs_of(d), rng)
        ref = evaluate(prog.assignments, env)
        got = evaluate(ordered, env)
        for e, f in zip(exprs, final):
            r, g = value(e, ref), value(f, got)
            assert abs(r - g) <= 1e-20 * (1 + abs(r)), (e, f)


def test_cse_reduces_work(mini):
    """CSE finds sharing the program alone does not have (else it is dead weight)."""
    _, d = mini
    prog = d.program
    exprs = list(d["C"])
    needed = prog.needed(exprs)
    body, final = _cse(needed, exprs)
    assert op_count([e for _, e in body] + final) < op_count([e for _, e in needed] + exprs)


def random_program(n, rng):
    """A random straight-line program over inputs a0..a3 (with shared subterms)."""
    inputs = sp.symbols("a0:4", real=True)
    prog, pool = Program(), list(inputs)
    for _ in range(n):
        x, y, z = (rng.choice(pool) for _ in range(3))
        expr = rng.choice([x * y + z, x - y * z, x * y * z + 1, (x + y) * z])
        v = prog.var(expr)
        if v.is_Symbol and v not in pool:
            pool.append(v)
    return prog, inputs, pool


def test_demand_order_is_a_topological_order_of_exactly_the_needed_statements():
    rng = random.Random(3)
    prog, inputs, pool = random_program(300, rng)
    outputs = [rng.choice(pool[4:]) + rng.choice(pool) for _ in range(6)]
    needed = prog.needed(outputs)
    ordered = demand_order(needed, outputs)
    assert sorted(map(str, ordered)) == sorted(map(str, needed))
    env = {s: sp.Float(rng.uniform(-1, 1), 30) for s in inputs}
    ref, got = evaluate(prog.assignments, env), evaluate(ordered, env)
    for o in outputs:
        assert value(o, ref) == value(o, got)
    # the first output's dependencies come first (computed where needed)
    first = {s for s, _ in prog.needed(outputs[:1])}
    assert {s for s, _ in ordered[:len(first)]} == first


def test_op_count_is_sympy_count_ops():
    a, b, c = sp.symbols("a b c", real=True)
    exprs = [a * b + c, -a / b, a**2 - 3 * c, a * b + c, sp.sin(a) * b]
    assert op_count(exprs) == sum(int(sp.count_ops(e)) for e in exprs)


def test_progress_lines_on_stderr_only(capsys, monkeypatch):
    monkeypatch.delenv("KRANG_CODEGEN_VERBOSE", raising=False)
    monkeypatch.delenv("KRANG_CODEGEN_PROGRESS", raising=False)
    with progress.stage("quick"):
        pass
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("KRANG_CODEGEN_VERBOSE", "1")
    with progress.stage("derive C"):
        pass
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("[codegen] derive C: ") and err.endswith(" s\n")
    monkeypatch.setenv("KRANG_CODEGEN_VERBOSE", "0")
    monkeypatch.setattr(progress, "THRESHOLD", 0.0)
    with progress.stage("slow"):
        pass
    assert capsys.readouterr().err.startswith("[codegen] slow: ")


def test_progress_lines_off_in_tests_and_when_silenced(capsys, monkeypatch):
    """KRANG_CODEGEN_PROGRESS=0 (the suite's default, tests/conftest.py) and silenced()
    (import_urdf(quiet=True)) drop the timing-dependent lines; verbose prints them anyway."""
    monkeypatch.delenv("KRANG_CODEGEN_VERBOSE", raising=False)
    monkeypatch.setattr(progress, "THRESHOLD", 0.0)
    monkeypatch.setenv("KRANG_CODEGEN_PROGRESS", "0")
    progress.report("compiled part.c (1 of 2)", 0.0, always=True)
    assert capsys.readouterr().err == ""
    monkeypatch.delenv("KRANG_CODEGEN_PROGRESS")
    with progress.silenced():
        progress.report("compiled part.c (1 of 2)", 0.0, always=True)
    assert capsys.readouterr().err == ""
    progress.report("compiled part.c (2 of 2)", 0.0, always=True)
    assert capsys.readouterr().err.startswith("[codegen] compiled part.c (2 of 2): ")
    monkeypatch.setenv("KRANG_CODEGEN_PROGRESS", "0")
    monkeypatch.setenv("KRANG_CODEGEN_VERBOSE", "1")
    with progress.silenced():
        progress.report("derive C", 0.0)
    assert capsys.readouterr().err.startswith("[codegen] derive C: ")

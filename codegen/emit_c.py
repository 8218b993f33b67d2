"""Emission: one CSE pass per kernel, then C99 statements as (lhs, rhs) pairs.

A kernel is a set of outputs of the derivation written into caller-owned,
row-major arrays. Only the intermediate variables the outputs need are kept;
SymPy's CSE then finds the sub-expressions shared between them. Nothing here
lays out files: templates do that.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.c import C99CodePrinter


class KernelPrinter(C99CodePrinter):
    """Plain C99 with multiplications instead of pow() for small powers and
    a branch-free sign()."""

    def _print_Pow(self, expr):
        b, e = expr.args
        if e.is_Integer and 2 <= e <= 4:
            base = self.parenthesize(b, 50)
            return "*".join([base] * int(e))
        if e == -1:
            return f"1.0/{self.parenthesize(b, 50)}"
        return super()._print_Pow(expr)

    def _print_Rational(self, expr):
        return repr(float(expr))

    def _print_sign(self, expr):
        x = self._print(expr.args[0])
        return f"(double)(({x} > 0) - ({x} < 0))"


_PRINTER = KernelPrinter()


def ccode(expr) -> str:
    return _PRINTER.doprint(expr)


def op_count(exprs) -> int:
    return int(sum(sp.count_ops(e) for e in exprs))


@dataclass
class Argument:
    name: str
    length: int
    output: bool
    doc: str

    @property
    def decl(self):
        return f"double *{self.name}" if self.output else f"const double *{self.name}"


@dataclass
class Kernel:
    name: str  # C function name without the model prefix
    doc: str
    args: list
    outputs: dict  # argument name -> sympy Matrix (row-major)
    reads: list = field(default_factory=list)  # (declaration, rhs)
    body: list = field(default_factory=list)  # (declaration, rhs)
    writes: list = field(default_factory=list)  # (lvalue, rhs)
    ops: int = 0


def _input_reads(syms, used):
    """Declarations that read q, dq, p into named locals (only those used)."""
    reads = []
    for i, name in enumerate(syms.model.joint_names):
        if syms.q[i] in used:
            reads.append((f"const double {syms.q[i]}", f"q[{i}]"))
        if syms.s[i] in used:
            reads.append((f"const double {syms.s[i]}", f"sin(q[{i}])"))
        if syms.c[i] in used:
            reads.append((f"const double {syms.c[i]}", f"cos(q[{i}])"))
    for i, name in enumerate(syms.model.joint_names):
        if syms.dq[i] in used:
            reads.append((f"const double {syms.dq[i]}", f"dq[{i}]"))
    for k, name in enumerate(syms.model.param_names):
        if syms.params[name] in used:
            reads.append((f"const double {name}", f"p[{k}]"))
    return reads


def _cse(assignments, outputs):
    """CSE over the right sides, each new variable placed before its first use."""
    rhs = [e for _, e in assignments] + outputs
    repl, reduced = sp.cse(rhs, symbols=sp.numbered_symbols("x"), order="none")
    first_use = {}
    for pos, e in enumerate(reduced):
        for s in e.free_symbols:
            first_use.setdefault(s, pos)
    for x, e in reversed(repl):  # a replacement is needed before its users
        pos = first_use.get(x, len(reduced))
        for s in e.free_symbols:
            if first_use.get(s, len(reduced) + 1) > pos:
                first_use[s] = pos
    placed = {}
    for order, (x, e) in enumerate(repl):
        placed.setdefault(first_use.get(x, len(reduced)), []).append((x, e))
    body = []
    for pos, (sym, _) in enumerate(assignments):
        body += placed.get(pos, [])
        body.append((sym, reduced[pos]))
    tail = [p for pos in sorted(placed) if pos >= len(assignments) for p in placed[pos]]
    return body + tail, reduced[len(assignments):]


def emit(kernel: Kernel, derivation) -> Kernel:
    prog, syms = derivation["program"], derivation["symbols"]
    flat = [(name, list(m)) for name, m in kernel.outputs.items()]
    exprs = [e for _, es in flat for e in es]
    needed = prog.needed(exprs)
    body, final = _cse(needed, exprs)
    used = set()
    for _, e in body:
        used |= e.free_symbols
    for e in final:
        used |= sp.sympify(e).free_symbols
    kernel.reads = _input_reads(syms, used)
    kernel.body = [(f"const double {s}", ccode(e)) for s, e in body]
    writes, k = [], 0
    for name, es in flat:
        for i, _ in enumerate(es):
            writes.append((f"{name}[{i}]", ccode(final[k])))
            k += 1
    kernel.writes = writes
    kernel.ops = op_count([e for _, e in body] + list(final))
    return kernel

"""Forward-mode (tangent) differentiation of a straight-line Program.

`tangents(prog, outputs, seeds)` walks the statements the outputs need, in
program order, and gives every statement `t = f(u_1, ..., u_m)` whose
operands carry tangents the tangent

    dt/dx_k = sum_i (df/du_i) dU_i/dx_k          (chain rule, one term per operand)

as new variables of the same Program (Griewank and Walther 2008, "Evaluating
Derivatives", ch. 3: the tangent of an evaluation trace). The partials
df/du_i are the derivatives of one small right-hand side (sympy.diff of a
statement, never of an expanded closed form) and are themselves Program
variables, so they share subexpressions with the primal: a rotated vector's
partial with respect to the vector is the rotation's entry the primal
already holds.

Sparsity is structural: a tangent is a dict {direction: expr} holding only
the directions the statement depends on, and a derivative that is
identically zero is never created. In a tree's recursions this is the
support/subtree sparsity (a link velocity depends on the q of its ancestors
only; a joint torque on those of its support and its subtree).

Directions are any hashable keys ordered by `key=`; `seeds` gives the
tangents of the inputs: for joint j's position, q_j -> {("q", j): 1} and,
since the project keeps sin and cos of q_j as symbols s_j, c_j (computed
once in C), s_j -> {("q", j): c_j}, c_j -> {("q", j): -s_j} (`joint_seeds`).
Parameters, velocities, accelerations, torques: seed them with 1 to
differentiate with respect to them (codegen/derive/symbols.py names them).

`constants`: program variables treated as independent of every direction
(their definitions are not walked): forward dynamics' derivatives evaluate
the inverse dynamics at a = ddq(q, v, tau) and differentiate with ddq held
fixed (Carpentier and Mansard 2018, "Analytical derivatives of rigid body
dynamics algorithms", RSS, sec. III-B).

sign(x) (Coulomb friction) is differentiated as 0: its derivative is zero
away from x = 0, and the impulse at x = 0 has no value a kernel could
return.
"""
from __future__ import annotations

import sympy as sp

from .program import Program


def joint_seeds(syms, directions=("q", "v")) -> dict:
    """Seeds of joint positions ("q": q, s, c) and velocities ("v": dq),
    accelerations ("a": ddq) and torques ("tau") of every joint."""
    seeds = {}
    for j in range(syms.model.ndof):
        if "q" in directions:
            key = ("q", j)
            seeds[syms.q[j]] = {key: sp.S.One}
            seeds[syms.s[j]] = {key: syms.c[j]}
            seeds[syms.c[j]] = {key: -syms.s[j]}
        for kind, vec in (("v", syms.dq), ("a", syms.ddq), ("tau", syms.tau)):
            if kind in directions:
                seeds[vec[j]] = {(kind, j): sp.S.One}
    return seeds


def _partial(expr, sym):
    """d expr / d sym of one statement; sign's derivative (2 DiracDelta) is 0."""
    d = sp.diff(expr, sym)
    if d.has(sp.DiracDelta):
        d = d.replace(sp.DiracDelta, lambda *_: sp.S.Zero)
    return d


def _live(prog: Program, outputs, constants) -> list:
    """The statements the outputs need, not descending into constants, in program order."""
    definition = prog._definition
    live = set()
    stack = [s for e in outputs for s in sp.sympify(e).free_symbols]
    while stack:
        s = stack.pop()
        if s in live or s not in definition:
            continue
        live.add(s)
        if s not in constants:
            stack.extend(definition[s].free_symbols)
    return [(s, e) for s, e in prog.assignments if s in live and s not in constants]


def tangents(prog: Program, outputs, seeds: dict, constants=(), key=None) -> list:
    """{direction: expr} of every output expression (missing: identically zero).

    New statements are appended to `prog`; the outputs' own statements are
    untouched, so kernels that do not use the tangents come out as before."""
    constants = set(constants)
    position = {s: i for i, (s, _) in enumerate(prog.assignments)}
    order = lambda s: (position.get(s, -1), s.name)  # noqa: E731 - deterministic, not set order
    tan = {s: dict(t) for s, t in seeds.items()}
    for sym, expr in _live(prog, outputs, constants):
        deps = sorted((s for s in expr.free_symbols if s in tan), key=order)
        if deps:
            tan[sym] = _combine(prog, expr, deps, tan, key)
    out = []
    for e in outputs:
        e = sp.sympify(e)
        if e in tan:
            out.append(tan[e])
        else:
            deps = sorted((s for s in e.free_symbols if s in tan), key=order)
            out.append(_combine(prog, e, deps, tan, key) if deps else {})
    return out


def _combine(prog, expr, deps, tan, key):
    terms = {}
    for s in deps:
        partial = prog.var(_partial(expr, s))
        if partial == 0:
            continue
        for k, ds in tan[s].items():
            terms.setdefault(k, []).append(partial * ds)
    result = {}
    for k in sorted(terms, key=key):
        v = prog.var(sp.Add(*terms[k]))
        if v != 0:
            result[k] = v
    return result


def jacobian(tangent_list, directions) -> sp.Matrix:
    """Rows: outputs; columns: `directions` (zeros where a tangent lacks one)."""
    return sp.Matrix(len(tangent_list), len(directions),
                     lambda i, j: tangent_list[i].get(directions[j], sp.S.Zero))

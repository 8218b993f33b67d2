"""Emission: one CSE pass per kernel, then C99 statements as (lhs, rhs) pairs.

A kernel is a set of outputs of the derivation written into caller-owned,
row-major arrays. Only the intermediate variables the outputs need are kept;
SymPy's CSE then finds the sub-expressions shared between them. Nothing here
lays out files: templates do that.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import sympy as sp

from .cnames import symbol_locals
from .cprint import ELEMENT, KernelPrinter
from .op_count import op_count
from ..support.progress import report


@dataclass
class Argument:
    name: str
    length: int
    output: bool

    @property
    def decl(self):
        return f"double *{self.name}" if self.output else f"const double *{self.name}"


@dataclass
class Kernel:
    name: str  # C function name without the model prefix
    doc: str
    args: list
    outputs: dict  # argument name -> sympy Matrix (row-major)
    sources: dict = field(default_factory=dict)  # argument name -> the derivation output it writes
    setup: list = field(default_factory=list)  # statements before the body
    body: list = field(default_factory=list)  # (declaration, rhs)
    writes: list = field(default_factory=list)  # (lvalue, rhs)
    ops: int = 0
    helpers: list = field(default_factory=list)  # static routines it calls: (signature, Kernel)
    straight: Kernel | None = None  # the same kernel in one straight line (batch kernels)
    write_at: list | None = None  # per write: the body statement it follows (-1: first); None: at the end
    reads: set = field(default_factory=set)  # the input arrays it reads
    cold: bool = False  # a helper off the common path (KKCOLD: never inlined)
    noinline: bool = False  # a chunk of a long kernel (KKNOINLINE: codegen/emit/chunks.py)
    prefetch: str = ""  # KKPREFETCH's condition ("1"; a routine's argument), "" for none
    vector_block: str = ""  # its last statement, a loop block, as a batch form reprints it (pair_loops.py)
    arrays: dict = field(default_factory=dict)  # symbol kind -> input array, where not named so (dq -> v)

    @property
    def lines(self) -> list:
        """(lhs, rhs) of the body with each write placed (write_at), as printed."""
        if self.write_at is None:
            return self.body + self.writes
        after = {}
        for pos, w in zip(self.write_at, self.writes):
            after.setdefault(pos, []).append(w)
        out = zero_runs(after.get(-1, []), {a.name: a.length for a in self.args if a.output})
        for pos, st in enumerate(self.body):
            out += [st] + after.get(pos, [])
        return out


# Runs of at least this many structural zeros are cleared by one memset.
ZERO_RUN = 4
# An output of at least this many entries (16 KB), at least half of them
# structural zeros, is cleared whole by one memset before anything else.
WHOLE_CLEAR = 2048


def zero_runs(writes, lengths=None) -> list:
    """Writes with runs of ZERO_RUN or more `X[i] = 0.0` (same array,
    consecutive i) as one memset each: a regressor is mostly structural zeros
    (Talos: 11,765 of its 13,312 entries), and one store instruction per entry
    made most of its machine code. All-zero bytes are +0.0 (IEEE 754, C99
    Annex F). An output X of lengths[X] >= WHOLE_CLEAR entries, at least
    half of them zero writes, is instead cleared whole by one memset first
    and its zero writes dropped (its other entries are written twice): one
    call that streams the array beats dozens of memsets of row segments and
    hundreds of single stores between them (measured on Talos' regressors:
    docs/design-notes.md#zero-runs-and-whole-clears). Smaller outputs (Talos' A, C, Jacobians: at most
    1,024 entries) keep their runs."""
    zero = [(m.group(1), int(m.group(2))) if m and rhs == "0.0" else None
            for lhs, rhs in writes for m in [_ARRAY_ELEMENT.fullmatch(lhs)]]
    count = {}
    for z in zero:
        if z:
            count[z[0]] = count.get(z[0], 0) + 1
    whole = sorted(name for name, n in (lengths or {}).items() if n >= WHOLE_CLEAR and 2 * count.get(name, 0) >= n)
    out = [("", f"memset({name}, 0, {lengths[name]} * sizeof {name}[0])") for name in whole]
    writes = [w for w, z in zip(writes, zero) if not (z and z[0] in whole)]
    zero = [z for z in zero if not (z and z[0] in whole)]
    k = 0
    while k < len(writes):
        end = k + 1
        while (zero[k] and end < len(writes) and zero[end]
               and zero[end] == (zero[k][0], zero[k][1] + end - k)):
            end += 1
        if zero[k] and end - k >= ZERO_RUN:
            name, start = zero[k]
            out.append(("", f"memset({name} + {start}, 0, {end - k} * sizeof {name}[0])"))
            k = end
        else:
            out.append(writes[k])
            k += 1
    return out


_ARRAY_ELEMENT = re.compile(r"([A-Za-z_]\w*)\[(\d+)\]")


# sin and cos of every joint coordinate, from one vectorized call (the source template's sincos_q)
SINCOS_SETUP = ("double sq[NDOF], cq[NDOF]", "sincos_q(q, sq, cq)")


def sincos_setup(model) -> list:
    """SINCOS_SETUP; on a free-flyer sq[i], cq[i] of velocity index i come from
    q[i + 1] (the first six, of base coordinates, are computed and never read)."""
    if not model.floating_base:
        return list(SINCOS_SETUP)
    return [SINCOS_SETUP[0], f"sincos_q(q + {model.q_offset}, sq, cq)"]


def _input_reads(syms, used, link_params=(), sincos=True, arrays=None):
    """Setup statements, and assignments reading q, dq, p into named locals
    (only those used; the right sides are symbols that print as array
    elements). sin and cos of all joints come from one vectorized call
    (sincos_q in the source template)."""
    reads, setup = [], []
    if sincos and used & (set(syms.s) | set(syms.c)):
        setup = sincos_setup(syms.model)
    arrays = arrays or {}
    element = lambda array, i: sp.Symbol(f"{arrays.get(array, array)}[{i}]")  # noqa: E731
    # a free-flyer's pose is q[0:7] and joint i's coordinate q[i + 1] (codegen/derive/symbols.py)
    for k, sym in enumerate((syms.base_position or []) + (syms.base_quaternion or [])):
        if sym in used:
            reads.append((sym, element("q", k)))
    shift = {"q": syms.model.q_offset}
    for i in range(syms.model.ndof):
        for sym, source in ((syms.q[i], "q"), (syms.s[i], "sq"), (syms.c[i], "cq"), (syms.dq[i], "dq"),
                            (syms.ddq[i], "ddq"), (syms.tau[i], "tau")):
            if sym in used:
                reads.append((sym, element(source, i + shift.get(source, 0))))
    for k, sym in enumerate(syms.fext):
        if sym in used:
            reads.append((sym, element("fext", k)))
    for k, sym in enumerate(syms.lam):
        if sym in used:
            reads.append((sym, element("lam", k)))
    for k, name in enumerate(syms.model.param_names):
        if syms.params[name] in used:
            reads.append((syms.params[name], element("pl" if syms.params[name] in link_params else "p", k)))
    return setup, reads


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


def _insert(body, statements):
    """Statements placed right after their last dependency (dependency order kept)."""
    at = {sym: pos for pos, (sym, _) in enumerate(body)}
    after = {}
    for sym, e in statements:
        pos = max((at[d] for d in e.free_symbols if d in at), default=-1)
        at[sym] = pos
        after.setdefault(pos, []).append((sym, e))
    out = after.get(-1, [])
    for pos, st in enumerate(body):
        out += [st] + after.get(pos, [])
    return out


def demand_order(body, outputs):
    """Reorder assignments (given in dependency order) so that each is
    computed just before the first statement that needs it, following the
    outputs in order, and the deeper of two operands first (Sethi-Ullman).
    Short live ranges mean fewer register spills in one long straight-line
    function (measured faster: docs/design-notes.md#statement-order-and-output-writes)."""
    rhs = dict(body)
    height, deps = {}, {}
    for sym, e in body:  # dependencies computed once (free_symbols walks the tree)
        deps[sym] = [d for d in e.free_symbols if d in rhs]
        height[sym] = 1 + max((height[d] for d in deps[sym]), default=0)
    ranks = {d: (h, d.name) for d, h in height.items()}  # name: deterministic ties
    rank = ranks.__getitem__
    order, done = [], set()
    for root in outputs:
        stack = [(d, False) for d in sorted((d for d in sp.sympify(root).free_symbols if d in rhs), key=rank)]
        while stack:
            sym, ready = stack.pop()
            if sym in done:
                continue
            if ready:
                done.add(sym)
                order.append((sym, rhs[sym]))
                continue
            stack.append((sym, True))
            # O(deps), not O(program): no set difference with all of rhs per statement
            stack.extend((d, False) for d in sorted((d for d in deps[sym] if d not in done), key=rank))
    return order


def _leaves_first(outputs):
    """Flat output positions, deepest joints first, across all outputs: entry
    (i, j) of an NDOF x NDOF matrix by (max(i, j), min(i, j)), entry i of a
    vector by (i, i), column j of any other matrix by (j, -1); descending.
    Joints are numbered parents first, so each subtree's quantities are
    computed right before the entries that consume them: shorter live ranges,
    fewer spills, smaller and faster code (measured:
    docs/design-notes.md#statement-order-and-output-writes)."""
    keys, base = [], 0
    for m in outputs.values():
        for i in range(m.rows):
            for j in range(m.cols):
                if m.rows == m.cols:
                    key = (max(i, j), min(i, j))
                elif m.cols == 1:
                    key = (i, i)
                else:
                    key = (j, -1)
                keys.append((key, -base - i * m.cols - j))
        base += m.rows * m.cols
    return [-k for _, k in sorted(keys, reverse=True)]


@dataclass
class Extra:
    """Statements emission does not derive: calls of shared routines
    (codegen/emit/routines.py). `statements` are (symbol, dependencies, lhs, rhs)."""
    live: list = field(default_factory=list)  # expressions to keep (the calls' arguments)
    statements: list = field(default_factory=list)
    setup: list = field(default_factory=list)
    sincos: bool = False  # the calls need sq and cq
    link_params: set = field(default_factory=set)  # parameters read through pl (in a routine)
    routine: bool = False  # a routine: sq, cq are its arguments
    order: list | None = None  # flat output positions in computing order (default: _leaves_first)
    roots: list = field(default_factory=list)  # statements to keep though no output reads them (calls)


def emit(kernel: Kernel, derivation, extra: Extra | None = None) -> Kernel:
    t0 = time.perf_counter()
    extra = extra or Extra()
    prog, syms = derivation.program, derivation.symbols
    flat = [(name, list(m)) for name, m in kernel.outputs.items()]
    exprs = [e for _, es in flat for e in es]
    needed = prog.needed(exprs + extra.live)
    body, final = _cse(needed, exprs)
    used = set()
    for _, e in body:
        used |= e.free_symbols
    for e in final:
        used |= sp.sympify(e).free_symbols
    for e in extra.live:
        used |= sp.sympify(e).free_symbols
    kernel.setup, reads = _input_reads(syms, used, extra.link_params, not extra.routine, kernel.arrays)
    if extra.sincos and not kernel.setup:
        kernel.setup = sincos_setup(syms.model)
    kernel.setup += extra.setup
    special = {sym: None if lhs is None else (lhs, rhs) for sym, _, lhs, rhs in extra.statements}
    body = _insert(reads + body, [(sym, sp.Tuple(*deps)) for sym, deps, _, _ in extra.statements])
    # each value computed where it is needed, each output written when known
    order = extra.order if extra.order is not None else _leaves_first(kernel.outputs)
    body = demand_order(body, [final[k] for k in order] + extra.roots)
    c = KernelPrinter(symbol_locals(syms)).doprint  # one printer: building one per statement took ~1/3 of emit
    kernel.body = [special[s] if s in special else (f"const double {c(s)}", c(e))
                   for s, e in body if special.get(s, True) is not None]
    writes, k = [], 0
    for name, es in flat:
        for i, _ in enumerate(es):
            writes.append((f"{name}[{i}]", c(final[k])))
            k += 1
    kernel.writes = writes
    kernel.ops = op_count([e for s, e in body if s not in special] + list(final))
    kernel.reads = _void_unused_inputs(kernel)
    report(f"emit {kernel.name}", t0)
    return kernel


def _void_unused_inputs(kernel: Kernel):
    """`(void)x;` for each input array the kernel never reads (a 1-DOF C is
    zero), so that -Wextra's unused-parameter warning stays quiet."""
    read = {m.group(1) for _, rhs in kernel.body for m in [ELEMENT.fullmatch(rhs)] if m}
    if any(st.startswith("sincos_q(q") for st in kernel.setup):
        read.add("q")
    for _, rhs in kernel.body:  # calls of shared routines read their pointer arguments
        if "(" in rhs and not ELEMENT.fullmatch(rhs):
            read |= set(re.findall(r"\w+", rhs))
    kernel.setup += [f"(void){a.name}" for a in kernel.args if not a.output and a.name not in read]
    return read

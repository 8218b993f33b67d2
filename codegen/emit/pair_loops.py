"""Emission of forward_dynamics_derivatives from its pair form
(codegen/derive/dynamics_derivatives.py, PairForm): each joint's eight
6-vectors (J, dV, dA, dAv, alpha, beta, G, Gv) and its friction derivative
at a = ddq as straight-line code into a local array kk_pv (one CSE pass, like
every kernel), Minv from the L^T D L factors straight-line into its output,
then compact C loops: per row r its vectors in locals and the pairs (r, j) of
its support and subtree from tables (four 6-dot products per support pair,
two per subtree pair) into one matrix [dq | dv], then the dense products
dddq_dq = -Minv dq and dddq_dv = -Minv dv (Carpentier and Mansard 2018,
eq. 8) in register blocks of rows by columns, which vectorize.

Why loops here, in a project of straight-line kernels: -Minv times the two
matrices as 2 n L^T D L solves made most of the kernel's machine code,
past the L1 instruction cache, as long dependency chains; the loops measured
faster and smaller (docs/design-notes.md#pair-loops).
inverse_dynamics_derivatives stays straight-line (FORMS below).

No code prefetch (KKPREFETCH) for this kernel: it runs hot, in MPC loops.
With a loop block before kk_end gcc keeps that label at the function's end,
and prefetching the whole function on every call cost time in a loop form
of inverse_dynamics_derivatives (docs/design-notes.md#code-prefetch; in the
straight-line kernels gcc
moves kk_end next to kk_begin, which makes the prefetch a no-op).
"""
from __future__ import annotations

import dataclasses

import sympy as sp

from .cse import Extra, Kernel, emit
from .layout import place_writes

# The pair forms' derivation outputs and the kernels' outputs emitted from them. Only the forward
# dynamics' derivatives: inverse_dynamics_derivatives as loops was no faster than its
# straight-line form, whose dot products fold the model's zeros; the forward dynamics' loops
# replace 2 n L^T D L solves (long dependency chains) and measured faster
# (docs/design-notes.md#pair-loops).
FORMS = {"dddq_pairs": ("dddq_dq", "dddq_dv")}


def pair_form_key(kernel: Kernel):
    """The key of the pair form a kernel is emitted from, or None."""
    sources = set(kernel.sources.values())
    return next((key for key, outs in FORMS.items() if sources >= set(outs)), None)


STRIDE = 49  # per joint in kk_pv: its 8 vectors of 6 (PairForm.VECTORS), then its friction derivative
FRICTION = 48


def _sum(terms) -> str:
    """A balanced sum: short dependency chains (no reassociation without -ffast-math)."""
    while len(terms) > 1:
        terms = [f"({terms[i]} + {terms[i + 1]})" if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
    return terms[0]


def _dot(row: str, col: int) -> str:
    """Row r's vector (locals row0..row5) . joint j's vector at offset col of kk_c."""
    return _sum([f"{row}{i} * kk_c[{col + i}]" for i in range(6)])


def _lists(pairs, n: int):
    """Per row r the columns j of `pairs`, concatenated, and the n + 1 offsets into them."""
    cols, start = [], [0]
    for r in range(n):
        cols += [j for rr, j in pairs if rr == r]
        start.append(len(cols))
    return cols, start


def _table(name: str, values) -> str:
    # automatic, not static: the kernels keep no static storage (tests/test_pipeline_mini.py); a few
    # hundred bytes filled on the stack per call, against microseconds of arithmetic
    return f"const unsigned short {name}[{max(len(values), 1)}] = {{{', '.join(map(str, values)) or '0'}}};"


def _pair_loops(form, n: int, y: str) -> tuple[list, int]:
    """A block filling the matrix y = [dq | dv] (n rows, product_width(n) apart, dv from
    column half_width(n)) from kk_pv, and its operation count: per row r, its vectors
    held in locals, the pairs (r, j) of its support (j an ancestor-or-self), then those
    of its subtree (j a strict descendant)."""
    w, h = product_width(n), half_width(n)
    o = {name: 6 * k for k, name in enumerate(form.VECTORS)}
    sup, sup0 = _lists(form.support, n)
    sub, sub0 = _lists(form.subtree, n)
    load = lambda name, key: [f"    const double {name}{i} = kk_pv[{STRIDE} * kk_r + {o[key] + i}];"  # noqa: E731
                              for i in range(6)]
    body = [_table("kk_sup", sup), _table("kk_sup0", sup0), _table("kk_sub", sub), _table("kk_sub0", sub0),
            f"memset({y}, 0, {n * w} * sizeof {y}[0]);",
            f"for (int kk_r = 0; kk_r < {n}; kk_r++) {{",
            *load("kk_a", "alpha"), *load("kk_b", "beta"), *load("kk_j", "J"),
            "    for (int kk_t = kk_sup0[kk_r]; kk_t < kk_sup0[kk_r + 1]; kk_t++) {",
            f"        const double *kk_c = kk_pv + {STRIDE} * kk_sup[kk_t];",
            f"        {y}[{w} * kk_r + kk_sup[kk_t]] = {_dot('kk_a', o['dA'])} + {_dot('kk_b', o['dV'])};",
            f"        {y}[{w} * kk_r + {h} + kk_sup[kk_t]] = {_dot('kk_a', o['dAv'])} + {_dot('kk_b', o['J'])};",
            "    }",
            "    for (int kk_t = kk_sub0[kk_r]; kk_t < kk_sub0[kk_r + 1]; kk_t++) {",
            f"        const double *kk_c = kk_pv + {STRIDE} * kk_sub[kk_t];",
            f"        {y}[{w} * kk_r + kk_sub[kk_t]] = {_dot('kk_j', o['G'])};",
            f"        {y}[{w} * kk_r + {h} + kk_sub[kk_t]] = {_dot('kk_j', o['Gv'])};",
            "    }",
            f"    {y}[{w + 1} * kk_r + {h}] += kk_pv[{STRIDE} * kk_r + {FRICTION}];",  # dv's diagonal
            "}"]
    return body, len(form.support) * 46 + len(form.subtree) * 22 + n


def _blocks(form, n: int) -> list:
    """Per row i, the range [b0, b1) of joints in i's root subtree (the subtree
    of its outermost moving ancestor): Minv[i, m] is zero outside it, and so
    are the pair form's rows m inside it outside the same range. [(0, n)] * n
    when a root subtree is not a contiguous range of joints (not Pinocchio's
    depth-first order) or there is only one (a chain, a free-flyer)."""
    root = [min(j for rr, j in form.support if rr == r) for r in range(n)]
    out = []
    for i in range(n):
        members = [m for m in range(n) if root[m] == root[i]]
        if members != list(range(members[0], members[-1] + 1)):
            return [(0, n)] * n
        out.append((members[0], members[-1] + 1))
    return out


# The product's register block: ROWS rows of Minv times LANES columns of [dq | dv]
# (ROWS x LANES accumulators: 4 zmm or 8 ymm registers): the fastest of the shapes
# measured, with AVX-512 and AVX2 alike (docs/design-notes.md#pair-loops).
LANES, ROWS = 8, 4


def half_width(n: int) -> int:
    """Columns of each half of [dq | dv]: n, or LANES for a robot of fewer joints (zeros after)."""
    return max(n, LANES)


def product_width(n: int) -> int:
    """Row stride of the matrix [dq | dv] the product reads: dv starts at column half_width(n)."""
    return 2 * half_width(n)


def _starts(b0: int, b1: int, h: int, width: int = LANES) -> list:
    """First columns of `width`-wide chunks covering columns [b0, b1) of a half h wide,
    each inside the half: the last one moved back to end at b1 (overlapping its
    neighbour, whose columns it computes again), so that every chunk is written
    whole to dq or to dv. A block narrower than `width` gets one chunk from b0, or
    from h - width (the columns it adds outside the block are zeros), or from 0 in a
    half narrower than `width` (the batch form's, of a robot of one joint)."""
    if b1 - b0 < width:
        return [max(0, min(b0, h - width))]
    return sorted(set(range(b0, b1 - width, width)) | {b1 - width})


def _groups(blocks, n: int, width: int = LANES) -> tuple[list, list]:
    """Rows of Minv in groups of ROWS from one block (the last row repeated to fill a
    group), each with its block's range of m and the column chunks of [dq | dv] it
    needs, `width` columns each: (rows..., m0, m1, first chunk, chunk end) and the
    chunks' first columns. width < LANES (the batch form): no chunk past column n
    of its half, so that each is stored whole (min(width, n) columns)."""
    h = half_width(n) if width == LANES else n
    groups, starts = [], []
    for b0, b1 in sorted(set(blocks)):
        first = len(starts)
        starts += [c + off for off in (0, half_width(n)) for c in _starts(b0, b1, h, width)]
        for r in range(b0, b1, ROWS):
            rows = [min(r + k, b1 - 1) for k in range(ROWS)]
            groups.append((*rows, b0, b1, first, len(starts)))
    return groups, starts


# The batch form (codegen/emit/batch.py) reprints the block with every double a vector of states:
# ROWS x LANES accumulators would be 32 vector registers (AVX2 has 16, AVX-512 32: spills). It
# walks each chunk in steps of BATCH_COLUMNS columns, 8 accumulators: measured on Krang (N = 64,
# best of 100 calls, load ~12) 17 % faster with AVX2, 5 % with AVX-512, than 8 columns; 1 and 4
# columns were slower than 2. Its chunks are BATCH_COLUMNS wide, not steps through LANES-wide
# chunks: those overlap (Solo12 on a free-flyer: chunks 0, 8 and 10 of each half of 18, a third
# more products than its 18 columns).
BATCH_COLUMNS = 2


def _product(form, n: int, minv: str, y: str, dq: str, dv: str, cols: int = LANES) -> tuple[list, int]:
    """dq = -minv kk_dq, dv = -minv kk_dv (minv: the kernel's output, already
    written; `y`: [kk_dq | kk_dv] row-major, product_width(n) apart), ROWS rows by
    LANES columns at a time in local accumulators, which the compiler keeps in
    vector registers. Minv is block diagonal by root subtree (a fixed base's legs
    and torso: Talos' 32 x 32 has blocks of 6, 6 and 20), and kk_dq, kk_dv too:
    each group of rows runs over its block only (the columns a chunk holds
    outside it are zeros in y and come out zero). `cols` < LANES: chunks of that
    many columns (the batch form's block), covering each half's n columns without
    the LANES-wide chunks' overlap. Finer sparsity (a row's
    support and subtree as runs of columns) was measured: faster on Talos,
    slower on Solo12 with a free-flyer, whose short runs do not vectorize
    (docs/design-notes.md#pair-loops)."""
    blocks = _blocks(form, n)
    groups, starts = _groups(blocks, n, cols)
    w, h = product_width(n), half_width(n)
    rows = range(ROWS)
    zero = [] if set(blocks) == {(0, n)} else [  # every entry is written if there is one block
        f"memset({dq}, 0, {n * n} * sizeof {dq}[0]);", f"memset({dv}, 0, {n * n} * sizeof {dv}[0]);"]
    body = [_table("kk_grp", [x for g in groups for x in g]), _table("kk_col", starts), *zero,
            f"for (int kk_g = 0; kk_g < {len(groups)}; kk_g++) {{",
            f"    const unsigned short *kk_h = kk_grp + {ROWS + 4} * kk_g;",
            *(f"    const int kk_i{k} = kk_h[{k}];" for k in rows),
            f"    for (int kk_c = kk_h[{ROWS + 2}]; kk_c < kk_h[{ROWS + 3}]; kk_c++) {{"]
    store = str(min(cols, n))  # a robot of fewer than LANES (or cols) joints stores its n columns
    body += [
        "        const int kk_j0 = kk_col[kk_c];",
        f"        double {', '.join(f'kk_o{k}[{cols}]' for k in rows)};",
        *(f"        memset(kk_o{k}, 0, sizeof kk_o{k});" for k in rows),
        f"        for (int kk_m = kk_h[{ROWS}]; kk_m < kk_h[{ROWS + 1}]; kk_m++) {{",
        # Minv is symmetric: its column kk_m, not its row, so that gcc does not vectorize over kk_m
        # (it did for Talos, and ran slower than the row-by-row product)
        f"            const double {', '.join(f'kk_s{k} = {minv}[{n} * kk_m + kk_i{k}]' for k in rows)};",
        f"            const double *kk_w = {y} + {w} * kk_m + kk_j0;",
        f"            for (int kk_k = 0; kk_k < {cols}; kk_k++) {{",
        *(f"                kk_o{k}[kk_k] -= kk_s{k} * kk_w[kk_k];" for k in rows),
        "            }",
        "        }",
        # a chunk lies in one half (_starts): whole rows of LANES stores, which vectorize
        f"        double *kk_d = kk_j0 < {h} ? {dq} + kk_j0 : {dv} + (kk_j0 - {h});",
        # (memcpy: stores of the accumulator arrays as they are; an element loop let gcc
        # turn the accumulators into scalars, unvectorized, at twice the time)
        *(f"        memcpy(kk_d + {n} * kk_i{k}, kk_o{k}, {store} * sizeof kk_o{k}[0]);" for k in rows),
        "    }", "}"]
    return body, 4 * sum((b1 - b0) ** 2 for b0, b1 in blocks)  # the products' own operations, not the padding's


def _block(lines) -> str:
    return "{\n" + "\n".join(f"        {x}" for x in lines) + "\n    }"


def emit_pairs(kernel: Kernel, derivation) -> Kernel:
    """The kernel from its pair form and Minv (forward_dynamics_derivatives, the one
    kernel of FORMS: it always writes Minv too)."""
    key = pair_form_key(kernel)
    form = derivation.pair_forms[key]
    n = len(form.vectors)
    arg = {src: a for a, src in kernel.sources.items()}
    outputs = {"kk_pv": sp.Matrix([x for r in range(n) for x in (*form.vectors[r], form.friction[r])]),
               arg["Minv"]: derivation.outputs["Minv"]}
    keys = [(r // STRIDE, r // STRIDE) for r in range(n * STRIDE)]  # joint by joint, the deepest first
    keys += [(max(i, j), min(i, j)) for i in range(n) for j in range(n)]
    order = sorted(range(len(keys)), key=lambda s: (keys[s], -s), reverse=True)
    k = emit(dataclasses.replace(kernel, outputs=outputs, setup=[], body=[], writes=[]), derivation,
             Extra(order=order))
    place_writes(k)
    k.setup += [f"double kk_pv[{n * STRIDE}]", f"double kk_y[{n * product_width(n)}]"]
    dq, dv = (arg[s] for s in FORMS[key])
    loops, ops = _pair_loops(form, n, "kk_y")
    product, pops = _product(form, n, arg["Minv"], "kk_y", dq, dv)
    k.body.append(("", _block(loops + product)))
    k.vector_block = _block(loops + _product(form, n, arg["Minv"], "kk_y", dq, dv, BATCH_COLUMNS)[0])
    k.ops += ops + pops
    return k

"""Emission of a kernel that calls shared subtree routines (codegen/derive/subtrees.py).

Each routine is a static function over instance 0's indices; an instance
calls it with q, sq, cq, dq shifted by its joint offset and `pl` = p shifted
by its parameter offset (geometry parameters, shared, are read from p). The
results land in a local array o<n> that the kernel reads like an input;
the subtree's own blocks of A and C, and the Jacobian columns of its joints,
it writes into the kernel's outputs itself (blk_A, blk_C, blk_J<m>: the
block's first entry, rows NDOF apart), which spares the kernel a copy (the
kernel's input guard, codegen/emit/layout.guard_inputs, keeps outputs that
alias inputs right). The kernel also keeps its
straight-line form (`Kernel.straight`) for the batch kernels, which reprint
statements over vector types.
"""
from __future__ import annotations

import dataclasses

import sympy as sp

from .cnames import routine_name, symbol_locals
from .cprint import ccode
from .cse import Argument, Extra, Kernel, emit
from .layout import place_writes
from ..derive.derivation import Derivation
from ..derive.subtrees import DIRECT

ROUTINE_INPUTS = ("q", "sq", "cq", "dq", "p", "pl", "vin", "pose")


def _inputs(part, syms):
    """The routine's inputs: sin and cos of q, q and dq where it reads them
    (fewer pointers for the kernel's input guard to test), p and pl, vin if
    it depends on the velocity above it, pose if on the pose."""
    exprs = part.outputs + [e for *_, e, _ in part.blocks]
    free = set().union(*(sp.sympify(e).free_symbols for e in exprs))
    for _, e in part.program.needed(exprs):
        free |= e.free_symbols
    reads = {"q": free & set(syms.q), "dq": free & set(syms.dq), "p": True, "sq": True, "cq": True, "pl": True,
             "vin": part.vin, "pose": part.pose}
    return [a for a in ROUTINE_INPUTS if reads[a]]


def _shift(name, offset):
    return f"{name} + {offset}" if offset else name


def emit_split(kernel: Kernel, derivation, split, straight: bool) -> Kernel:
    """kernel.sources name its outputs' matrices in `split.outputs`;
    `straight`: also emit the one-line form (batch kernels)."""
    syms = derivation.symbols
    ndof = syms.model.ndof
    arg_of = {src: arg for arg, src in kernel.sources.items()}
    plain = emit(dataclasses.replace(kernel, setup=[], body=[], writes=[]), derivation) if straight else None
    helpers, corner, inputs_of = [], [], []
    for n, part in enumerate(split.parts):
        name = routine_name(kernel.name, n)
        inputs = _inputs(part, syms)
        inputs_of.append(inputs)
        outs = list(dict.fromkeys(b for b, *_ in part.blocks))  # the blocks it writes
        # no `out` if the kernel needs none of its results (subtrees hanging from a fixed base)
        args = [Argument(a, 0, False) for a in inputs] + [Argument("out", len(part.outputs), True)] * bool(part.kept)
        args += [Argument(f"blk_{b}", 0, True) for b in outs]
        first = min(j for _, _, j, *_ in part.blocks)  # the subtree's first joint
        corner.append(first)
        matrices = {"out": sp.Matrix([e if s in part.kept else sp.S.Zero for s, e in enumerate(part.outputs)])}
        matrices.update({f"blk_{b}": sp.Matrix([e for bb, _, _, e, _ in part.blocks if bb == b]) for b in outs})
        h = Kernel(name, f"{kernel.name} of the subtree at frame {part.group.frames[0][0]} and the "
                         f"{len(part.group.frames) - 1} subtree(s) like it.", args, matrices)
        keys = part.order + [k for b in outs for bb, _, _, _, k in part.blocks if bb == b]
        order = sorted(range(len(keys)), key=lambda s: (keys[s], -s), reverse=True)
        emit(h, Derivation(part.program, syms),  # the routine's own program
             Extra(link_params=part.link_params, routine=True, order=order))
        # entry (i, j) of a block at (i - first) * NDOF + (j - first) from its pointer if
        # its rows are joints (A, C), else (a Jacobian's row i) at i * NDOF + (j - first)
        where = [f"blk_{b}[{(i - first if part.targets[b][1] else i) * ndof + j - first}]" for b in outs
                 for bb, i, j, _, _ in part.blocks if bb == b]
        h.writes = [w for s, w in enumerate(h.writes[:len(part.outputs)]) if s in part.kept] + \
                   [(lhs, rhs) for lhs, (_, rhs) in zip(where, h.writes[len(part.outputs):])]
        place_writes(h)
        signature = f"{name}({', '.join(a.decl for a in args)})"
        helpers.append((signature, h))
    extra = Extra(sincos=True)
    names = symbol_locals(syms)
    for c, call in enumerate(split.calls):
        part = split.parts[call.part]
        group = part.group
        joff, poff = group.joint_offset[call.instance], group.param_offset[call.instance]
        if part.kept:
            extra.setup.append(f"double {call.array}[{len(part.outputs)}]")
        extra.live += call.vin + call.pose
        vin = f"(const double[6]){{{', '.join(ccode(e, names) for e in call.vin)}}}" if call.vin else "0"
        pose = f"(const double[12]){{{', '.join(ccode(e, names) for e in call.pose)}}}"
        value = {"q": _shift("q", joff), "sq": _shift("sq", joff), "cq": _shift("cq", joff),
                 "dq": _shift("dq", joff), "p": "p", "pl": _shift("p", poff), "vin": vin, "pose": pose}
        args = ", ".join(value[a] for a in inputs_of[call.part])
        blocks = []
        for a in helpers[call.part][1].args:
            if a.name.startswith("blk_"):
                target, rows = part.targets[a.name[len("blk_"):]]
                column = corner[call.part] + joff
                blocks.append(_shift(arg_of[target[call.instance]], column * (ndof + 1) if rows else column))
        text = f"{helpers[call.part][1].name}({', '.join([args, *[call.array] * bool(part.kept), *blocks])})"
        deps = sorted(set().union(*(sp.sympify(e).free_symbols for e in call.vin + call.pose)), key=str)
        callsym = sp.Symbol(f"call {c}")
        extra.statements.append((callsym, deps, "", text))
        extra.roots.append(callsym)  # it writes blocks of the outputs, whether or not its results are read
        extra.statements += [(o, [callsym], None, None) for o in call.outs]
    # the entries the routines write (DIRECT) are left out of the kernel's writes
    outputs = {arg: split.outputs[kernel.sources[arg]] for arg in kernel.outputs}
    direct = [e == DIRECT for m in outputs.values() for e in m]
    outputs = {arg: m.applyfunc(lambda e: sp.S.Zero if e == DIRECT else e) for arg, m in outputs.items()}
    main = emit(dataclasses.replace(kernel, outputs=outputs, setup=[], body=[], writes=[]), derivation, extra)
    main.writes = [w for w, d in zip(main.writes, direct) if not d]
    place_writes(main)
    main.ops += sum(helpers[call.part][1].ops for call in split.calls)
    main.helpers, main.straight = helpers, plain
    return main

"""Emission of a kernel that calls shared subtree routines (codegen/subtrees.py).

Each routine is a static function over instance 0's indices; an instance
calls it with q, sq, cq, dq shifted by its joint offset and `pl` = p shifted
by its parameter offset (geometry parameters, shared, are read from p). The
results land in a local array o<n> that the kernel reads like an input, so
the routine writes nothing the caller owns and outputs may still alias
inputs. The kernel also keeps its straight-line form (`Kernel.straight`)
for the batch kernels, which reprint statements over vector types.
"""
from __future__ import annotations

import dataclasses

import sympy as sp

from .emit_c import Argument, Extra, Kernel, ccode, emit

ROUTINE_INPUTS = ("q", "sq", "cq", "dq", "p", "pl", "vin")


def _inputs(kernel, part):
    """The routine's inputs: q and its sin and cos, dq if the kernel has it,
    p and pl, vin if the routine depends on the velocity above it."""
    have = {a.name for a in kernel.args}
    return [a for a in ROUTINE_INPUTS if a in ("sq", "cq", "pl") or a in have or (a == "vin" and part.vin)]


def _shift(name, offset):
    return f"{name} + {offset}" if offset else name


def emit_split(kernel: Kernel, derivation, split, prefix: str) -> Kernel:
    syms = derivation["symbols"]
    straight = emit(dataclasses.replace(kernel, setup=[], body=[], writes=[]), derivation)
    helpers = []
    for n, part in enumerate(split.parts):
        name = f"{prefix}{kernel.name}_part{n}"
        inputs = _inputs(kernel, part)
        args = [Argument(a, 0, False) for a in inputs] + [Argument("out", len(part.outputs), True)]
        h = Kernel(name, f"{kernel.name} of the subtree at frame {part.group.frames[0][0]} and the "
                         f"{len(part.group.frames) - 1} subtree(s) like it.", args,
                   {"out": sp.Matrix([e if s in part.kept else sp.S.Zero for s, e in enumerate(part.outputs)])})
        emit(h, {"program": part.program, "symbols": syms},
             Extra(link_params=part.link_params, routine=True))
        h.writes = [w for s, w in enumerate(h.writes) if s in part.kept]
        signature = f"{name}({', '.join(a.decl for a in args)})"
        helpers.append((signature, h))
    extra = Extra(sincos=True)
    names = syms.cnames
    for c, call in enumerate(split.calls):
        part = split.parts[call.part]
        group = part.group
        joff, poff = group.joint_offset[call.instance], group.param_offset[call.instance]
        extra.setup.append(f"double {call.array}[{len(part.outputs)}]")
        extra.live += call.vin
        vin = f"(const double[6]){{{', '.join(ccode(e, names) for e in call.vin)}}}" if call.vin else "0"
        value = {"q": _shift("q", joff), "sq": _shift("sq", joff), "cq": _shift("cq", joff),
                 "dq": _shift("dq", joff), "p": "p", "pl": _shift("p", poff), "vin": vin}
        args = ", ".join(value[a] for a in _inputs(kernel, part))
        text = f"{helpers[call.part][1].name}({args}, {call.array})"
        deps = sorted(set().union(*(sp.sympify(e).free_symbols for e in call.vin)), key=str)
        callsym = sp.Symbol(f"call {c}")
        extra.statements.append((callsym, deps, "", text))
        extra.statements += [(o, [callsym], None, None) for o in call.outs]
    out_name = next(iter(kernel.outputs))
    main = emit(dataclasses.replace(kernel, outputs={out_name: split.matrix}, setup=[], body=[], writes=[]),
                derivation, extra)
    main.ops += sum(helpers[call.part][1].ops for call in split.calls)
    main.helpers, main.straight = helpers, straight
    return main

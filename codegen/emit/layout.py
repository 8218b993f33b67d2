"""Where the statements of an emitted kernel go beyond their order
(codegen/emit/cse.py): each output write right after what it reads, the input
guard that keeps outputs aliasing inputs right, and the code prefetch of
large kernels (KKPREFETCH in the source template). They work on the printed
statements of a Kernel (codegen/emit/cse.Kernel)."""
from __future__ import annotations

import re

from .cse import Kernel

_IDENT = re.compile(r"[A-Za-z_]\w*")


def place_writes(kernel: Kernel):
    """Each output write right after the last statement it reads (write_at),
    so that no output is held in a register, or spilled, until the end
    (measured smaller code: docs/design-notes.md#statement-order-and-output-writes).
    A routine's output is the caller's own local array; a kernel's may alias
    an input, which `guard_inputs` handles."""
    at = {}
    for pos, (decl, rhs) in enumerate(kernel.body):
        if decl.startswith("const double "):
            at[decl[len("const double "):]] = pos
        elif not decl:  # a routine's call: it fills its result array
            at.update((n, pos) for n in _IDENT.findall(rhs))
    kernel.write_at = [max((at[n] for n in _IDENT.findall(rhs) if n in at), default=-1)
                       for _, rhs in kernel.writes]


def guard_inputs(kernel: Kernel, fname: str):
    """For kernel `fname` (its C name): a first statement that, if an input it
    reads after its first write overlaps an output, hands over to a helper
    that calls the kernel again with copies of its inputs on the helper's
    stack, which overlap nothing. Outputs are written while inputs are still being read
    (place_writes), and the header promises that an output may alias an
    input. The test compares addresses as integers (kk_overlap in the source
    template), so unrelated arrays are fine; the helper is never inlined
    (KKCOLD), so the kernel's own frame holds no copies."""
    outs = [a for a in kernel.args if a.output]
    out_names = {a.name for a in outs}
    lines = kernel.lines
    # the first write: to an output, or a routine's call that writes blocks of one (codegen/emit/routines.py)
    first = next((k for k, (lhs, rhs) in enumerate(lines)
                  if lhs.split("[")[0] in out_names or (not lhs and out_names & set(_IDENT.findall(rhs)))),
                 len(lines))
    late = set()  # the arrays read at or after the first write (not, e.g., q by sincos_q before it)
    for _, rhs in lines[first:]:
        late |= set(_IDENT.findall(rhs))
    ins = [a for a in kernel.args if not a.output and a.name in kernel.reads and a.name in late]
    if not ins or not outs:
        return
    test = " || ".join(f"kk_overlap({a.name}, {a.length}, {o.name}, {o.length})" for a in ins for o in outs)
    helper = f"kk_copy_{fname}"  # kk_ and in_<x>: codegen.emit.cnames reserves them
    args = ", ".join(f"memcpy(in_{a.name}, {a.name}, sizeof in_{a.name})" if a in ins else a.name
                     for a in kernel.args)
    h = Kernel(helper, f"{fname} with copies of its inputs (some overlap an output).", kernel.args, {},
               setup=[f"double in_{a.name}[{a.length}]" for a in ins], body=[("", f"{fname}({args})")], cold=True)
    signature = f"{helper}({', '.join(a.decl for a in kernel.args)})"
    kernel.helpers = [*kernel.helpers, (signature, h)]
    names = ", ".join(a.name for a in kernel.args)
    kernel.setup.insert(0, f"if ({test}) {{ {helper}({names}); return; }}")


# Kernels from this many operations on prefetch their own code (KKPREFETCH in
# the source template): several KB of straight-line code, where one miss
# after another is what an evicted tick waits for.
PREFETCH_MIN_OPS = 1500


def in_control_tick(kernel: Kernel) -> bool:
    """Whether a kernel writes only what a control tick reads (A, C, Q, Jacobians:
    compute_A, compute_C, compute_Q, jacobian_*, compute_all). Only those prefetch
    their code: the others (inverse and forward dynamics, bias, regressor,
    derivatives, centroidal) run in loops (simulation, MPC, identification), hot,
    where prefetching the whole function on every call costs time and saves
    nothing (measured: docs/design-notes.md#code-prefetch)."""
    return all(s in ("A", "C", "Q") or s.startswith("J_") for s in kernel.sources.values())


def add_code_prefetch(kernel: Kernel):
    """KKPREFETCH at the top of a large control-tick kernel (in_control_tick) and
    of the routines it calls; a routine prefetches on its first call only
    (argument `prefetch`)."""
    if kernel.ops < PREFETCH_MIN_OPS or not in_control_tick(kernel):
        return
    kernel.prefetch = "1"
    routines = {h.name: k for k, (_, h) in enumerate(kernel.helpers) if not h.cold}
    for k, (signature, h) in enumerate(kernel.helpers):
        if h.name in routines:
            h.prefetch = "prefetch"
            kernel.helpers[k] = (signature[:-1] + ", int prefetch)", h)
    called = set()
    for k, (lhs, rhs) in enumerate(kernel.body):
        name = rhs.split("(", 1)[0]
        if not lhs and name in routines:
            kernel.body[k] = (lhs, f"{rhs[:-1]}, {int(name not in called)})")
            called.add(name)

"""A derived function of the ABI -> its kernel: the derivation outputs it writes
(a spec), then its C statements in the form that suits it (straight, shared
subtree routines, or the pair loops of the dynamics' derivatives)."""
from __future__ import annotations

from .abi import OUT
from .chunks import split_long
from .cse import Argument, Kernel, emit
from .layout import add_code_prefetch, guard_inputs, place_writes
from .pair_loops import emit_pairs, pair_form_key
from .routines import emit_split


def kernel_spec(f, d) -> Kernel:
    """A derived function of the ABI with the derivation outputs it writes."""
    return Kernel(f.name, f.doc, [Argument(a.name, a.size, a.role == OUT) for a in f.args],
                  {a.name: d.outputs[a.source] for a in f.outputs}, {a.name: a.source for a in f.outputs},
                  arrays={a.source: a.name for a in f.inputs if a.source})


def kernel_specs(abi, d):
    """The derived functions of the ABI, each with the derivation outputs it writes."""
    return [kernel_spec(f, d) for f in abi.derived]


def ready_specs(abi, d):
    """The derived functions of the ABI whose outputs the derivation `d` (so far) has."""
    return [kernel_spec(f, d) for f in abi.derived if all(d.has(a.source) for a in f.outputs)]


def emit_kernel(kernel, d, prefix, batched=()):
    """A kernel whose outputs the derivation also gave in the form with shared
    subtree routines (derive's `share`, codegen/derive/subtrees.py: "A", "C" or
    "all" for compute_all) is emitted in that form; the rest straight.
    `batched`: names of the kernels the batch kernels reprint (they need the
    straight form too)."""
    if pair_form_key(kernel) is not None:  # the dynamics derivatives
        kernel = emit_pairs(kernel, d)
        guard_inputs(kernel, prefix + kernel.name)
        return split_long(kernel, prefix + kernel.name)  # no code prefetch: called in loops (MPC), hot, where it cost more than it saves
    for key in ("A", "C", "all"):
        split = d.splits.get(key)
        if split is not None and set(kernel.sources.values()) == set(split.outputs):
            kernel = emit_split(kernel, d, split, kernel.name in batched)
            break
    else:
        kernel = emit(kernel, d)
        place_writes(kernel)
    guard_inputs(kernel, prefix + kernel.name)
    # a batch kernel reprints the body statement by statement: the shared-subtree form keeps
    # it whole in kernel.straight, unsplit; any other kernel is split when long, as if not
    # batched (one function of tens of thousands of vector statements would not compile in
    # reasonable time), and its batch then loops over the split scalar kernel (batch.py)
    if kernel.name not in batched or kernel.straight is None:
        split_long(kernel, prefix + kernel.name)
    add_code_prefetch(kernel)
    return kernel

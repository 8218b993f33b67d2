"""Batch kernels (issue #9): a scalar kernel's statements, reprinted over a
GCC/Clang vector type so that one instruction evaluates LANES states.

The scalar kernel (codegen/emit_c.py) is a straight line of `const double`
statements. Every statement that depends on a per-state input (q, its sin
and cos, dq) becomes a vector statement; the others depend on p only and
stay scalar (computed once per block of LANES states; GCC and Clang
broadcast a scalar operand of a vector operation). Inputs are gathered
state-major into one vector per joint, outputs scattered lane by lane into
the n consecutive output matrices. The arithmetic is the scalar kernel's,
operation for operation, so each lane equals the scalar result (to the
rounding of contracted multiply-adds, which the compiler may place
differently).

A statement this cannot express over vectors (a math.h call or a comparison
on a per-state value: the model language allows them, A and C of the usual
joints never contain them) makes the whole kernel fall back to a loop over
the scalar kernel: `Batch.simd` is False.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .emit_c import _ELEMENT, Kernel

LANES = 4  # doubles per vector: 256 bits, AVX2; the measured choice (benchmarks/batch.py)
# per-state input arrays of the scalar kernels -> their vector arrays in the batch body
VECTOR_INPUTS = {"q": "vq", "sq": "vs", "cq": "vc", "dq": "vdq", "ddq": "vddq", "tau": "vtau"}
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_CALL = re.compile(r"(?<![\w.])[A-Za-z_]\w*\s*\(")
_DECL = re.compile(r"const double (\w+)")


@dataclass
class Batch:
    name: str  # the batch function, without the prefix
    scalar: str  # the scalar kernel it evaluates per state
    simd: bool  # False: a loop over the scalar kernel only
    inputs: list = field(default_factory=list)  # per-state input arrays read directly: (name, vector array)
    sincos: bool = False  # needs sin and cos of q
    body: list = field(default_factory=list)  # (declaration, rhs), in the scalar kernel's order
    writes: list = field(default_factory=list)  # (output array, flat index, rhs, is a vector)
    output: str = ""  # the output array
    size: int = 0  # its size per state


def _vector_rhs(rhs: str) -> str | None:
    """rhs over vectors, or None if it cannot be (a call or a comparison)."""
    if _CALL.search(rhs) or any(c in rhs for c in "<>?=!&|"):
        return None
    return rhs


def batch(kernel: Kernel, name: str) -> Batch:
    """The batch form `name` of an emitted scalar kernel with one output."""
    (output,) = [a for a in kernel.args if a.output]
    inputs = [a.name for a in kernel.args if not a.output and a.name in VECTOR_INPUTS]
    b = Batch(name, kernel.name, True, output=output.name, size=output.length,
              sincos=any(st.startswith("sincos_q(") for st in kernel.setup))
    vectors, read = set(), set()
    for decl, rhs in kernel.body:
        lhs = _DECL.fullmatch(decl).group(1)
        element = _ELEMENT.fullmatch(rhs)
        if element and element.group(1) in VECTOR_INPUTS:
            vectors.add(lhs)
            read.add(element.group(1))
            b.body.append((f"const kv {lhs}", VECTOR_INPUTS[element.group(1)] + rhs[len(element.group(1)):]))
        elif any(ident in vectors for ident in _IDENT.findall(rhs)):
            if _vector_rhs(rhs) is None:
                return Batch(name, kernel.name, False, output=output.name, size=output.length)
            vectors.add(lhs)
            b.body.append((f"const kv {lhs}", rhs))
        else:
            b.body.append((decl, rhs))
    for lhs, rhs in kernel.writes:
        array, index = lhs[:-1].split("[")
        vec = any(ident in vectors for ident in _IDENT.findall(rhs))
        if vec and _vector_rhs(rhs) is None:
            return Batch(name, kernel.name, False, output=output.name, size=output.length)
        b.writes.append((array, int(index), rhs, vec))
    b.inputs = [(a, VECTOR_INPUTS[a]) for a in inputs if a in read]
    if not any(vec for *_, vec in b.writes):  # constant in the states (a 1-DOF C): nothing to vectorize
        return Batch(name, kernel.name, False, output=output.name, size=output.length)
    return b

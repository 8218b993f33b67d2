"""Batch kernels: a scalar kernel's statements, reprinted over a
GCC/Clang vector type so that one instruction evaluates KKLANES states (8
with AVX-512, else 4: chosen by the C preprocessor, see the template).

The scalar kernel (codegen/emit/cse.py) is a straight line of `const double`
statements. Every statement that depends on a per-state input (q, its sin
and cos, dq) becomes a vector statement; the others depend on p only: they
are hoisted out of the loop over the states and computed once per call
(GCC and Clang broadcast a scalar operand of a vector operation). Inputs are
transposed into one vector per joint. Each output element goes,
as soon as it is computed (so that its register is free again), to a
lane-major buffer, one vector per element; the elements that do not depend
on the state are put there once per call. At the end of a block the buffer
is transposed in registers, 4 elements x 4 states at a time, into the
consecutive row-major outputs with 256-bit stores (store_lanes; inputs come
in the same way, load_lanes). Measured (benchmarks/batch.py): storing each
group of 4 elements as soon as it is complete, or copying the state-free
groups from a row of constants, was slower than this one pass at the end.
The arithmetic is the scalar kernel's, operation for operation, so each lane
equals the scalar result (to the rounding of contracted multiply-adds, which
the compiler may place differently).

Several outputs (the derivatives' matrices) share the buffer, one after
the other, each stored to its own array. A scalar form that forwards to
its _fext kernel with zero external forces (inverse and forward dynamics
derivatives, abi Function.forward_to) is batched from that kernel's
statements with every fext element 0.0, the scalar form's arithmetic.
forward_dynamics_derivatives ends in a block of loops over the model's
index tables (codegen/emit/pair_loops.py): the same trip counts for every
state, so the block is reprinted with its doubles as vectors, its arrays
(kk_pv, Minv, the outputs) as pointers into the buffer.

One comparison has a vector form: friction's sign(dq), printed by the
scalar kernels as `(double)((x > 0) - (x < 0))`, becomes KKSIGN(x) (the
template: GCC vector comparisons, -1 or 0 per lane, converted to double),
exactly the scalar value in every lane, so that inverse dynamics, bias and
forward dynamics with friction vectorize too. Any other statement this
cannot express over vectors (a math.h call or another comparison on a
per-state value: the model language allows them, the dynamics of the usual
joints never contain them) makes the whole kernel fall back to a loop over
the scalar kernel: `Batch.simd` is False.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .cprint import ELEMENT
from .cse import Kernel

# Lane counts the C may choose (KKLANES in the template: 8 where __AVX512F__, else 4);
# the tests and benchmarks/batch.py size their batches around both.
LANE_CHOICES = (4, 8)
# per-state input arrays of the scalar kernels -> their vector arrays in the batch body
# (v and a: the derivative kernels' names of dq and ddq)
VECTOR_INPUTS = {"q": "vq", "sq": "vs", "cq": "vc", "dq": "vdq", "ddq": "vddq", "tau": "vtau", "v": "vv", "a": "va"}
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_CALL = re.compile(r"(?<![\w.])[A-Za-z_]\w*\s*\(")
_DECL = re.compile(r"const double (\w+)")
# the scalar printer's sign(x) of a variable (codegen/emit/cprint.py) -> its vector form
# a local array of the scalar kernel's setup (pair_loops.py: kk_pv, kk_y)
_LOCAL = re.compile(r"double (kk_\w+)\[(\d+)\]")
_SIGN = re.compile(r"\(double\)\(\((\w+) > 0\) - \(\1 < 0\)\)")


@dataclass
class Batch:
    name: str  # the batch function, without the prefix
    scalar: str  # the scalar kernel it evaluates per state
    simd: bool  # False: a loop over the scalar kernel only
    inputs: list = field(default_factory=list)  # per-state inputs read directly: (name, vector array, length)
    sincos: bool = False  # needs sin and cos of q
    angles: tuple = (0, 0)  # the first and one past the last angle whose sin or cos the body reads
    hoisted: list = field(default_factory=list)  # (declaration, rhs): p-only statements, once per call
    fills: list = field(default_factory=list)  # (flat index, rhs): p-only output elements, once per call
    body: list = field(default_factory=list)  # (lhs, rhs): vector statements and buffer stores, per block
    outputs: list = field(default_factory=list)  # (array, size per state, its first element in the buffer ob)
    locals: list = field(default_factory=list)  # (array, size, its first element in ob): a loop block's inputs
    tail: str = ""  # the loop block over vectors (forward_dynamics_derivatives' pair loops), after the body

    @property
    def size(self) -> int:
        """Elements per state of all outputs: the buffer ob's length."""
        return sum(size for _, size, _ in self.outputs + self.locals)


def _loop_block(block: str, buffered, scratch) -> str:
    """A kernel's loop block (pair_loops.py) over vectors: the same loops, the
    same for every lane (their bounds come from the model's tables), with
    every double a vector; its arrays, which it names as the scalar kernel
    does, are pointers into ob (outputs and the statements' results) or
    local vector arrays (scratch), declared in a block around it."""
    used = set(_IDENT.findall(block))
    decls = [f"kv *const {name} = ob + {off};" for name, _, off in buffered if name in used]
    decls += [f"kv {name}[{size}];" for name, size in scratch if name in used]
    inner = re.sub(r"\bdouble\b", "kv", block)
    return "{\n" + "\n".join(f"    {d}" for d in decls) + f"\n    {inner}\n}}"


def _vector_rhs(rhs: str) -> str | None:
    """rhs over vectors, or None if it cannot be (a call or a comparison
    other than sign's)."""
    rhs = _SIGN.sub(r"KKSIGN(\1)", rhs)
    if _CALL.search(rhs.replace("KKSIGN(", "(")) or any(c in rhs for c in "<>?=!&|"):
        return None
    return rhs


def batch(kernel: Kernel, name: str, simd: bool = True, scalar_name: str = "", zeros: tuple = ()) -> Batch:
    """The batch form `name` of an emitted scalar kernel; simd=False: a loop
    over the scalar kernel. A free-flying base's q (NQ = NDOF + 1: the
    quaternion) is transposed by rows of NQ (an input's length,
    Batch.inputs); the template's lane sincos takes the angles from q's
    vectors, only those whose sin or cos the body reads (Batch.angles). Several outputs share the buffer ob, one after the other.
    scalar_name: the kernel the loop calls, if not `kernel` itself, which
    is then evaluated with the inputs `zeros` 0 (inverse_dynamics_derivatives:
    its _fext kernel without external force, as the scalar form forwards)."""
    offsets, outputs, arrays = 0, [], []
    for a in kernel.args:
        if a.output:
            outputs.append((a.name, a.length, offsets))
            offsets += a.length
    for st in kernel.setup:  # local arrays of a kernel with a loop block (pair_loops.py: kk_pv, kk_y)
        if m := _LOCAL.fullmatch(st):
            arrays.append((m.group(1), int(m.group(2))))
    inputs = {a.name: a.length for a in kernel.args if not a.output and a.name in VECTOR_INPUTS}
    scalar = Batch(name, scalar_name or kernel.name, False, outputs=outputs)
    if not simd:
        return scalar
    b = Batch(name, scalar.scalar, True, outputs=outputs,
              sincos=any(st.startswith("sincos_q(") for st in kernel.setup))
    zero = re.compile(rf"(?<![\w.])({'|'.join(zeros)})\[\d+\]") if zeros else None
    written = {lhs.split("[")[0] for lhs, _ in kernel.writes}
    for array, size in arrays:  # the loop block's inputs written by the statements: in ob too
        if array in written:
            b.locals.append((array, size, offsets))
            offsets += size
    base = {o: off for o, _, off in outputs + b.locals}
    defined, read = {}, set()  # vector variable -> its position in b.body
    angles = set()  # indices of sq and cq read: only those the lane sincos computes
    for pos, (decl, rhs) in enumerate(kernel.body):
        if decl == "" and rhs.startswith("{") and pos == len(kernel.body) - 1 and arrays:
            b.tail = _loop_block(kernel.vector_block or rhs, outputs + b.locals, [a for a in arrays if a[0] not in written])
            continue
        if _DECL.fullmatch(decl) is None:  # a chunk's call: a kernel too long for one function (chunks.py)
            return scalar
        lhs = _DECL.fullmatch(decl).group(1)
        if zero is not None:
            rhs = zero.sub("0.0", rhs)
        element = ELEMENT.fullmatch(rhs)
        if element and element.group(1) in VECTOR_INPUTS:
            read.add(element.group(1))
            if element.group(1) in ("sq", "cq"):
                angles.add(int(rhs[rhs.index("[") + 1:-1]))
            rhs = VECTOR_INPUTS[element.group(1)] + rhs[len(element.group(1)):]
        elif not any(ident in defined for ident in _IDENT.findall(rhs)):
            b.hoisted.append((decl, rhs))
            continue
        elif (rhs := _vector_rhs(rhs)) is None:
            return scalar
        defined[lhs] = len(b.body)
        b.body.append((f"const kv {lhs}", rhs))
    # each buffer store right after the last statement it reads, so that the
    # vector dies there instead of being spilled until the end of the block
    after = {}
    for lhs, rhs in kernel.writes:
        array, index = lhs[:-1].split("[")
        index = base[array] + int(index)
        if zero is not None:
            rhs = zero.sub("0.0", rhs)
        uses = [defined[ident] for ident in _IDENT.findall(rhs) if ident in defined]
        if not uses:
            b.fills.append((index, rhs))
        elif (rhs := _vector_rhs(rhs)) is None:
            return scalar
        else:
            after.setdefault(max(uses), []).append((f"ob[{index}]", rhs))
    if not after:  # constant in the states (a 1-DOF C): nothing to vectorize
        return scalar
    b.body = [line for k, st in enumerate(b.body) for line in [st, *after.get(k, [])]]
    b.inputs = [(a, VECTOR_INPUTS[a], n) for a, n in inputs.items() if a in read]
    b.sincos = bool(angles)  # none read: no lane sincos
    if angles:
        b.angles = (min(angles), max(angles) + 1)
    return b

"""Very long kernels split into static functions the compiler can handle.

    split_long(kernel, fname): if the emitted kernel has more than CHUNK_FROM
    straight-line statements, its runs of statements become static functions
    of at most CHUNK statements each (never inlined), called in order.

Why: GCC's register allocation is superlinear in the size of a function. A
kernel of some 20,000 statements in one body takes minutes and gigabytes to
compile; the same statements in functions of a few thousand compile in a
fraction of that time and memory, and in functions of a thousand in less
again, with the kernels' run time unchanged (measured:
docs/design-notes.md#chunked-kernels). The kernels
of arms, quadrupeds and Krang (at most 5,485 statements) stay one function,
as before.

How, on the emitted text (after the writes are placed and the aliasing guard
is set, codegen/emit/layout.py): the kernel's statements are cut, in order,
into runs of declarations and array writes; a call or a loop block (an empty
left side, other than a memset of zeros) stays in the kernel and ends a run. A value declared in one chunk
and read by another (or by the kernel) is stored into one slot of the
kernel's local array kk_x right after its declaration and read back where
needed; every other value stays local to its chunk. Each chunk receives only
the pointers it reads or writes (the kernel's arguments, its local arrays such
as sq, cq) and kk_x: no globals, reentrant as before. Output aliasing keeps
its meaning: the chunks read and write the same arrays in the same order as
the single body did.
"""
from __future__ import annotations

import re

from .cse import Kernel

CHUNK_FROM = 8000  # statements in the kernel's body: longer ones are split
CHUNK = 1000  # statements per chunk at most

_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_DECL = "const double "
_ELEMENT_WRITE = re.compile(r"\w+\[\d+\]")
_ARRAY_DECL = re.compile(r"(\w+)\s*\[")
_ZEROS = re.compile(r"memset\((\w+)( \+ \d+)?, 0, \d+ \* sizeof \1\[0\]\)")


def _movable(lhs: str, rhs: str) -> bool:
    """A declaration, an element write, or a memset of an element range (codegen/emit/cse.py's
    zero runs: `sizeof X[0]` means the same through a pointer); calls and loop blocks stay."""
    return lhs.startswith(_DECL) or bool(_ELEMENT_WRITE.fullmatch(lhs)) or bool(_ZEROS.fullmatch(rhs) and not lhs)


def _local_arrays(setup) -> list:
    """Names of the arrays a kernel's setup declares (`double sq[NDOF], cq[NDOF]`)."""
    names = []
    for st in setup:
        if st.startswith("double "):
            names += [m.group(1) for part in st[len("double "):].split(",") for m in [_ARRAY_DECL.match(part.strip())]
                      if m]
    return names


def _runs(lines) -> list:
    """[(True, [movable lines]) | (False, line)] in order, runs at most CHUNK long."""
    units, run = [], []
    for line in lines:
        if _movable(*line):
            run.append(line)
            if len(run) == CHUNK:
                units.append((True, run))
                run = []
        else:
            if run:
                units.append((True, run))
                run = []
            units.append((False, line))
    if run:
        units.append((True, run))
    return units


def split_long(kernel: Kernel, fname: str) -> Kernel:
    """The kernel with its statements in chunk functions `fname_chunkK` (its
    helpers), or unchanged if it has at most CHUNK_FROM statements."""
    lines = kernel.lines
    if sum(_movable(lhs, rhs) for lhs, rhs in lines) <= CHUNK_FROM:
        return kernel
    units = _runs(lines)
    # where each value is declared (the unit's index) and which units read it
    home, readers = {}, {}
    for u, (chunk, content) in enumerate(units):
        for lhs, rhs in (content if chunk else [content]):
            for name in _IDENT.findall(rhs):
                readers.setdefault(name, set()).add(u)
            if lhs.startswith(_DECL):
                home[lhs[len(_DECL):]] = u
    slot = {}
    for name, u in home.items():
        if readers.get(name, set()) - {u}:
            slot[name] = len(slot)
    pointers = [(a.name, not a.output) for a in kernel.args] + [(n, False) for n in _local_arrays(kernel.setup)]
    body, helpers = [], []
    for u, (chunk, content) in enumerate(units):
        if not chunk:  # a call or a block: values from chunks read back from kk_x
            lhs, rhs = content
            # (such a line declares nothing: every value in slot comes from a chunk)
            body.append((lhs, _IDENT.sub(lambda m: f"kk_x[{slot[m.group(0)]}]" if m.group(0) in slot
                                         else m.group(0), rhs)))
            continue
        used = {n for lhs, rhs in content for n in _IDENT.findall(lhs + " " + rhs)}
        imports = sorted({n for n in used if n in home and home[n] != u}, key=lambda n: slot[n])
        stmts, exports = [], False
        for lhs, rhs in content:
            stmts.append((lhs, rhs))
            name = lhs[len(_DECL):] if lhs.startswith(_DECL) else None
            if name in slot:
                stmts.append((f"kk_x[{slot[name]}]", name))
                exports = True
        params = [(n, const) for n, const in pointers if n in used]
        if imports or exports:
            params.append(("kk_x", not exports))
        k = len(helpers)
        signature = f"{fname}_chunk{k}(" + ", ".join(
            f"{'const ' if const else ''}double *{n}" for n, const in params) + ")"
        helpers.append((signature, Kernel(
            f"{fname}_chunk{k}", f"Statements of {fname}, part {k} (codegen/emit/chunks.py).", [], {},
            setup=[f"const double {n} = kk_x[{slot[n]}]" for n in imports], body=stmts, noinline=True)))
        body.append(("", f"{fname}_chunk{k}({', '.join(n for n, _ in params)})"))
    kernel.helpers = list(kernel.helpers) + helpers
    kernel.body, kernel.writes, kernel.write_at = body, [], None
    if slot:
        kernel.setup = list(kernel.setup) + [f"double kk_x[{len(slot)}]"]
    return kernel

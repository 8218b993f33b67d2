"""Copies of a benchmark binary that differ only in code placement, and the figures they allow.

Why (issue #36, point 4): the same kernels, compiled once, ran up to 2x slower or faster in two
links of the same objects. The C batch kernel is 68 KB of machine code, more than the 32 KiB
L1i, so where it lands decides which of its lines conflict in the L1i sets (64 sets of 64 B:
address bits 6-11), how its loops fall into the 32 B / 64 B decode windows the uop cache (DSB)
caches, and which branches alias in the predictor (indexed by low address bits). One binary is
one sample of those placements; a ratio measured on it can be an accident of the link.

How: copy k is the same objects linked with a padding object of pad_bytes(k) bytes of `nop`s
first on the link line (its .text precedes theirs), so every function in the .text of the
objects after it moves by that much (main, in .text.startup, and .text.unlikely stay).
pad_bytes(k) = k * 1088 + 16 * (1 + (k - 1) % 3) (1104, 2208, 3312, 4368, ...): a multiple of 16,
the alignment of gcc's .text sections on x86-64 (the linker would round anything else up to
it); never a multiple of 64 (each kernel's offset in its cache lines and in the 32 B / 64 B
decode windows changes: 16, 32, 48 B in turn), and never of 4 KiB for k < 64 (1088 = 17 lines:
the L1i set of every line and the 4 KiB aliasing change). The objects are compiled once; only
the link differs, and `moved` checks with nm that the kernels did move.

What is reported per figure (`summarize`): each copy's median over its rounds, the median over
the copies (the figure), their min-max, and the largest spread within one copy's rounds; the
figure is printed only where the copies agree, (max - min) / median <= THRESHOLD, else its range
is printed instead, marked (`fmt`).
"""
from __future__ import annotations

import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEFAULT_COPIES = 3
PAD_STEP = 1088  # 17 cache lines, see pad_bytes
THRESHOLD = 0.25  # (max - min) / median over the copies above which no single figure is printed
MARK = "†"        # marks a range printed instead of a figure


def pad_bytes(k: int) -> int:
    """Bytes of padding of copy k (0 for copy 0): see the module's docstring."""
    return k * PAD_STEP + 16 * (1 + (k - 1) % 3) if k else 0


def pad_source(nbytes: int) -> str:
    """C source of the padding object: nbytes of nop (0x90) in .text, nothing else."""
    return (f"/* benchmarks/copies.py: {nbytes} B of nop in .text, linked before the kernels to move them */\n"
            f'__asm__(".text\\n.p2align 4\\nkk_copies_pad_{nbytes}:\\n.skip {nbytes}, 0x90\\n");\n')


def pad_object(work: Path, nbytes: int, cc: str = "gcc") -> Path | None:
    """The padding object of nbytes (None for 0: copy 0 is the plain link)."""
    if nbytes == 0:
        return None
    obj = work / f"kk_pad_{nbytes}.o"
    if not obj.exists():
        src = work / f"kk_pad_{nbytes}.c"
        src.write_text(pad_source(nbytes))
        subprocess.run([cc, "-c", str(src), "-o", str(obj)], check=True)
    return obj


def link_copies(objs, out: Path, copies: int, cc: str = "gcc", libs=("-lm",)) -> list[Path]:
    """`copies` executables out-copy<k> of the same objects, copy k with pad_bytes(k) of nop
    linked first (copy 0: no padding)."""
    exes = []
    for k in range(copies):
        pad = pad_object(out.parent, pad_bytes(k), cc)
        exe = out.with_name(f"{out.name}-copy{k}")
        subprocess.run([cc, *([str(pad)] if pad else []), *map(str, objs), "-o", str(exe), *libs], check=True)
        exes.append(exe)
    return exes


def symbol_addresses(exe: Path, names) -> dict:
    """{symbol: address} of the given text symbols of an executable (nm)."""
    r = subprocess.run(["nm", "--defined-only", str(exe)], capture_output=True, text=True, check=True)
    want = set(names)
    return {f[2]: int(f[0], 16) for f in map(str.split, r.stdout.splitlines()) if len(f) == 3 and f[2] in want}


def moved(exes, names) -> list[dict]:
    """Per copy: {symbol: its shift from copy 0, bytes}. Raises if a kernel stayed in place
    (mod 4 KiB) in some copy, or is missing: those copies would not sample another placement."""
    addrs = [symbol_addresses(e, names) for e in exes]
    missing = [n for n in names if n not in addrs[0]]
    if missing:
        raise ValueError(f"{exes[0]}: no symbol {', '.join(missing)}")
    shifts = [{n: a[n] - addrs[0][n] for n in names} for a in addrs]
    for k, s in enumerate(shifts[1:], 1):
        still = [n for n, d in s.items() if d % 4096 == 0]
        if still:
            raise ValueError(f"copy {k}: {', '.join(still)} did not move (mod 4 KiB)")
    return shifts


def describe_shifts(shifts: list[dict]) -> str:
    """One line: each copy's shift of the kernels, and mod 64 / mod 4096."""
    parts = []
    for k, s in enumerate(shifts):
        d = sorted(set(s.values()))
        parts.append(f"copy {k}: +{d[0]} B (mod 64: {d[0] % 64}, mod 4096: {d[0] % 4096})"
                     + ("" if len(d) == 1 else f" .. +{d[-1]} B"))
    return "; ".join(parts)


@dataclass
class Figure:
    """One figure measured on several copies (summarize)."""
    median: float          # the figure: median over the copies of each copy's median over its rounds
    per_copy: list         # each copy's median over its rounds
    lo: float              # min over the copies (of per_copy)
    hi: float              # max over the copies
    spread: float          # (hi - lo) / median: the copies' disagreement
    within: float          # largest (max - min) / median over the rounds of one copy
    threshold: float = THRESHOLD

    @property
    def trusted(self) -> bool:
        """The copies agree within the threshold: a single figure is printed."""
        return self.spread <= self.threshold


def _rel(v) -> float:
    m = statistics.median(v)
    return (max(v) - min(v)) / m if m else float("inf")


def summarize(per_copy_rounds, threshold: float = THRESHOLD) -> Figure:
    """per_copy_rounds: one list per copy of that copy's values, one per round (e.g. the speed-up
    scalar / batch of the round, both timed back to back in the same binary)."""
    rounds = [list(r) for r in per_copy_rounds if len(r)]
    if not rounds:
        raise ValueError("no values")
    per_copy = [statistics.median(r) for r in rounds]
    med = statistics.median(per_copy)
    lo, hi = min(per_copy), max(per_copy)
    return Figure(med, per_copy, lo, hi, (hi - lo) / med if med else float("inf"), max(map(_rel, rounds)),
                  threshold)


def fmt(fig: Figure, digits: int = 3, unit: str = "") -> str:
    """The figure (e.g. `2.31x`) where the copies agree, else their range marked (`1.9-2.6x †`)."""
    if fig.trusted:
        return f"{fig.median:.{digits}g}{unit}"
    return f"{fig.lo:.{digits}g}-{fig.hi:.{digits}g}{unit} {MARK}"


def fmt_spread(fig: Figure) -> str:
    """The columns that go with it: the copies' min-max and spread, the worst within-copy spread."""
    n = len(fig.per_copy)
    return (f"{n} copies {fig.lo:.3g}-{fig.hi:.3g} ({fig.spread:.0%}), rounds {fig.within:.0%}" if n > 1
            else f"1 copy, rounds {fig.within:.0%}")


NOTE = (f"{MARK}: the copies of the binary (the same objects linked with {pad_bytes(1)}, {pad_bytes(2)}, ... B of "
        f"padding before the kernels, benchmarks/copies.py) disagree by more than {THRESHOLD:.0%} of the median; "
        "their range is shown instead of a figure.")

"""Efficiency figures of `make bench`'s report (code per tick, worst tick, FMA floor, batch kernels,
portable build), each a ratio of two timings of the same run.

- code per tick: bytes of machine code of every function one control tick
  executes (build.tick_code: the tick's calls and what they call), against
  against a 40 KB target;
- the flushed tick (bench_common.h, --flush), the buffer-evicted tick and
  the warm tick, ours / Pinocchio;
- FMA-throughput floor of each scalar kernel: ops / 4 cycles (2 FMA per
  cycle, 2 operations each; ops: the SymPy count in the generated file's
  banner), as a fraction of the tight-loop time at the nominal frequency
  (benchmarks.batch.nominal_ghz: "cpu MHz", on a VM the TSC rate, not the
  turbo clock, so a fraction can be optimistic);
- the batch kernels' per-state speed-up over the scalar kernel at N = 64 and
  1024 (benchmarks.batch's driver, its native build, pinned), with the time
  a memset of the same outputs takes (no kernel that writes them is faster);
- the portable build (target_clones, codegen.build.module's flags, no -march)
  against -march=native, per kernel: the harness `ours-clones`, timed in the
  same alternating rounds as `ours`; for the batch kernels benchmarks.batch's
  `clones` build, alternating with its `native` one.
The batch speed-ups and the tick ratios ours / Pinocchio are measured on copies of the
binaries that differ only in code placement (benchmarks/copies.py, `--copies`): the median over
the copies with their min-max, or, where they disagree by more than copies.THRESHOLD, their range.
No timing is asserted anywhere.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import copies as CP
from .env import log
from .robot import KernelSet, group_key, j_key

CODE_TARGET = 40_000  # bytes of machine code per tick, the project's target (CHANGELOG 0.2.0)


@dataclass
class Row:
    figure: str
    value: str
    target: str
    how: str


def _med(d, k):
    v = d.get(k)
    return v["median"] if v else None


def tick_roots(ks: KernelSet) -> list[str]:
    """Our functions a tick calls (harness/bench_c.c's tick), by their C names."""
    return [ks.fn("compute_A"), ks.fn("compute_C"), ks.fn("compute_Q"), *(ks.direct or (ks.fn("jacobian"),))]


def all_roots(ks: KernelSet) -> list[str]:
    """The same tick as one compute_all call (bench_c.c's tick_all), [] without it."""
    return [ks.fn("compute_all")] if ks.has_all else []


def scalar_keys(ks: KernelSet) -> list[tuple[str, str]]:
    """[(harness key, C function)] of the tick's scalar kernels."""
    keys = [("A", ks.fn("compute_A")), ("C", ks.fn("compute_C")), ("Q", ks.fn("compute_Q"))]
    if ks.direct:
        keys += [(j_key(e), d) for e, d in zip(ks.ee_names, ks.direct)]
    return keys


def fma_fractions(ks: KernelSet, summary: dict, ops: dict, ghz: float) -> dict:
    """{harness key: (ops, floor ns, measured ns, fraction)} for the tick's scalar kernels."""
    out = {}
    ours = summary.get("ours", {})
    for key, fn in scalar_keys(ks):
        ns = _med(ours, key)
        if ns and fn in ops and ghz:
            floor = ops[fn] / 4 / ghz
            out[key] = (ops[fn], floor, ns, floor / ns)
    return out


def batch_figures(core, rounds: int = 3, builds=("native", "clones"), copies: int | None = None
                  ) -> tuple[dict | None, str]:
    """benchmarks.batch's builds (the first the reference), each linked into `copies` copies that
    differ only in code placement (benchmarks/copies.py; default copies.DEFAULT_COPIES), `rounds`
    alternating runs of every copy pinned to `core`: ({n: {A, A_batch, C, C_batch, write}} the
    first build's times, ns per state, medians over the copies of each copy's median over its
    runs; A_up and C_up, its speed-ups as copies.Figure; plus A_batch_B and C_batch_B for each
    other build B, and A_batch_B_ratio, C_batch_B_ratio: B / first as copies.Figure, copy k of B
    against copy k of the first, run by run), or (None, why not)."""
    try:
        from . import batch
    except Exception as e:  # noqa: BLE001 - the report says why
        return None, f"benchmarks.batch unavailable ({e})"
    copies = CP.DEFAULT_COPIES if copies is None else copies
    old = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        if core is not None and old is not None:
            os.sched_setaffinity(0, {core})  # the driver inherits it
        with tempfile.TemporaryDirectory() as d:
            exes = {b: batch.compile_copies(b, Path(d), copies=copies) for b in builds}
            runs = {b: [[] for _ in exes[b]] for b in builds}
            for r in range(rounds):
                log(f"batch kernels: run {r + 1}/{rounds} ({copies} copies of {', '.join(builds)})")
                for b in builds:
                    for c, exe in enumerate(exes[b]):
                        runs[b][c].append(batch.run(exe))
    except Exception as e:  # noqa: BLE001
        return None, f"benchmarks.batch failed ({e})"
    finally:
        if old is not None:
            os.sched_setaffinity(0, old)
    first = runs[builds[0]]
    res, ups = batch.median_copies(first)
    for n, t in res.items():
        t.update({f"{k}_up": ups[n][k] for k in ("A", "C")})
    for b in builds[1:]:
        other = batch.median_copies(runs[b])[0]
        for n, t in res.items():
            t.update({f"{k}_{b}": other[n][k] for k in ("A_batch", "C_batch")})
            t.update({f"{k}_{b}_ratio": CP.summarize([[o[n][k] / f[n][k] for o, f in zip(oc, fc)]
                                                      for oc, fc in zip(runs[b], first)])
                      for k in ("A_batch", "C_batch")})
    return res, (f"benchmarks.batch.run: gcc {' '.join(batch.BUILDS[builds[0]])}"
                 + "".join(f"; {b}: gcc {' '.join(batch.BUILDS[b])}" for b in builds[1:])
                 + f"; best of {batch.REPEATS} per run, median of {rounds} alternating runs of each of {copies} "
                 f"copies (benchmarks/copies.py: the same objects, code placed differently), pinned")


def tick_ratio_figures(tick_per_round: dict, copies, ref: str = "pin") -> dict:
    """{mode: {tick key: (ours / ref as copies.Figure, ours ns as copies.Figure)}} from timing_rounds'
    tick medians per round; `copies`: the harnesses that are copies of ours (the same objects,
    code placed differently); per copy, each round's ours / ref's whole tick (both ran in that round)."""
    out = {}
    have = [h for h in copies if h in tick_per_round]
    refs = tick_per_round.get(ref, {})
    if not have or not refs:
        return out
    for mode in ("warm", "cold", "flush"):
        r = refs.get(mode, {}).get("tick")  # Pinocchio's tick, against ours as calls and as compute_all
        for key in ("tick", "tick_all"):
            per = [tick_per_round[h].get(mode, {}).get(key) for h in have]
            if not r or not all(per):
                continue
            out.setdefault(mode, {})[key] = (CP.summarize([[o / p for o, p in zip(c, r)] for c in per]),
                                             CP.summarize(per))
    return out


def portable_rows(ks: KernelSet, summary: dict, tick_summary: dict) -> list[tuple[str, float | None, float | None]]:
    """[(kernel, native ns, portable ns)]: tight loop per kernel, then the warm and flushed whole tick."""
    nat, cl = summary.get("ours", {}), summary.get("ours-clones", {})
    rows = [(k, _med(nat, k), _med(cl, k)) for k, _ in scalar_keys(ks)]
    g = group_key(ks.ee_names)
    rows.append((f"{g} (tight loop)", _med(nat, g), _med(cl, g)))
    for mode in ("warm", "flush"):
        t_n = tick_summary.get("ours", {}).get(mode, {})
        t_c = tick_summary.get("ours-clones", {}).get(mode, {})
        rows.append((f"whole tick, {mode}", _med(t_n, "tick"), _med(t_c, "tick")))
    return rows


def _r(a, b):
    return a / b if a is not None and b else None


def _fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}g}"


def summary_rows(ks, summary, tick_summary, code, fma, batch, portable, code_all=(), tick_copies=None) -> list[Row]:
    """The targets, one row each; the tick both as separate calls
    (A, C, Q, each Jacobian) and as one compute_all call (`code_all`). tick_copies
    (tick_ratio_figures): the tick ratios over the copies of ours, printed by copies.fmt."""
    rows = []
    for label, c in (("", code), (", one compute_all call", code_all)):
        if c:
            total = sum(b for _, b in c)
            rows.append(Row(f"code per tick{label}", f"{total:,} B ({total / CODE_TARGET:.2f} x target)",
                            "<= 40,000 B", ", ".join(f"{f} {b:,}" for f, b in c)))
    for mode, target, how in (("flush", "<= 0.5", "clflush of code and data before every tick"),
                              ("cold", "", "buffer read before every tick"),
                              ("warm", "<= 0.16", "caches warm")):
        p = _med(tick_summary.get("pin", {}).get(mode, {}), "tick")
        for key, label in (("tick", ""), ("tick_all", ", one compute_all call")):
            o = _med(tick_summary.get("ours", {}).get(mode, {}), key)
            figs = (tick_copies or {}).get(mode, {}).get(key)
            if figs and p is not None:
                rows.append(Row(f"whole tick ({mode}{label}), ours / Pinocchio", CP.fmt(figs[0]), target,
                                f"{how}: {figs[1].median:,.0f} vs {p:,.0f} ns; {CP.fmt_spread(figs[0])}"))
            elif o is not None and p is not None:
                rows.append(Row(f"whole tick ({mode}{label}), ours / Pinocchio", _fmt(_r(o, p)), target,
                                f"{how}: {o:,.0f} vs {p:,.0f} ns"))
    for key, (ops, floor, ns, frac) in fma.items():
        rows.append(Row(f"{key}: fraction of the FMA floor", f"{frac:.0%}", ">= 65 %" if key in ("A", "C") else "",
                        f"{ops:,} ops -> floor {floor:,.0f} ns vs {ns:,.0f} ns (tight loop)"))
    if batch:
        for n, t in batch.items():
            for k in ("A", "C"):
                w = f"; memset of the outputs alone {t['write']:,.1f}" if "write" in t else ""
                up = t.get(f"{k}_up")
                rows.append(Row(f"{k} batch speed-up per state, N = {n}",
                                _fmt(_r(t[k], t[k + "_batch"])) if up is None else CP.fmt(up), ">= 3",
                                f"scalar {t[k]:,.1f} vs batch {t[k + '_batch']:,.1f} ns per state{w}"
                                + ("" if up is None else f"; {CP.fmt_spread(up)}")))
        for n, t in batch.items():
            for k in ("A", "C"):
                if f"{k}_batch_clones" in t:
                    ratio = t.get(f"{k}_batch_clones_ratio")
                    rows.append(Row(f"{k} batch, N = {n}: portable / native",
                                    _fmt(_r(t[f"{k}_batch_clones"], t[k + "_batch"])) if ratio is None
                                    else CP.fmt(ratio), "<= 1.10",
                                    f"{t[k + '_batch_clones']:,.1f} vs {t[k + '_batch']:,.1f} ns per state "
                                    "(target_clones build, 4 lanes)"
                                    + ("" if ratio is None else f"; {CP.fmt_spread(ratio)}")))
    for label, nat, cl in portable:
        if nat is not None and cl is not None:
            rows.append(Row(f"{label}: portable / native", _fmt(_r(cl, nat)), "<= 1.10",
                            f"{cl:,.1f} vs {nat:,.1f} ns"))
    return rows


def section(info: dict, rows: list[Row], notes: list[str]) -> list[str]:
    """bench.md's lines for the efficiency summary (its first table is copied into docs/benchmarks.md)."""
    L = ["## Efficiency: code per tick, worst tick, FMA floor, batch kernels, portable build\n",
         "Every figure is a ratio of two timings of this run (machine, compiler and flags: the table at the "
         f"top; portable build: `{info.get('flags_portable', '?')}`). No timing is asserted anywhere.\n",
         "| figure | value | target | how |", "|---|---:|---:|---|"]
    L += [f"| {r.figure} | {r.value} | {r.target} | {r.how} |" for r in rows]
    L.append("")
    L += [f"- {n}" for n in notes]
    L.append("")
    return L

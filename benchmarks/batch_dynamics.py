"""The dynamics' batch kernels vs their scalar kernels: `python -m benchmarks.batch_dynamics`.

Like benchmarks/batch.py (same builds, sizes and repeats; its --gen/--name/--rounds/--cpu),
for inverse_dynamics, bias and forward_dynamics, and both dynamics derivatives where the robot
was generated with them (harness/dynamics_batch_vs_scalar.c): N scalar calls against one batch
call, ns per state, best of the repeats (--repeats), the median over the rounds of the time and
of each round's speed-up (scalar / batch, run back to back) with its range (min-max: the spread).
Throughput is each side's steady state: the scalar loop is timed after an untimed loop, the batch
call after a call of itself; the batch call's first run after the scalar loop is reported too
(first call: its tens of KB of code cold, a fixed cost that a small batch between other code pays).
Every build is linked into --copies C (default 3) copies that differ only in code placement
(benchmarks/copies.py): the figures are the medians over the copies, each speed-up printed with
the copies' min-max and only where they agree within copies.THRESHOLD (else their range, marked).
Prints the figures and writes them as a table to benchmarks/results/batch_dynamics.md (Krang;
batch_dynamics_NAME.md for --name NAME; --out), with the load average before and after.
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import tempfile
from pathlib import Path

from . import batch as B
from . import copies as CP
from .env import first_line, provenance

KERNELS = ("inverse_dynamics", "bias", "forward_dynamics")
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")
DRIVER = (Path(__file__).resolve().parent / "harness" / "dynamics_batch_vs_scalar.c").read_text()
RESULTS = Path(__file__).resolve().parent / "results"


def out_path(name: str) -> Path:
    """The table's default file: batch_dynamics.md for Krang, batch_dynamics_NAME.md otherwise."""
    return RESULTS / ("batch_dynamics.md" if name == "krang" else f"batch_dynamics_{name}.md")


def kernels(gen: Path, name: str) -> tuple:
    """The kernels timed: the derivatives' too where the robot has them."""
    header = (gen / f"{name}_kernels.h").read_text()
    return KERNELS + (DERIVATIVES if f"{name}_inverse_dynamics_derivatives_batch(" in header else ())


def compile_copies(build: str, work: Path, gen: Path, name: str, repeats: int = B.REPEATS,
                   copies: int = CP.DEFAULT_COPIES) -> list[Path]:
    """The driver and the kernels compiled once, linked into `copies` differently placed executables."""
    names = kernels(gen, name)
    derivatives = ["-DDERIVATIVES"] if len(names) > len(KERNELS) else []
    return B.compile_copies(build, work, gen, name, copies, DRIVER, "dyn", tuple(k + "_batch" for k in names),
                            repeats, derivatives)


def compile_driver(build: str, work: Path, gen: Path, name: str, repeats: int = B.REPEATS) -> Path:
    return compile_copies(build, work, gen, name, repeats, 1)[0]


def run(exe: Path, names: tuple = KERNELS, cpu: str | None = None) -> dict:
    out = subprocess.run((["taskset", "-c", cpu] if cpu else []) + [str(exe)],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        n, *t, _ = line.split()
        res[int(n)] = {k: tuple(float(x) for x in t[3 * i:3 * i + 3]) for i, k in enumerate(names)}
    return res


def figures(copies: list, n: int, k: str) -> tuple:
    """copies: [[run's dict per round] per copy]: (scalar ns, batch ns, speed-up copies.Figure) of
    kernel k at size n; the times are the medians over the copies of each copy's median."""
    s = CP.summarize([[r[n][k][0] for r in c] for c in copies]).median
    bt = CP.summarize([[r[n][k][1] for r in c] for c in copies]).median
    return s, bt, CP.summarize([[r[n][k][0] / r[n][k][1] for r in c] for c in copies])


def first_call(copies: list, n: int, k: str) -> tuple:
    """(batch ns, speed-up) of the batch call's first run after the scalar loop (cold code), the
    medians over the copies: what a batch called once between other code gets."""
    ft = CP.summarize([[r[n][k][2] for r in c] for c in copies]).median
    return ft, CP.summarize([[r[n][k][0] / r[n][k][2] for r in c] for c in copies]).median


def report(results: dict, name: str, names: tuple, rounds: int, repeats: int, load: float) -> str:
    """results: {build: [[run's dict per round] per copy]}."""
    ncopies = len(next(iter(results.values())))
    lines = [f"{name} dynamics batch kernels, ns per state (best of {repeats} calls, median of {rounds} rounds, "
             f"median of {ncopies} copies); {B.cpu_model()}; load average {load:.2f} before, "
             f"{os.getloadavg()[0]:.2f} after"]
    marked = False
    for b, copies in results.items():
        lines.append(f"[{b}] gcc {' '.join(B.BUILDS[b])}  ({B.lanes(b)} lanes)")
        for n in B.SIZES:
            for k in names:
                s, bt, up = figures(copies, n, k)
                ft, fup = first_call(copies, n, k)
                marked |= not up.trusted
                lines.append(f"  N={n:5d} {k:28s} scalar {s:9.1f} ns  batch {bt:9.1f} ns  speed-up "
                             f"{CP.fmt(up, unit='x'):>14s}  [{CP.fmt_spread(up)}]  first call {ft:9.1f} ns "
                             f"{fup:.3g}x")
    if marked:
        lines.append(CP.NOTE)
    return "\n".join(lines)


def table(results: dict, name: str, names: tuple, rounds: int, repeats: int, load: float) -> str:
    """The figures of report() as a markdown table, with provenance and the load (timings on a
    loaded machine are noisy: the ranges say how much)."""
    ncopies = len(next(iter(results.values())))
    flags = "; ".join(f"{b}: {' '.join(B.BUILDS[b])} ({B.lanes(b)} lanes)" for b in results)
    lines = [f"# Dynamics batch kernels vs scalar kernels ({name})", "",
             provenance(datetime.datetime.now().isoformat(timespec="seconds"), B.cpu_model(), os.cpu_count(),
                        first_line(["gcc", "--version"]), flags),
             f"Load average {load:.2f} before, {os.getloadavg()[0]:.2f} after. ns per state: best of {repeats} calls, "
             f"median of {rounds} rounds, median of {ncopies} copies (code placed differently); speed-up: scalar / "
             "batch of the same round, median over rounds and copies, [min-max over the copies]. Both sides hot: "
             "the scalar loop after an untimed loop, the batch call after a call of itself. First call: the batch "
             "call right after the scalar loop (its code cold: a fixed cost per call, a few hundred ns), and the "
             "speed-up it gives.",
             "", "| build | N | kernel | scalar ns | batch ns | speed-up | copies' range | first call ns | "
             "first-call speed-up |",
             "|---|---:|---|---:|---:|---:|---|---:|---:|"]
    marked = False
    for b, copies in results.items():
        for n in B.SIZES:
            for k in names:
                s, bt, up = figures(copies, n, k)
                ft, fup = first_call(copies, n, k)
                marked |= not up.trusted
                lines.append(f"| {b} | {n} | {k} | {s:.1f} | {bt:.1f} | {CP.fmt(up, unit='x')} | {CP.fmt_spread(up)} "
                             f"| {ft:.1f} | {fup:.3g}x |")
    if marked:
        lines += ["", CP.NOTE]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", default="native,avx2")
    ap.add_argument("--gen", type=Path, default=B.GEN)
    ap.add_argument("--name", default="krang")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--copies", type=int, default=CP.DEFAULT_COPIES,
                    help=f"copies of every build, code placed differently (default {CP.DEFAULT_COPIES})")
    ap.add_argument("--cpu", default=None)
    ap.add_argument("--repeats", type=int, default=B.REPEATS)
    ap.add_argument("--out", type=Path, default=None,
                    help="the table's file (default benchmarks/results/batch_dynamics.md, or _NAME.md for --name)")
    args = ap.parse_args(argv)
    builds = args.builds.split(",")
    names = kernels(args.gen, args.name)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        exes = {b: compile_copies(b, Path(d), args.gen, args.name, args.repeats, args.copies) for b in builds}
        log = [f"[{b}] " + CP.describe_shifts(CP.moved(e, [f"{args.name}_{k}_batch" for k in names]))
               for b, e in exes.items()]
        results = B.time_copies(exes, args.rounds, args.cpu, lambda exe, cpu: run(exe, names, cpu))
    print(report(results, args.name, names, args.rounds, args.repeats, load))
    print("code placement: " + " | ".join(log))
    out = args.out or out_path(args.name)
    out.write_text(table(results, args.name, names, args.rounds, args.repeats, load))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

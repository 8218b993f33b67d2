"""Batch kernels vs scalar kernels: `python -m benchmarks.batch`.

A C driver (harness/batch_vs_scalar.c) times (`--gen DIR --name NAME` for another
robot's kernels), for N = 64 and 1024 random states (one p), the scalar
kernel called N times and the batch kernel called once, outputs written to
N separate matrices in both cases; the best of REPEATS runs, per state, with
clock_gettime(CLOCK_MONOTONIC); and, as the floor of any kernel that
writes those outputs, a memset of the same N matrices (a batch kernel 3x
faster than the scalar one has scalar / 3 per state for everything, that
write included). --rounds R (default 3) runs every build R times,
alternating, and reports medians (--cpu C pins the runs: taskset). Every build is
compiled once and linked into --copies C (default 3) copies that differ only in code
placement (benchmarks/copies.py), each timed in every round: a speed-up is the median
over the copies of each copy's median over its rounds, printed with the copies' min-max
and only where they agree within copies.THRESHOLD (else their range, marked).
Builds (same generated/krang_kernels.c):
  native: -O3 -march=native -ffp-contract=fast (the reference build)
  avx2:   native without AVX-512 (-mno-avx512f): the 4-lane kernels on the same CPU
  clones: -O3 -ffp-contract=fast -DKK_TARGET_CLONES, no -march: target_clones
          picks the x86-64-v3 (AVX2, FMA) or -v4 (AVX-512) copy at load time
  base:   -O3 -march=x86-64: baseline x86-64 only (SSE2)

FMA-throughput floor of a kernel, per state: ops / (2 FMA per cycle x 2
operations per FMA x W lanes) cycles, ops the SymPy count in the banner,
W = 1 for the scalar kernel and the build's lane count for the batch kernel
(KKLANES of the template: 8 where the build targets AVX-512, else 4);
the fraction reported is floor cycles / measured cycles, measured cycles =
ns x the nominal frequency ("cpu MHz" of /proc/cpuinfo; the TSC frequency on
a VM, not the turbo clock, so a fraction can be optimistic).
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

from . import copies as CP
from .env import cpu_model, first_line, provenance

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT / "generated"
SIZES = (64, 1024)
REPEATS = 200
BUILDS = {
    "native": ["-O3", "-march=native", "-ffp-contract=fast"],
    "avx2": ["-O3", "-march=native", "-mno-avx512f", "-ffp-contract=fast"],
    "clones": ["-O3", "-ffp-contract=fast", "-mprefer-vector-width=256", "-DKK_TARGET_CLONES"],
    "base": ["-O3", "-march=x86-64", "-ffp-contract=fast"],
}

DRIVER = (Path(__file__).resolve().parent / "harness" / "batch_vs_scalar.c").read_text()


def ops(gen: Path = GEN, name: str = "krang") -> dict:
    banner = (gen / f"{name}_kernels.c").read_text().split("*/", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(rf"{name}_(\w+)\s+(\d+)\s*$", banner, re.M)}


def nominal_ghz() -> float:
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", Path("/proc/cpuinfo").read_text(), re.M)
    return float(mhz.group(1)) / 1000.0


def lanes(build: str) -> int:
    """KKLANES of a build: 8 where the compiler targets AVX-512 (as the template decides)."""
    macros = subprocess.run(["gcc", *BUILDS[build], "-dM", "-E", "-x", "c", "/dev/null"],
                            check=True, capture_output=True, text=True).stdout
    return 8 if re.search(r"^#define __AVX512F__ ", macros, re.M) else 4


def compile_objects(build: str, work: Path, gen: Path, name: str, driver: str, stem: str, repeats: int = REPEATS,
                    defines=()) -> list[Path]:
    """The driver (its text with the sizes, repeats and C prefix filled in; `defines` its -D
    flags) and NAME_kernels.c compiled with the build's flags, into `work`; the kernels' object
    is reused if `work` holds it already (benchmarks.batch_dynamics compiles the same one)."""
    src = work / f"{stem}_{build}.c"
    src.write_text(driver.replace("@SIZES@", ", ".join(map(str, SIZES))).replace("REPEATS", str(repeats))
                   .replace("krang_", f"{name}_").replace("KRANG_", f"{name.upper()}_"))
    flags = ["gcc", "-std=c99", *BUILDS[build], "-I", str(gen)]
    drv, kern = work / f"{stem}_{build}.o", work / f"{name}_kernels_{build}.o"
    subprocess.run([*flags, *defines, "-c", str(src), "-o", str(drv)], check=True)
    if not kern.exists():
        tmp = kern.with_suffix(".tmp.o")
        subprocess.run([*flags, "-c", str(gen / f"{name}_kernels.c"), "-o", str(tmp)], check=True)
        tmp.rename(kern)
    return [drv, kern]


def compile_copies(build: str, work: Path, gen: Path = GEN, name: str = "krang", copies: int = CP.DEFAULT_COPIES,
                   driver: str = DRIVER, stem: str = "driver",
                   kernels=("compute_A_batch", "compute_C_batch"), repeats: int = REPEATS, defines=()) -> list[Path]:
    """`copies` executables of one build, the same objects linked with different padding before
    them (copies.link_copies); checks with nm that the `kernels` moved (copies.moved)."""
    objs = compile_objects(build, work, gen, name, driver, stem, repeats, defines)
    exes = CP.link_copies(objs, work / f"{stem}_{build}", copies)
    CP.moved(exes, [f"{name}_{k}" for k in kernels])
    return exes


def compile_driver(build: str, work: Path, gen: Path = GEN, name: str = "krang") -> Path:
    """One executable of a build (copy 0 of compile_copies)."""
    return compile_copies(build, work, gen, name, 1)[0]


def run(exe: Path, cpu: str | None = None) -> dict:
    """One round: {N: {A, A_batch, C, C_batch, write: ns per state}}, pinned to `cpu` if given;
    `write`: memset of the same outputs, the floor of any kernel that writes them."""
    out = subprocess.run((["taskset", "-c", cpu] if cpu else []) + [str(exe)],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        n, a, ab, c, cb, w, _ = line.split()
        res[int(n)] = dict(A=float(a), A_batch=float(ab), C=float(c), C_batch=float(cb), write=float(w))
    return res


def median_rounds(rounds: list) -> tuple:
    """Per N and key: the median time over the rounds, and the median of the
    per-round speed-ups (scalar and batch of a round ran back to back)."""
    times = {n: {k: statistics.median(r[n][k] for r in rounds) for k in rounds[0][n]} for n in rounds[0]}
    ups = {n: {k: statistics.median(r[n][k] / r[n][k + "_batch"] for r in rounds) for k in ("A", "C")}
           for n in rounds[0]}
    return times, ups


def median_copies(copies: list) -> tuple:
    """copies: one list of rounds per copy. Per N and key: the median over the copies of each
    copy's median time, and the speed-up as a copies.Figure (per copy, the median of its
    rounds' speed-ups)."""
    first = copies[0][0]
    times = {n: {k: CP.summarize([[r[n][k] for r in c] for c in copies]).median for k in first[n]} for n in first}
    ups = {n: {k: CP.summarize([[r[n][k] / r[n][k + "_batch"] for r in c] for c in copies]) for k in ("A", "C")}
           for n in first}
    return times, ups


def report(results: dict, gen: Path = GEN, name: str = "krang", rounds: int = 1) -> str:
    """results: {build: [[round, ...] per copy]} (run's dicts)."""
    ghz, counts = nominal_ghz(), ops(gen, name)
    ncopies = len(next(iter(results.values())))
    lines = [provenance(datetime.datetime.now().isoformat(timespec="seconds"), cpu_model(), os.cpu_count(),
                        first_line(["gcc", "--version"]), "per build, below"),
             f"{name} batch kernels, ns per state (best of {REPEATS} calls, median of {rounds} rounds, median of "
             f"{ncopies} copies); nominal {ghz:.2f} GHz; floor = ops / (4 x W) cycles, W = 1 scalar, the build's "
             f"lanes batch; load average {os.getloadavg()[0]:.2f}"]
    for build, res in results.items():
        W = lanes(build)
        times, ups = median_copies(res)
        lines.append(f"[{build}] gcc {' '.join(BUILDS[build])}  ({W} lanes)")
        for n, t in times.items():
            for k in ("A", "C"):
                op = counts[f"compute_{k}"]
                frac = [op / (4 * w) / (t[key] * ghz) for key, w in ((k, 1), (f"{k}_batch", W))]
                lines.append(f"  N={n:5d} {k}: scalar {t[k]:8.1f} ns ({frac[0]:4.0%} of floor)  batch "
                             f"{t[k + '_batch']:8.1f} ns ({frac[1]:4.0%} of floor)  speed-up "
                             f"{CP.fmt(ups[n][k], unit='x')}  [{CP.fmt_spread(ups[n][k])}]  (3x: {t[k] / 3:.1f} ns)")
            lines.append(f"  N={n:5d} memset of the outputs alone: {t['write']:8.1f} ns per state")
    if "native" in results and "clones" in results:
        native, clones = median_copies(results["native"])[0], median_copies(results["clones"])[0]
        for n in SIZES:
            r = {k: clones[n][k] / native[n][k] for k in native[n]}
            lines.append(f"clones / native time at N={n}: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))
    if any(not f.trusted for res in results.values() for u in median_copies(res)[1].values() for f in u.values()):
        lines.append(CP.NOTE)
    return "\n".join(lines)


def time_copies(exes: dict, rounds: int, cpu: str | None = None, runner=None) -> dict:
    """exes: {build: [copy, ...]}. `rounds` rounds, each running every copy of every build once,
    the builds alternating: {build: [[run's dict per round] per copy]}."""
    runner = runner or run
    results = {b: [[] for _ in e] for b, e in exes.items()}
    for _ in range(rounds):
        for b, es in exes.items():
            for c, exe in enumerate(es):
                results[b][c].append(runner(exe, cpu))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", default=",".join(BUILDS), help="comma-separated: " + ", ".join(BUILDS))
    ap.add_argument("--gen", type=Path, default=GEN, help="directory of NAME_kernels.c (default: generated/)")
    ap.add_argument("--name", default="krang", help="the robot name it was generated with (its C prefix)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the builds alternating (default 3)")
    ap.add_argument("--copies", type=int, default=CP.DEFAULT_COPIES,
                    help=f"copies of every build, code placed differently (default {CP.DEFAULT_COPIES})")
    ap.add_argument("--cpu", default=None, help="pin the timed runs to this CPU (taskset -c)")
    args = ap.parse_args(argv)
    builds = args.builds.split(",")
    with tempfile.TemporaryDirectory() as d:
        exes = {b: compile_copies(b, Path(d), args.gen, args.name, args.copies) for b in builds}
        results = time_copies(exes, args.rounds, args.cpu)
    print(report(results, args.gen, args.name, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

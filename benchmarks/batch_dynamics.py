"""The dynamics' batch kernels vs their scalar kernels: `python -m benchmarks.batch_dynamics`.

Like benchmarks/batch.py (same builds, sizes and repeats; its --gen/--name/--rounds/--cpu),
for inverse_dynamics, bias and forward_dynamics (harness/dynamics_batch_vs_scalar.c): N scalar
calls against one batch call, ns per state, best of the repeats, the median over the rounds
of the time and of each round's speed-up (scalar / batch, run back to back).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from . import batch as B

KERNELS = ("inverse_dynamics", "bias", "forward_dynamics")
DRIVER = (Path(__file__).resolve().parent / "harness" / "dynamics_batch_vs_scalar.c").read_text()


def compile_driver(build: str, work: Path, gen: Path, name: str) -> Path:
    src = work / f"dyn_{build}.c"
    src.write_text(DRIVER.replace("@SIZES@", ", ".join(map(str, B.SIZES))).replace("REPEATS", str(B.REPEATS))
                   .replace("krang_", f"{name}_").replace("KRANG_", f"{name.upper()}_"))
    exe = work / f"dyn_{build}"
    subprocess.run(["gcc", "-std=c99", *B.BUILDS[build], "-I", str(gen), str(src), str(gen / f"{name}_kernels.c"),
                    "-o", str(exe), "-lm"], check=True)
    return exe


def run(exe: Path, cpu: str | None = None) -> dict:
    out = subprocess.run((["taskset", "-c", cpu] if cpu else []) + [str(exe)],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        n, *t, _ = line.split()
        res[int(n)] = {k: (float(t[2 * i]), float(t[2 * i + 1])) for i, k in enumerate(KERNELS)}
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", default="native,avx2")
    ap.add_argument("--gen", type=Path, default=B.GEN)
    ap.add_argument("--name", default="krang")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", default=None)
    args = ap.parse_args(argv)
    builds = args.builds.split(",")
    with tempfile.TemporaryDirectory() as d:
        exes = {b: compile_driver(b, Path(d), args.gen, args.name) for b in builds}
        results = {b: [] for b in builds}
        for _ in range(args.rounds):
            for b in builds:
                results[b].append(run(exes[b], args.cpu))
    print(f"{args.name} dynamics batch kernels, ns per state (best of {B.REPEATS} calls, median of {args.rounds} "
          f"rounds); {B.cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    for b, rounds in results.items():
        print(f"[{b}] gcc {' '.join(B.BUILDS[b])}  ({B.lanes(b)} lanes)")
        for n in B.SIZES:
            for k in KERNELS:
                s = statistics.median(r[n][k][0] for r in rounds)
                bt = statistics.median(r[n][k][1] for r in rounds)
                up = statistics.median(r[n][k][0] / r[n][k][1] for r in rounds)
                print(f"  N={n:5d} {k:17s} scalar {s:8.1f} ns  batch {bt:8.1f} ns  speed-up {up:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

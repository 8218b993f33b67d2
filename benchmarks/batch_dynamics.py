"""The dynamics' batch kernels vs their scalar kernels: `python -m benchmarks.batch_dynamics`.

Like benchmarks/batch.py (same builds, sizes and repeats; its --gen/--name/--rounds/--cpu),
for inverse_dynamics, bias and forward_dynamics, and both dynamics derivatives where the robot
was generated with them (harness/dynamics_batch_vs_scalar.c): N scalar calls against one batch
call, ns per state, best of the repeats (--repeats), the median over the rounds of the time and
of each round's speed-up (scalar / batch, run back to back) with its range (min-max: the spread).
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
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")
DRIVER = (Path(__file__).resolve().parent / "harness" / "dynamics_batch_vs_scalar.c").read_text()


def kernels(gen: Path, name: str) -> tuple:
    """The kernels timed: the derivatives' too where the robot has them."""
    header = (gen / f"{name}_kernels.h").read_text()
    return KERNELS + (DERIVATIVES if f"{name}_inverse_dynamics_derivatives_batch(" in header else ())


def compile_driver(build: str, work: Path, gen: Path, name: str, repeats: int = B.REPEATS) -> Path:
    src = work / f"dyn_{build}.c"
    src.write_text(DRIVER.replace("@SIZES@", ", ".join(map(str, B.SIZES))).replace("REPEATS", str(repeats))
                   .replace("krang_", f"{name}_").replace("KRANG_", f"{name.upper()}_"))
    exe = work / f"dyn_{build}"
    derivatives = ["-DDERIVATIVES"] if len(kernels(gen, name)) > len(KERNELS) else []
    subprocess.run(["gcc", "-std=c99", *B.BUILDS[build], *derivatives, "-I", str(gen), str(src),
                    str(gen / f"{name}_kernels.c"), "-o", str(exe), "-lm"], check=True)
    return exe


def run(exe: Path, names: tuple = KERNELS, cpu: str | None = None) -> dict:
    out = subprocess.run((["taskset", "-c", cpu] if cpu else []) + [str(exe)],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        n, *t, _ = line.split()
        res[int(n)] = {k: (float(t[2 * i]), float(t[2 * i + 1])) for i, k in enumerate(names)}
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", default="native,avx2")
    ap.add_argument("--gen", type=Path, default=B.GEN)
    ap.add_argument("--name", default="krang")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", default=None)
    ap.add_argument("--repeats", type=int, default=B.REPEATS)
    args = ap.parse_args(argv)
    builds = args.builds.split(",")
    names = kernels(args.gen, args.name)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        exes = {b: compile_driver(b, Path(d), args.gen, args.name, args.repeats) for b in builds}
        results = {b: [] for b in builds}
        for _ in range(args.rounds):
            for b in builds:
                results[b].append(run(exes[b], names, args.cpu))
    print(f"{args.name} dynamics batch kernels, ns per state (best of {args.repeats} calls, median of {args.rounds} "
          f"rounds); {B.cpu_model()}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    for b, rounds in results.items():
        print(f"[{b}] gcc {' '.join(B.BUILDS[b])}  ({B.lanes(b)} lanes)")
        for n in B.SIZES:
            for k in names:
                s = statistics.median(r[n][k][0] for r in rounds)
                bt = statistics.median(r[n][k][1] for r in rounds)
                ups = [r[n][k][0] / r[n][k][1] for r in rounds]
                print(f"  N={n:5d} {k:28s} scalar {s:9.1f} ns  batch {bt:9.1f} ns  speed-up {statistics.median(ups):.2f}x"
                      f" ({min(ups):.2f}-{max(ups):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

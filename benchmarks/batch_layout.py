"""Row-major vs lane-interleaved batch outputs, and the batched Cholesky: `python -m benchmarks.batch_layout`.

A C driver (harness/batch_layout.c) times, for N in SIZES random states (one p),
compute_A: N scalar calls, compute_A_batch (row-major), compute_A_batch_interleaved
full and packed by calls of at most 512 states on consecutive slices of a 64-byte
aligned output (each below STREAM_BYTES: plain stores), and full and packed in one
call (non-temporal stores where the output reaches STREAM_BYTES: N = 1024 full,
N = 8192); compute_C the same way (scalar, batch, interleaved chunked, one call);
and the consumer: a plain C
Cholesky-Crout of each row-major A, state by state (the reference; no LAPACK call,
whose per-call overhead at NV = 17 would dominate), against
cholesky_batch_interleaved of the packed A, then the two solves. ns per state,
the median over the driver's repeats, then the median over --rounds runs.
One build: -O3 -march=native -ffp-contract=fast (8 lanes where the CPU has AVX-512).
Writes benchmarks/results/batch_layout.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from .env import cpu_model, first_line, provenance

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT / "generated"
OUT = ROOT / "benchmarks" / "results" / "batch_layout.md"
SIZES = (8, 64, 1024, 8192)
FLAGS = ["-O3", "-march=native", "-ffp-contract=fast"]
DRIVER = Path(__file__).resolve().parent / "harness" / "batch_layout.c"
COLUMNS = ("A scalar", "A row-major", "A il full chunks", "A il packed chunks", "A il full 1 call", "A il packed 1 call",
           "C scalar", "C row-major", "C il chunks", "C il 1 call", "chol per state", "chol il", "solve per state", "solve il")


def compile_driver(work: Path, gen: Path = GEN) -> Path:
    src = work / "batch_layout.c"
    src.write_text(DRIVER.read_text().replace("@SIZES@", ", ".join(map(str, SIZES))))
    exe = work / "batch_layout"
    subprocess.run(["gcc", "-std=c99", *FLAGS, "-I", str(gen), str(src), str(gen / "krang_kernels.c"), "-o", str(exe), "-lm"],
                   check=True)
    return exe


def run(exe: Path) -> dict:
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {int(f[0]): [float(x) for x in f[1:1 + len(COLUMNS)]] for f in map(str.split, out.splitlines())}


def table(rounds: list) -> str:
    med = {n: [statistics.median(r[n][i] for r in rounds) for i in range(len(COLUMNS))] for n in SIZES}
    lines = [provenance(datetime.datetime.now().isoformat(timespec="seconds"), cpu_model(), os.cpu_count(),
                        first_line(["gcc", "--version"]), " ".join(FLAGS)),
             f"Load average at the start: {os.getloadavg()[0]:.2f}. ns per state, medians over {len(rounds)} rounds; "
             "x: the scalar kernel's time over this one's. il: interleaved (blocks of 8 states); chunks: calls of 512 "
             "states (plain stores); 1 call: non-temporal stores where the output reaches 2 MiB (N = 1024 full, N = 8192).",
             "", "| N | " + " | ".join(COLUMNS) + " |", "|---:|" + "---:|" * len(COLUMNS)]
    for n in SIZES:
        m = med[n]
        cells = []
        for i, v in enumerate(m):
            scalar = m[0] if i < 6 else m[6] if i < 10 else m[10] if i < 12 else m[12]
            cells.append(f"{v:.1f}" + ("" if v == scalar else f" ({scalar / v:.2f}x)"))
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_driver(Path(tmp))
        rounds = [run(exe) for _ in range(args.rounds)]
    text = "# Row-major vs lane-interleaved batch outputs (Krang)\n\n" + table(rounds)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

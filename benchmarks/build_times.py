"""Generation and module-build time and peak memory per robot -> docs/build_times.md.

    python -m benchmarks.build_times [--out docs/build_times.md] [--robots ur5,baxter,...]

Each robot runs in a fresh child process (`--one`): the URDF generated to C and
built into the Python module (what `python -m codegen ROBOT.urdf --python
--no-cache` does), the build (codegen.emit.python_module.compile_module: Cython
and the C compiler) timed apart from generation. Peak memory: generation is the
Python process's own peak RSS; the build's is the largest sum of the RSS of the
process and all its descendants (the concurrent compilers), sampled every 0.1 s
from /proc, so a peak shorter than that may be missed (an under-estimate).
The machine is shared: times are wall clock and vary with its load (noted
with the load average at the start of each robot).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (name, path under example-robot-data's robots/, end-effector links): 6, 19, 32 and 48 DOF
ROBOTS = [
    ("UR5", "ur_description/urdf/ur5_robot.urdf", ["tool0"]),
    ("Baxter", "baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper"]),
    ("Talos (reduced)", "talos_data/robots/talos_reduced.urdf", ["gripper_left_base_link", "gripper_right_base_link"]),
    ("TIAGo", "tiago_description/robots/tiago.urdf", ["arm_tool_link"]),
]


def robots_dir() -> Path:
    from .env import cmeel_prefixes
    for prefix in cmeel_prefixes():
        if (prefix / "share" / "example-robot-data" / "robots").is_dir():
            return prefix / "share" / "example-robot-data" / "robots"
    raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and its descendants (Linux /proc)."""
    children, rss = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, ()))
    return total


class PeakSampler:
    def __init__(self, period=0.1):
        self.peak, self.period, self._stop = 0, period, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def one(urdf: str, ees: list) -> dict:
    """Generate and build one robot in this process; the figures as a dict."""
    from codegen.emit import python_module
    from codegen.generate import CodegenConfig, generate
    from codegen.read.urdf import load_urdf

    build = {}
    compile_module = python_module.compile_module

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        with PeakSampler() as s:
            out = compile_module(*args, **kwargs)
        build.update(seconds=time.perf_counter() - t0, peak=s.peak)
        return out

    python_module.compile_module = timed
    t0 = time.perf_counter()
    robot = load_urdf(urdf, name="bench", end_effectors=ees)
    with tempfile.TemporaryDirectory(prefix="krang_build_times_") as tmp:
        generate(robot.model, robot.values, CodegenConfig(out_dir=Path(tmp), python=True))
        c_bytes = (Path(tmp) / "bench_kernels.c").stat().st_size
    total = time.perf_counter() - t0
    return dict(dof=robot.model.ndof, total=total, generation=total - build["seconds"], build=build["seconds"],
                build_peak=build["peak"], generation_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                c_bytes=c_bytes)


def machine_line() -> str:
    from codegen.emit.python_module import FLAGS, X86_FLAGS
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    cc = os.environ.get("CC", "cc")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    flags = " ".join(FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else []))
    return (f"Machine: {cpu}, {len(os.sched_getaffinity(0))} CPUs (shared with other jobs: noisy), "
            f"{platform.machine()}; compiler: {version}; flags: Python's sysconfig CFLAGS without -g + {flags}; "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.")


def table(rows) -> str:
    out = ["| Robot | DOF | generation (s) | module build (s) | total (s) | peak RSS generation (MB) "
           "| peak RSS build, all processes (MB) | kernels C (KB) | load avg |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        out.append(f"| {name} | {r['dof']} | {r['generation']:.1f} | {r['build']:.1f} | {r['total']:.1f} "
                   f"| {r['generation_peak'] / 2**20:.0f} | {r['build_peak'] / 2**20:.0f} "
                   f"| {r['c_bytes'] / 1024:.0f} | {r['load']:.1f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.build_times", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "build_times.md"))
    ap.add_argument("--robots", help="comma-separated names (default: all)")
    ap.add_argument("--one", nargs="+", metavar=("URDF", "EE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1:])))
        return 0
    base = robots_dir()
    chosen = [r for r in ROBOTS if not args.robots or r[0] in args.robots.split(",")]
    rows = []
    for name, rel, ees in chosen:
        load = os.getloadavg()[0]
        proc = subprocess.run([sys.executable, "-m", "benchmarks.build_times", "--one", str(base / rel), *ees],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["load"] = load
        rows.append((name, r))
        print(f"{name}: {r}", file=sys.stderr, flush=True)
    text = ("# Build time and memory per robot\n\n"
            "Written by `python -m benchmarks.build_times` (do not edit by hand). Generation: URDF -> C "
            "(derivation, CSE, printing); module build: Cython and the C compiler, the Cython wrapper and "
            "the kernels compiled concurrently (codegen/emit/compile_c.py). Peak RSS of the build: the "
            "largest sum over the build's processes, sampled every 0.1 s. Load avg: the 1-minute load "
            "average when the robot started (the machine is shared; figures vary with it).\n\n"
            f"{machine_line()}\n\n{table(rows)}\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

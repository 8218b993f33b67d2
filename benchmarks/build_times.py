"""Generation and module-build time and peak memory per robot -> docs/build_times.md.

    python -m benchmarks.build_times [--out docs/build_times.md] [--robots ur5,baxter,...]

Each robot runs in a fresh child process (`--one`): the URDF generated to C and
built into the Python module (what `python -m codegen ROBOT.urdf --python
--no-cache` does), the build (codegen.build.module.compile_module: Cython
and the C compiler) timed apart from generation. Peak memory: generation is the
Python process's own peak RSS; the build's is the largest sum of the RSS of the
process and all its descendants (the concurrent compilers), sampled every 0.1 s
from /proc, so a peak shorter than that may be missed (an under-estimate).
The machine is shared: times are wall clock and vary with its load (noted
with the load average at the start of each robot).
"""
from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (name, path under example-robot-data's robots/, end-effector links): 6, 19, 32 and 48 DOF
ROBOTS = [
    ("UR5", "ur_description/urdf/ur5_robot.urdf", ["tool0"]),
    ("Baxter", "baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper"]),
    ("Talos (reduced)", "talos_data/robots/talos_reduced.urdf", ["gripper_left_base_link", "gripper_right_base_link"]),
    ("TIAGo", "tiago_description/robots/tiago.urdf", ["arm_tool_link"]),
]


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
    """The peak of _tree_rss(this process) while in the with block; `cpu`: the
    sampling thread's own CPU seconds (reading every /proc/PID/stat ten times a
    second costs a shared machine's hundreds of processes real CPU time, which
    is not the build's)."""

    def __init__(self, period=0.1):
        self.peak, self.cpu, self.period, self._stop = 0, 0.0, period, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            self.cpu = time.thread_time()
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _cpu_children() -> float:
    """CPU of the finished child processes (generation's emission workers, the compilers)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(urdf: str, ees: list, native: bool = False) -> dict:
    """Generate and build one robot in this process; the figures as a dict."""
    from codegen.build import compiler as compile_c, module as module_build
    from codegen.emit.abi import describe
    from codegen.pipeline import CodegenConfig, generate
    from codegen.read.urdf import load_urdf

    build, runs = {}, []
    compile_module, run_compiler = module_build.compile_module, compile_c.run_compiler

    def timed(*args, **kwargs):
        build["children_before"] = _cpu_children()  # generation's emission workers, reaped by now
        t0, c0 = time.perf_counter(), _cpu_self()
        with PeakSampler() as s:
            out = compile_module(*args, **kwargs)
        build.update(seconds=time.perf_counter() - t0, peak=s.peak, python_cpu=_cpu_self() - c0 - s.cpu,
                     sampler_cpu=s.cpu)
        return out

    def recorded(command, source):
        run = run_compiler(command, source)
        runs.append(run)
        return run

    module_build.compile_module, compile_c.run_compiler = timed, recorded
    t0 = time.perf_counter()
    robot = load_urdf(urdf, name="bench", end_effectors=ees, mimic="independent")  # Baxter's, Talos's fingers
    with tempfile.TemporaryDirectory(prefix="krang_build_times_") as tmp:
        generate(robot.model, robot.values, CodegenConfig(out_dir=Path(tmp), python=True, native=native))
        c_bytes = (Path(tmp) / "bench_kernels.c").stat().st_size
    total = time.perf_counter() - t0
    # the kernels' parts are compiled from NAME_kernels_partK.c (module_build.part_sources), the
    # Cython wrapper from its own C; both under the build's temporary directory
    part = re.compile(r"_part(\d+)\.c$")
    kernels = {int(part.search(r.source).group(1)): r for r in runs if part.search(r.source)}
    wrapper = [r for r in runs if not part.search(r.source)]
    names = {i: name for i, name, _ in describe(robot.model).parts()}  # the base-parameter parts: by number
    return dict(dof=robot.model.ndof, total=total, generation=total - build["seconds"], build=build["seconds"],
                generation_cpu=_cpu_self() - build["python_cpu"] - build["sampler_cpu"] + build["children_before"],
                cython_cpu=build["python_cpu"], sampler_cpu=build["sampler_cpu"],
                build_peak=build["peak"], generation_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                kernels_cpu=sum(r.cpu_seconds for r in kernels.values()),
                wrapper_cpu=sum(r.cpu_seconds for r in wrapper),
                kernels_peak=max(r.peak_bytes for r in kernels.values()),
                wrapper_peak=max(r.peak_bytes for r in wrapper),
                parts={names.get(i, f"part {i}"): (r.cpu_seconds, r.peak_bytes) for i, r in sorted(kernels.items())},
                c_bytes=c_bytes)


def two_cores(seconds) -> float:
    """The wall time of jobs of these CPU seconds on two idle cores, the longest started first (the
    build's order)."""
    cores = [0.0, 0.0]
    for s in sorted(seconds, reverse=True):
        cores[cores.index(min(cores))] += s
    return max(cores)


def machine_line(native: bool = False) -> str:
    from codegen.build.module import compile_flags
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    cc = os.environ.get("CC", "cc")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    flags = " ".join(compile_flags(native))
    return (f"Machine: {cpu}, {len(os.sched_getaffinity(0))} CPUs (shared with other jobs: noisy), "
            f"{platform.machine()}; compiler: {version}; flags: Python's sysconfig CFLAGS without -g + {flags}; "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.")


def table(rows) -> str:
    mb = 2 ** 20
    out = ["| Robot | DOF | kernels C (KB) | generation wall / CPU (s) | module build wall (s) "
           "| CPU (s): Cython, kernel parts (sum), wrapper TU | largest part: CPU (s), peak (MB) "
           "| idle 2-core estimate (s) "
           "| peak RSS (MB): generation, largest kernels cc1, wrapper cc1, whole build | load avg |",
           "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for name, r in rows:
        # on two idle cores: generation, Cython, then the translation units two at a time
        parts = r.get("parts") or {"kernels": (r["kernels_cpu"], r["kernels_peak"])}
        idle = r["generation"] + r["cython_cpu"] + two_cores([c for c, _ in parts.values()] + [r["wrapper_cpu"]])
        big = max(parts, key=lambda k: parts[k][0])
        out.append(f"| {name} | {r['dof']} | {r['c_bytes'] / 1024:.0f} | {r['generation']:.0f} / "
                   f"{r['generation_cpu']:.0f} | {r['build']:.0f} | {r['cython_cpu']:.0f}, {r['kernels_cpu']:.0f}, "
                   f"{r['wrapper_cpu']:.0f} | {big}: {parts[big][0]:.0f}, {parts[big][1] / mb:.0f} "
                   f"| {idle:.0f} | {r['generation_peak'] / mb:.0f}, "
                   f"{r['kernels_peak'] / mb:.0f}, {r['wrapper_peak'] / mb:.0f}, {r['build_peak'] / mb:.0f} "
                   f"| {r['load']:.1f} |")
    return "\n".join(out)


def parts_table(rows) -> str:
    """CPU seconds and peak RSS of each part's compiler run, per robot."""
    names = list(dict.fromkeys(k for _, r in rows for k in r.get("parts", {})))
    if not names:
        return ""
    out = ["| Robot | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for robot, r in rows:
        cells = [f"{r['parts'][k][0]:.0f} s, {r['parts'][k][1] / 2 ** 20:.0f} MB" if k in r.get("parts", {}) else ""
                 for k in names]
        out.append(f"| {robot} | " + " | ".join(cells) + " |")
    return "\n".join(out)


MODES = {True: "Modules built for this CPU (`--native`, as `codegen.import_urdf` builds them): one copy "
                "of each kernel. The command line's default portable module (`--python`) compiles each kernel "
                "for three x86-64 levels (target_clones): about three times the kernel parts' CPU.",
         False: "Portable modules (the command line's `--python` default): each kernel compiled for three "
                "x86-64 levels (target_clones); `codegen.import_urdf` builds for this CPU (`--native`)."}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.build_times", description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "build_times.md"))
    ap.add_argument("--robots", help="comma-separated names (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="robots measured at the same time (default 1)")
    ap.add_argument("--from-log", metavar="LOG", help="write the table from the `NAME: {...}` lines a run "
                    "printed on stderr (the robots that finished), without measuring")
    ap.add_argument("--native", action="store_true", help="modules built for this CPU (-march=native, one "
                    "copy of each kernel), as codegen.import_urdf builds them; default: portable (target_clones)")
    ap.add_argument("--one", nargs="+", metavar=("URDF", "EE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1:], args.native)))
        return 0
    from reference.robot_data import robots_dir

    base = robots_dir()
    chosen = [r for r in ROBOTS if not args.robots or r[0] in args.robots.split(",")]
    def measure(robot):
        name, rel, ees = robot
        load = os.getloadavg()[0]
        proc = subprocess.run([sys.executable, "-m", "benchmarks.build_times", *(["--native"] * args.native),
                               "--one", str(base / rel), *ees],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            raise SystemExit(f"{name}: {proc.stderr}")
        r = dict(json.loads(proc.stdout.strip().splitlines()[-1]), load=load)
        print(f"{name}: {r}", file=sys.stderr, flush=True)
        return name, r

    if args.from_log:
        rows = [(name, ast.literal_eval(text)) for name, _, text in
                (line.partition(": ") for line in Path(args.from_log).read_text().splitlines())
                if name in {r[0] for r in ROBOTS} and text.startswith("{")]
    else:
        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(measure, chosen))
    jobs = f"{args.jobs} robots measured at a time; " if args.jobs > 1 else ""
    text = ("# Build time and memory per robot\n\n"
            "Written by `python -m benchmarks.build_times` (do not edit by hand). Generation: URDF -> C "
            "(derivation, CSE, printing); module build: Cython and the C compiler, the Cython wrapper and "
            "the kernels' parts (one translation unit per kernel group, -DKKPART=k, see the C ABI page) "
            "compiled two at a time, the largest first (codegen/build/compiler.py). Peak RSS of the build: the "
            "largest sum over the build's processes, sampled every 0.1 s. Load avg: the 1-minute load "
            "average when the robot started. The machine is shared with other jobs (noisy): wall times "
            "vary with its load, CPU seconds much less. Generation emits the kernels on both cores "
            "(codegen/emit/parallel.py; its CPU column includes the workers'). The idle 2-core estimate is "
            "generation wall time (measured: read it with the load average) + Cython "
            "CPU + the translation units' CPU scheduled on two cores, longest first (the Cython figure is the "
            "Python process's CPU during the build without the /proc sampler's thread, whose CPU grows with "
            "the build's wall time and the machine's process count; rows logged before that split include "
            "it: an over-estimate). Peak RSS "
            "of a cc1: wait4's "
            "ru_maxrss of the compiler driver and its children; the driver is forked from the Python "
            "process and inherits its high-water mark, so a cc1 figure equal to the generation figure means "
            f"'at most that'. {jobs}{MODES[args.native]}\n\n"
            f"{machine_line(args.native)}\n\n{table(rows)}\n\nPer part of the kernels (compiler CPU, peak RSS):\n\n"
            f"{parts_table(rows)}\n")
    missing = [f"{name} ({rel})" for name, rel, _ in chosen if name not in {n for n, _ in rows}]
    if missing:
        text += (f"\nNot in this table (the logged run had not finished them): {', '.join(missing)}. "
                 "Measure them with `python -m benchmarks.build_times --robots NAME`.\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

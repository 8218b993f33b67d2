"""Generation scaling: DOF -> generation time, peak memory, C size, compile time.

    python -m benchmarks.scaling [--dofs 8 16 32 48 64] [--shapes chain humanoid]
                                 [--timeout 600] [--compile-timeout 300] [--opt -O2]
                                 [--root CHECKOUT] [--out benchmarks/results/scaling.md]

Builds synthetic model files (serial chains and humanoid-like branched trees
with joint axes permuted among x, y, z, some tilted axes and rotations from
Pythagorean triples, prismatic joints, non-zero origins and fixed tool frames),
runs `python -m codegen MODEL PARAMS --out DIR` in a subprocess for each, and
compiles the produced .c with gcc. Peak memory is the child's maximum resident
set size (getrusage of the waited-for child, via os.wait4). A size whose
generation exceeds --timeout is killed, reported as such, and larger sizes of
that shape are skipped. Times are wall and CPU seconds: on a shared machine
only the CPU figures compare. --root runs another checkout's generator (e.g.
an older commit unpacked with `git archive`) on the same models.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.env import cpu_model, first_line, provenance

ROOT = Path(__file__).resolve().parent.parent
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")

# Proper rotations with exact rational entries: axis permutations and two
# tilts built from the 3-4-5 triangle (not axis-aligned, as in real URDFs).
ROTATIONS = [
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[0, 0, 1], [1, 0, 0], [0, 1, 0]],
    [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
    [[0.6, -0.8, 0], [0.8, 0.6, 0], [0, 0, 1]],
    [[1, 0, 0], [0, 0, -1], [0, 1, 0]],
    [[0.8, 0, 0.6], [0, 1, 0], [-0.6, 0, 0.8]],
]
AXES = [[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, -1, 0], [0.6, 0, 0.8], [0, 0, -1]]


def _toml_list(v):
    return "[" + ", ".join(_toml_list(x) if isinstance(x, list) else repr(x) for x in v) + "]"


class ModelBuilder:
    """Accumulates frames; every k-th joint prismatic, a fixed frame per limb end."""

    def __init__(self, name):
        self.name, self.frames, self.geometry, self.ees, self.count = name, [], [], [], 0

    def joint(self, parent, kind=None):
        i = self.count
        self.count += 1
        key = f"f{len(self.frames)}"
        kind = kind or ("prismatic" if i % 7 == 3 else "revolute")
        # origins: a geometry symbol on some axis, a number on another
        g = f"L{len(self.geometry) + 1}"
        self.geometry.append(g)
        origin = ["0", "0", "0"]
        origin[i % 3] = g
        origin[(i + 1) % 3] = repr(0.01 * (1 + i % 5))
        self.frames.append(dict(key=key, parent=parent, joint=f"q{i}", type=kind,
                                axis=AXES[i % len(AXES)], rotation=ROTATIONS[i % len(ROTATIONS)],
                                origin=origin))
        return key

    def fixed(self, parent, ee=None):
        key = f"f{len(self.frames)}"
        self.frames.append(dict(key=key, parent=parent, type="fixed", rotation=ROTATIONS[1],
                                origin=["0.05", "0", "-0.02"]))
        if ee:
            self.ees.append((ee, key))
        return key

    def chain(self, parent, n):
        for _ in range(n):
            parent = self.joint(parent)
        return parent

    def toml(self):
        out = [f'name = "{self.name}"', f"geometry = {_toml_list(self.geometry)}".replace("'", '"'),
               "gravity = [0, 0, -1]", ""]
        for name, frame in self.ees:
            out += ["[[end_effector]]", f'name = "{name}"', f'frame = "{frame}"', ""]
        for f in self.frames:
            out.append("[[frame]]")
            for k, v in f.items():
                out.append(f"{k} = " + (_toml_list(v).replace("'", '"') if isinstance(v, list) else f'"{v}"'))
            out.append("")
        return "\n".join(out)

    def params_toml(self):
        lines = ["[values]", "g = 9.81"] + [f"{g} = 0.{3 + i % 5}" for i, g in enumerate(self.geometry)]
        for k, f in enumerate(self.frames):
            for n, v in zip(INERTIAL, (1.5, 0.1, -0.05, 0.2, 0.3, 0.01, -0.02, 0.25, 0.015, 0.2)):
                lines.append(f"{n}_{f['key']} = {v * (1 + 0.1 * (k % 3))}")
        return "\n".join(lines) + "\n"


def build_model(shape, ndof):
    b = ModelBuilder(f"{shape}{ndof}")
    if shape == "chain":
        tip = b.chain("0", ndof)
        b.fixed(tip, ee="tip")
        return b
    # humanoid-like: torso, head, two arms, two legs (Talos at 32: 2+2+2*(7+1)+2*6)
    torso_n = 2 if ndof >= 8 else 1
    head_n = 2 if ndof >= 12 else 0
    rest = ndof - torso_n - head_n
    limbs = [rest // 4 + (1 if i < rest % 4 else 0) for i in range(4)]
    torso = b.chain("0", torso_n)
    for i, n in enumerate(limbs):
        parent = torso if i < 2 else "0"  # arms on the torso, legs on the base
        tip = b.chain(parent, n)
        b.fixed(tip, ee=("arm", "arm", "leg", "leg")[i] + str(i % 2))
    if head_n:
        b.fixed(b.chain(torso, head_n))
    return b


def run_generation(root, model, params, out, timeout):
    """(wall s, CPU s, peak MB, "") or (None, CPU s, peak MB, why) on timeout/failure.
    CPU time (user + system of the child) is the figure to compare on a
    loaded machine; wall time is what a user waits."""
    t0 = time.perf_counter()
    errfile = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child never blocks
    proc = subprocess.Popen([sys.executable, "-m", "codegen", str(model), str(params), "--out", str(out)],
                            cwd=root, stdout=subprocess.DEVNULL, stderr=errfile,
                            start_new_session=True)
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            return None, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, "timeout"
        time.sleep(0.1)
    dt = time.perf_counter() - t0
    cpu = usage.ru_utime + usage.ru_stime
    errfile.seek(0)
    err = errfile.read().decode(errors="replace")
    errfile.close()
    if os.waitstatus_to_exitcode(status) != 0:
        return None, cpu, usage.ru_maxrss / 1024, ("failed: " + err.strip().splitlines()[-1]) if err.strip() else "failed"
    return dt, cpu, usage.ru_maxrss / 1024, ""


def total_ops(c_source: str) -> int:
    return sum(int(m) for m in re.findall(r"^ \*\s+\S+\s+(\d+)$", c_source.split("*/", 1)[0], re.M))


def compile_seconds(c_file, opt, timeout):
    """CPU seconds (user + system, gcc and its passes) to compile the kernels,
    as text, or ">timeout" (wall)."""
    cc = shutil.which("gcc") or "cc"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run([cc, opt, "-std=c99", "-fPIC", "-c", str(c_file), "-o", os.devnull], check=True,
                       cwd=c_file.parent, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f">{timeout:.0f}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return f"{after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dofs", type=int, nargs="+", default=[8, 16, 32, 48, 64])
    ap.add_argument("--shapes", nargs="+", default=["chain", "humanoid"], choices=["chain", "humanoid"])
    ap.add_argument("--timeout", type=float, default=600, help="seconds per generation")
    ap.add_argument("--opt", default="-O2", help="gcc optimization flag for the compile column")
    ap.add_argument("--compile-timeout", type=float, default=300, help="seconds per compile; 0: do not compile")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/scaling.md"))
    ap.add_argument("--keep", help="keep the models and generated C in this directory")
    ap.add_argument("--root", default=str(ROOT), help="checkout whose generator to run (to compare versions)")
    args = ap.parse_args(argv)
    work = Path(args.keep or tempfile.mkdtemp(prefix="scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    header = ("| DOF | shape | generate s | CPU s | peak MB | C ops | C KB | compile CPU s |\n"
              "|----:|-------|-----------:|------:|--------:|------:|-----:|--------------:|")
    print(header, flush=True)
    for shape in args.shapes:
        for n in sorted(args.dofs):
            b = build_model(shape, n)
            model, params = work / f"{b.name}.toml", work / f"{b.name}_params.toml"
            model.write_text(b.toml())
            params.write_text(b.params_toml())
            out = work / b.name
            dt, cpu, mb, why = run_generation(args.root, model, params, out, args.timeout)
            if dt is None:
                row = f"| {n} | {shape} | {why} (>{args.timeout:.0f} s) | {cpu:.1f} | {mb:.0f} | | | |"
                print(row, flush=True)
                rows.append(row)
                break
            c_file = out / f"{b.name}_kernels.c"
            src = c_file.read_text()
            cs = compile_seconds(c_file, args.opt, args.compile_timeout) if args.compile_timeout > 0 else "-"
            row = (f"| {n} | {shape} | {dt:.1f} | {cpu:.1f} | {mb:.0f} | {total_ops(src)} | "
                   f"{len(src.encode()) / 1024:.0f} | {cs} |")
            print(row, flush=True)
            rows.append(row)
    line = provenance(time.strftime("%Y-%m-%dT%H:%M:%S"), cpu_model(), os.cpu_count(),
                      first_line([shutil.which("gcc") or "cc", "--version"]), f"{args.opt} -std=c99 -fPIC -c")
    text = (f"# Generation scaling\n\n{line}\n\nMeasured by `python -m benchmarks.scaling`; load average at the end "
            f"{os.getloadavg()[0]:.1f} (CPU seconds compare on a loaded machine, wall seconds do not); "
            f"generate: wall and CPU (user + system) seconds of `python -m codegen`; "
            f"compile: CPU seconds of gcc {args.opt} -c of the generated .c. C ops: sum of the per-function "
            "operation counts in the banner.\n\n" + header + "\n" + "\n".join(rows) + "\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

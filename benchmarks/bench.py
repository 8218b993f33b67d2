#!/usr/bin/env python3
"""`make bench`: our generated kernels against Pinocchio, side by side.

What it does, in order:
1. Parameters: models/krang_params.toml if it exists, else a random physically
   valid vector (said so in the report). States: --states random (q, dq),
   drawn once with --seed, written to benchmarks/build/states.bin.
2. Pinocchio model: a URDF written from our frame table with every joint frame
   re-expressed so that its axis is +x/+y/+z (pin_model.py), loaded with
   pin.buildModelFromUrdf (joints RX/RY/RZ); checked against a model built from
   the frame table as is (RevoluteUnaligned joints) on the same states.
3. Builds (cached in benchmarks/build/, keyed on sources, flags and compiler):
   bench_c (generated/*.c + bench_c.c), bench_pin (Pinocchio header-only, same
   flags as ours) and bench_pin_lib (Pinocchio's shipped libraries).
4. Agreement: outputs of the three harnesses on the first states (--dump).
5. Timing: `--rounds` rounds, each running every harness once pinned to one core
   (taskset), alternating which goes first; median over rounds of each
   harness's own median. Two measurements per harness run: the tight loop (each
   kernel called alone, over and over: throughput of a hot kernel) and the
   control tick (A, C, Q, J_left, J_right called in sequence per state, each
   call timed on its own: latency as a controller sees it; also "cold", with
   the caches evicted before every tick). Python level: timeit medians of
   krang_kernels and pinocchio Python calls. Generation: sizes, op counts,
   -O2 compile times.
6. Writes benchmarks/results/bench.md, bench.json and bench.png.

No timing is asserted anywhere: the machine may be shared and noisy.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import time
import timeit
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import pin_model  # noqa: E402
from codegen.model import load_model, load_param_values  # noqa: E402

BOOST_DEFS = [
    "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
    "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
]
OPT = ["-O3", "-march=native", "-ffp-contract=fast", "-DNDEBUG"]
DUMP_STATES = 8


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- environment
def cmeel_prefix() -> Path:
    import pinocchio

    p = Path(pinocchio.__file__).resolve()
    for parent in p.parents:
        if parent.name == "cmeel.prefix":
            return parent
    raise SystemExit("cannot find the cmeel prefix of the pin wheel (is `pin` installed from PyPI?)")


def first_line(cmd) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip() if out else ""
    except (OSError, subprocess.CalledProcessError):
        return "?"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return " ".join(f for f in ("avx", "avx2", "fma", "avx512f") if f in flags)
    except OSError:
        pass
    return "?"


def cpu_caches() -> str:
    """Core 0's caches from sysfs, e.g. 'L1d 48K, L1i 64K, L2 2048K, L3 491520K'."""
    out = []
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((d / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        out.append(f"L{level}{dict(Data='d', Instruction='i').get(kind, '')} {size}")
    return ", ".join(out) or "?"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def taskset_prefix(core):
    if core is None or shutil.which("taskset") is None:
        return []
    return ["taskset", "-c", str(core)]


# ---------------------------------------------------------------- inputs
def get_params(model, args):
    path = ROOT / "models" / "krang_params.toml"
    if path.exists() and not args.random_params:
        return load_param_values(path, model), f"`{path.relative_to(ROOT)}`"
    return pin_model.random_params(model, seed=args.seed), (
        f"random physically valid vector (seed {args.seed}; "
        + ("--random-params" if path.exists() else "models/krang_params.toml does not exist yet")
        + ")"
    )


def draw_states(n, ndof, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n, ndof))
    dq = rng.uniform(-2.0, 2.0, (n, ndof))
    return q, dq


def write_states(path, params, q, dq):
    n, ndof = q.shape
    with open(path, "wb") as f:
        f.write(b"KRBS" + struct.pack("<4i", 1, n, ndof, len(params)))
        f.write(np.asarray(params, "<f8").tobytes())
        f.write(np.ascontiguousarray(q, "<f8").tobytes())
        f.write(np.ascontiguousarray(dq, "<f8").tobytes())


# ---------------------------------------------------------------- builds
def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _prune(build: Path, pattern: str, keep: Path):
    """Drop older cached builds of the same thing."""
    for old in build.glob(pattern):
        if old != keep:
            old.unlink(missing_ok=True)


def _run_build(cmd, what):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"build of {what} failed:\n{shlex.join(cmd)}\n{r.stderr[-4000:]}")
    return time.perf_counter() - t0


def build_ours(gen: Path, build: Path, cc: str, pool):
    sources = sorted(gen.glob("*.c"))
    header = gen / "krang_kernels.h"
    if not sources or not header.exists():
        return None, "no generated C (generated/*.c, generated/krang_kernels.h)"
    cver = first_line([cc, "--version"])
    hdrs = b"".join(h.read_bytes() for h in sorted(gen.glob("*.h")))
    objdir = build / "obj"
    objdir.mkdir(exist_ok=True)
    flags = ["-std=c99", *OPT, f"-I{gen}"]
    if "krang_jacobian_left_world" in header.read_text():
        flags.append("-DBENCH_HAVE_EE_FUNCS")
    jobs = []
    objs = []
    for src in sources:
        key = _digest([cver, *flags, src.name, src.read_bytes(), hdrs])
        obj = objdir / f"{src.stem}-{key}.o"
        objs.append(obj)
        if not obj.exists():
            tmp = obj.with_suffix(".tmp.o")
            jobs.append((obj, tmp, [cc, *flags, "-c", str(src), "-o", str(tmp)]))
    harness = [HERE / "bench_c.c", HERE / "bench_common.h"]
    key = _digest([cver, *flags, *(p.read_bytes() for p in harness), hdrs, *(o.name for o in objs)])
    exe = build / f"bench_c-{key}"
    if exe.exists():
        return exe, "cached"
    if jobs:
        log(f"compiling {len(jobs)} generated C file(s) with {cc} {' '.join(OPT)}")
    futures = [(pool.submit(_run_build, cmd, str(obj)), obj, tmp) for obj, tmp, cmd in jobs]
    for fut, obj, tmp in futures:
        fut.result()
        tmp.rename(obj)
    tmp = exe.with_suffix(".tmp")
    _run_build([cc, *flags, f"-I{HERE}", str(HERE / "bench_c.c"), *map(str, objs), "-lm", "-o", str(tmp)], "bench_c")
    tmp.rename(exe)
    _prune(build, "bench_c-*", exe)
    for src, obj in zip(sources, objs):
        _prune(objdir, f"{src.stem}-*.o", obj)
    return exe, "built"


def pin_build_cmd(prefix: Path, cxx: str, lib: bool, out: Path):
    inc = prefix / "include"
    cmd = [cxx, "-std=c++17"]
    if lib:
        # The wheel's libraries were built without -march=native: keep Eigen's
        # alignment and vector ABI equal to theirs.
        cmd += ["-O3", "-DNDEBUG", "-DBENCH_PIN_LIB", "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
                "-DPINOCCHIO_WITH_URDFDOM"]
    else:
        cmd += OPT
    cmd += BOOST_DEFS + [f"-I{HERE}", f"-I{inc}", f"-I{inc / 'eigen3'}"]
    if lib:
        cmd += [f"-I{inc / 'urdfdom'}", f"-I{inc / 'urdfdom_headers'}"]
    cmd += [str(HERE / "bench_pin.cpp"), "-o", str(out)]
    if lib:
        libdir = prefix / "lib"
        cmd += [f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-lpinocchio_default", "-lpinocchio_parsers"]
    return cmd


def build_pin(prefix: Path, build: Path, cxx: str, lib: bool, pin_version: str):
    if not (prefix / "include" / "eigen3" / "Eigen").exists():
        raise SystemExit("Eigen headers missing: pip install cmeel-eigen (the `bench` extra)")
    if lib and not (prefix / "include" / "urdfdom_headers").exists():
        return None, "urdfdom headers missing: pip install cmeel-urdfdom-headers"
    name = "bench_pin_lib" if lib else "bench_pin"
    cxxver = first_line([cxx, "--version"])
    probe = pin_build_cmd(prefix, cxx, lib, Path("OUT"))
    key = _digest([cxxver, pin_version, *probe, (HERE / "bench_pin.cpp").read_bytes(),
                   (HERE / "bench_common.h").read_bytes()])
    exe = build / f"{name}-{key}"
    if exe.exists():
        return exe, "cached"
    log(f"compiling {name} (Pinocchio C++, takes a minute or two)")
    tmp = exe.with_suffix(".tmp")
    _run_build(pin_build_cmd(prefix, cxx, lib, tmp), name)
    tmp.rename(exe)
    _prune(build, f"{name}-*", exe)
    return exe, "built"


# ---------------------------------------------------------------- agreement
def read_dump(path, nd, k):
    per = 2 * nd * nd + nd + 12 * nd
    raw = np.fromfile(path, dtype="<f8")
    if raw.size != per * k:
        raise ValueError(f"{path}: {raw.size} values, expected {per * k}")
    out = []
    for s in range(k):
        r = raw[s * per:(s + 1) * per]
        o = 0
        A = r[o:o + nd * nd].reshape(nd, nd); o += nd * nd
        C = r[o:o + nd * nd].reshape(nd, nd); o += nd * nd
        Q = r[o:o + nd]; o += nd
        Jl = r[o:o + 6 * nd].reshape(6, nd); o += 6 * nd
        Jr = r[o:o + 6 * nd].reshape(6, nd)
        out.append(dict(A=A, C=C, Q=Q, J_left=Jl, J_right=Jr))
    return out


def rel_err(a, b):
    scale = max(np.abs(b).max(), 1e-300)
    return float(np.abs(a - b).max() / scale)


def compare(dx, dy, dq):
    """Relative max errors of x against y (keys as in read_dump, plus C*dq)."""
    res = {}
    for key in ("A", "C", "Q", "J_left", "J_right"):
        res[key] = max(rel_err(x[key], y[key]) for x, y in zip(dx, dy))
    res["C*dq"] = max(rel_err(x["C"] @ v, y["C"] @ v) for x, y, v in zip(dx, dy, dq))
    return res


def python_pin_outputs(pmodel, model, q, dq):
    import pinocchio as pin

    perm = pin_model.q_permutation(pmodel, model)
    data = pmodel.createData()
    ees = pin_model.ee_joint_names(model)
    out = []
    for qq, vv in zip(q, dq):
        qp = np.empty_like(qq); qp[perm] = qq
        vp = np.empty_like(vv); vp[perm] = vv
        M = pin.crba(pmodel, data, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.computeCoriolisMatrix(pmodel, data, qp, vp).copy()
        G = pin.computeGeneralizedGravity(pmodel, data, qp).copy()
        pin.computeJointJacobians(pmodel, data, qp)
        J = {side: pin.getJointJacobian(pmodel, data, pmodel.getJointId(ees[side]), pin.LOCAL_WORLD_ALIGNED)[:, perm]
             for side in ("left", "right")}
        out.append(dict(A=M[np.ix_(perm, perm)], C=C[np.ix_(perm, perm)], Q=G[perm], J_left=J["left"],
                        J_right=J["right"]))
    return out


# ---------------------------------------------------------------- timing
def run_harness(cmd, core, parse=True):
    r = subprocess.run(taskset_prefix(core) + [str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{shlex.join(map(str, cmd))} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout) if parse else None


def timing_rounds(harnesses, rounds, core, extra):
    """harnesses: {name: argv}. Returns ({name: {kernel: [median per round]}},
    {name: {mode: {call: [median per round]}}} for the control tick, {name: timer info})."""
    res = {name: {} for name in harnesses}
    tick = {name: {} for name in harnesses}
    timer = {}
    names = list(harnesses)
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            out = run_harness(harnesses[name] + extra, core)
            for k, (med, _mn) in out["ns"].items():
                res[name].setdefault(k, []).append(med)
            t = out.get("tick")
            if t:
                for mode in ("warm", "cold"):
                    for k, (med, _mn, p90) in t.get(mode, {}).items():
                        tick[name].setdefault(mode, {}).setdefault(k, []).append(med)
                        tick[name].setdefault(mode + "_p90", {}).setdefault(k, []).append(p90)
                timer.setdefault(name, []).append(
                    {k: v for k, v in t.items() if not isinstance(v, dict)})
        log(f"round {r + 1}/{rounds} done (load {loadavg()})")
    return res, tick, timer


def summarize(per_round):
    return {h: {k: dict(median=statistics.median(v), lo=min(v), hi=max(v), n=len(v)) for k, v in ks.items()}
            for h, ks in per_round.items()}


def summarize_tick(tick_rounds):
    return {h: {mode: {k: dict(median=statistics.median(v), lo=min(v), hi=max(v), n=len(v)) for k, v in ks.items()}
                for mode, ks in modes.items()}
            for h, modes in tick_rounds.items()}


def summarize_timer(timer):
    """Per harness: the timer's name and the medians over runs of its numbers."""
    out = {}
    for h, runs in timer.items():
        d = {"timer": runs[0].get("timer")}
        for k in ("ns_per_count", "overhead_ns", "clock_gettime_ns", "cold_bytes", "warm_ticks", "cold_ticks"):
            v = [r[k] for r in runs if k in r]
            if v:
                d[k] = statistics.median(v)
        out[h] = d
    return out


def per_call_us(fn, repeat):
    t = timeit.Timer(fn)
    number, _ = t.autorange()
    return statistics.median(x / number * 1e6 for x in t.repeat(repeat, number))


def python_level(pmodel, model, q, dq, repeat, core):
    import pinocchio as pin

    old_aff = None
    if core is not None and hasattr(os, "sched_setaffinity"):
        old_aff = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {core})
    try:
        rows = []
        perm = pin_model.q_permutation(pmodel, model)
        qp = np.empty_like(q); qp[perm] = q
        vp = np.empty_like(dq); vp[perm] = dq
        data = pmodel.createData()
        ees = pin_model.ee_joint_names(model)
        jl, jr = (pmodel.getJointId(ees[s]) for s in ("left", "right"))
        fl, fr = (pmodel.getFrameId(ees[s], pin.JOINT) for s in ("left", "right"))
        LWA = pin.LOCAL_WORLD_ALIGNED
        pin_calls = {
            "A": ("crba", lambda: pin.crba(pmodel, data, qp)),
            "C": ("computeCoriolisMatrix", lambda: pin.computeCoriolisMatrix(pmodel, data, qp, vp)),
            "Q": ("computeGeneralizedGravity", lambda: pin.computeGeneralizedGravity(pmodel, data, qp)),
            "J_left": ("computeFrameJacobian(LWA)", lambda: pin.computeFrameJacobian(pmodel, data, qp, fl, LWA)),
            "J_both": ("computeJointJacobians + 2 getJointJacobian(LWA)", lambda: (
                pin.computeJointJacobians(pmodel, data, qp), pin.getJointJacobian(pmodel, data, jl, LWA),
                pin.getJointJacobian(pmodel, data, jr, LWA))),
            "J_both_framejac": ("2 computeFrameJacobian(LWA)", lambda: (
                pin.computeFrameJacobian(pmodel, data, qp, fl, LWA),
                pin.computeFrameJacobian(pmodel, data, qp, fr, LWA))),
        }
        pin_us = {k: per_call_us(f, repeat) for k, (_, f) in pin_calls.items()}
        best_j = "J_both" if pin_us["J_both"] <= pin_us["J_both_framejac"] else "J_both_framejac"
        pin_us["all"] = pin_us["A"] + pin_us["C"] + pin_us["Q"] + pin_us[best_j]

        ours, ours_out, note = {}, {}, ""
        try:
            import krang_kernels as kk
        except ImportError as exc:
            kk, note = None, f"krang_kernels not importable ({exc}); build it first (make build)"
        if kk is not None:
            n = len(q)
            A = np.empty((n, n)); C = np.empty((n, n)); Qv = np.empty(n)
            Jl = np.empty((6, n)); Jr = np.empty((6, n))
            left, right = "left", "right"
            try:
                kk.jacobian(q, left)
            except (TypeError, ValueError):
                left, right = 0, 1
            calls = {
                "A": (lambda: kk.compute_A(q), lambda: kk.compute_A(q, out=A)),
                "C": (lambda: kk.compute_C(q, dq), lambda: kk.compute_C(q, dq, out=C)),
                "Q": (lambda: kk.compute_Q(q), lambda: kk.compute_Q(q, out=Qv)),
                "J_left": (lambda: kk.jacobian(q, left), lambda: kk.jacobian(q, left, out=Jl)),
                "J_both": (lambda: (kk.jacobian(q, left), kk.jacobian(q, right)),
                           lambda: (kk.jacobian(q, left, out=Jl), kk.jacobian(q, right, out=Jr))),
                "all": (lambda: kk.compute_all(q, dq), None),
            }
            for k, (plain, with_out) in calls.items():
                try:
                    ours[k] = per_call_us(plain, repeat)
                except Exception as exc:  # an API that differs from the spec: report, do not die
                    ours[k] = None
                    note += f" {k}: {type(exc).__name__}: {exc};"
                try:
                    ours_out[k] = per_call_us(with_out, repeat) if with_out else None
                except Exception as exc:
                    ours_out[k] = None
                    note += f" {k}(out=): {type(exc).__name__}: {exc};"
        labels = {"A": "A", "C": "C", "Q": "Q", "J_left": "J_left", "J_both": "J_left + J_right",
                  "all": "compute_all vs pin's four"}
        for k, label in labels.items():
            pin_name = pin_calls[k][0] if k in pin_calls else f"sum: crba + Coriolis + gravity + {best_j}"
            if k == "J_both":
                pin_name = pin_calls[best_j][0]
            rows.append(dict(kernel=label, ours=ours.get(k), ours_out=ours_out.get(k),
                             pin=pin_us[best_j] if k == "J_both" else pin_us[k], pin_call=pin_name))
        return rows, note.strip()
    finally:
        if old_aff is not None:
            os.sched_setaffinity(0, old_aff)


# ---------------------------------------------------------------- generation figures
# Op counts: the banner's table ("operations per function ...:" then " *   name   N" lines),
# or "/* ops name: N */" lines.
OPS_RE = re.compile(r"/\*\s*ops\s+([A-Za-z_][\w ]*?)\s*:\s*(\d+)\s*\*/")
OPS_ROW_RE = re.compile(r"^\s*\*\s+([A-Za-z_]\w*)\s+(\d+)\s*$")


def op_counts(text):
    ops = [(m.group(1), int(m.group(2))) for m in OPS_RE.finditer(text)]
    head = text.split("*/", 1)[0]
    if "operations per function" in head:
        rows = head.split("operations per function", 1)[1].splitlines()[1:]
        ops += [(m.group(1), int(m.group(2))) for m in map(OPS_ROW_RE.match, rows) if m]
    return ops


def generation_figures(gen: Path, cc: str, measure_compile: bool):
    files = []
    for f in sorted(gen.glob("*.c")) + sorted(gen.glob("*.h")):
        text = f.read_text(errors="replace")
        ops = op_counts(text) if f.suffix == ".c" else []
        entry = dict(file=f.name, bytes=f.stat().st_size, lines=text.count("\n"), ops=ops, compile_s=None)
        if measure_compile and f.suffix == ".c":
            t0 = time.perf_counter()
            r = subprocess.run([cc, "-std=c99", "-O2", f"-I{gen}", "-c", str(f), "-o", os.devnull],
                               capture_output=True, text=True)
            entry["compile_s"] = time.perf_counter() - t0 if r.returncode == 0 else None
        files.append(entry)
    return files


def machine_code_sizes(objdir: Path):
    """{function: bytes of machine code} of our kernels' cached objects (nm -S), {} if unavailable."""
    sizes = {}
    if shutil.which("nm") is None:
        return sizes
    for obj in sorted(objdir.glob("*.o")):
        r = subprocess.run(["nm", "-S", str(obj)], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "Tt" and f[3].startswith("krang_"):
                sizes[f[3]] = int(f[1], 16)
    return sizes


# ---------------------------------------------------------------- report
def fmt_ns(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def fmt_us(v):
    return "n/a" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.3g}"


PIN_CALLS = {
    "A": "crba (upper triangle, Convention::LOCAL)",
    "A_sym": "crba + copy upper to lower triangle",
    "A_worldconv": "crba(Convention::WORLD)",
    "C": "computeCoriolisMatrix",
    "Q": "computeGeneralizedGravity",
    "nle_rnea": "rnea(q, dq, 0) (= C*dq + Q, vector only)",
    "J_left": "computeJointJacobian + rotate to LOCAL_WORLD_ALIGNED",
    "J_right": "computeJointJacobian + rotate to LOCAL_WORLD_ALIGNED",
    "J_both": "2 x (computeJointJacobian + rotate to LOCAL_WORLD_ALIGNED)",
    "J_both_alljac": "computeJointJacobians + 2 getJointJacobian(LOCAL_WORLD_ALIGNED)",
    "J_both_framejac": "2 computeFrameJacobian(LOCAL_WORLD_ALIGNED)",
    "J_left_local": "computeJointJacobian (LOCAL)",
    "J_both_local": "2 computeJointJacobian (LOCAL)",
    "all_seq": "crba + computeCoriolisMatrix + computeGeneralizedGravity + 2 x J (in sequence)",
}
OUR_CALLS = {
    "A": "krang_compute_A", "C": "krang_compute_C", "Q": "krang_compute_Q",
    "J_left": "krang_jacobian(LEFT, WORLD)", "J_right": "krang_jacobian(RIGHT, WORLD)",
    "J_both": "krang_jacobian LEFT + RIGHT (WORLD)",
    "J_left_direct": "krang_jacobian_left_world (no dispatch)",
    "J_both_direct": "krang_jacobian_left_world + krang_jacobian_right_world", "J_left_local": "krang_jacobian(LEFT, LOCAL)",
    "J_both_local": "krang_jacobian LEFT + RIGHT (LOCAL)", "friction": "krang_friction",
    "all": "krang_compute_all",
    "all_seq": "krang_compute_A + _C + _Q + jacobian_left_world + jacobian_right_world (in sequence)",
}
J_VARIANTS = ("J_both", "J_both_alljac", "J_both_framejac")


def headline(summary):
    """Rows kernel | ours | pin | pin-lib | pin call."""
    ours = summary.get("ours", {})
    pin = summary.get("pin", {})
    lib = summary.get("pin-lib", {})

    def med(d, k):
        return d[k]["median"] if k in d else None

    def best_j(d):
        cands = [(d[k]["median"], k) for k in J_VARIANTS if k in d]
        return min(cands) if cands else (None, None)

    pj, pj_name = best_j(pin)
    lj, lj_name = best_j(lib)
    rows = [
        ("A", med(ours, "A"), med(pin, "A"), med(lib, "A"), PIN_CALLS["A"]),
        ("C", med(ours, "C"), med(pin, "C"), med(lib, "C"), PIN_CALLS["C"]),
        ("Q", med(ours, "Q"), med(pin, "Q"), med(lib, "Q"), PIN_CALLS["Q"]),
        ("J_left", med(ours, "J_left"), med(pin, "J_left"), med(lib, "J_left"), PIN_CALLS["J_left"]),
        ("J_right", med(ours, "J_right"), med(pin, "J_right"), med(lib, "J_right"), PIN_CALLS["J_right"]),
        ("J_left + J_right", med(ours, "J_both"), pj, lj,
         f"fastest of three: {PIN_CALLS[pj_name]}" if pj_name else ""),
    ]
    four = [med(pin, "A"), med(pin, "C"), med(pin, "Q"), pj]
    four_lib = [med(lib, "A"), med(lib, "C"), med(lib, "Q"), lj]
    rows.append(("compute_all vs sum of pin's four", med(ours, "all"),
                 sum(four) if None not in four else None,
                 sum(four_lib) if None not in four_lib else None,
                 "sum of the four rows above"))
    return rows, pj_name


TICK_ROWS = [("A", "A"), ("C", "C"), ("Q", "Q"), ("J_left + J_right", "J_left+J_right"),
             ("whole tick", "tick")]
# The tight-loop key of each tick row (the whole tick: the sum of the four rows above it).
TICK_TIGHT = {"A": ["A"], "C": ["C"], "Q": ["Q"], "J_left+J_right": ["J_both"],
              "tick": ["A", "C", "Q", "J_both"]}
# Python-level row -> (tight-loop key of ours, control-tick key of ours)
PY_C_KEYS = {"A": ("A", "A"), "C": ("C", "C"), "Q": ("Q", "Q"), "J_left": ("J_left", "J_left"),
             "J_left + J_right": ("J_both", "J_left+J_right")}


def tick_rows(summary, tick_summary, mode):
    """Rows label | ours | pin | pin-lib | ours tight | pin tight, ns (None where missing)."""
    def tk(h, k):
        d = tick_summary.get(h, {}).get(mode, {})
        return d[k]["median"] if k in d else None

    def tight(h, k):
        d = summary.get(h, {})
        vals = [d[x]["median"] if x in d else None for x in TICK_TIGHT[k]]
        return sum(vals) if None not in vals else None

    return [(label, tk("ours", k), tk("pin", k), tk("pin-lib", k), tight("ours", k), tight("pin", k))
            for label, k in TICK_ROWS]


def add_c_columns(py_rows, summary, tick_summary):
    """Python out= minus the C tight loop and minus the C control tick (ours), µs."""
    ours = summary.get("ours", {})
    warm = tick_summary.get("ours", {}).get("warm", {})
    for r in py_rows:
        tight_k, tick_k = PY_C_KEYS.get(r["kernel"], (None, None))
        c_tight = ours[tight_k]["median"] / 1e3 if tight_k in ours else None
        c_tick = warm[tick_k]["median"] / 1e3 if tick_k in warm else None
        py = r.get("ours_out")
        r["c_tight_us"], r["c_tick_us"] = c_tight, c_tick
        r["out_minus_c_tight_us"] = py - c_tight if py is not None and c_tight is not None else None
        r["out_minus_c_tick_us"] = py - c_tick if py is not None and c_tick is not None else None
    return py_rows


def fmt_dus(v):
    return "n/a" if v is None else f"{v:+.2f}"


def write_report(out_dir: Path, info, summary, agreement, py_rows, py_note, gen_files, gen_time,
                 tick_summary=None, timer=None):
    out_dir.mkdir(parents=True, exist_ok=True)
    tick_summary = tick_summary or {}
    timer = timer or {}
    rows, pj_name = headline(summary)
    L = []
    L.append("# krang-kernels benchmark: generated C vs Pinocchio\n")
    L.append(f"Made by `benchmarks/bench.py` on {info['date']}. No timing is asserted anywhere; "
             "the machine may be shared, so treat differences under ~10 % as noise.\n")
    L.append("| | |\n|---|---|")
    for k in ("cpu", "cpu_flags", "cpu_caches", "cores", "cc", "cxx", "flags_ours", "flags_pin", "flags_pin_lib", "pin",
              "python", "numpy", "params", "states", "rounds", "pinned", "load", "code_bytes"):
        L.append(f"| {k} | {info.get(k, '')} |")
    L.append("")
    L.append("## C / C++ level: ns per call\n")
    L.append("Median over rounds of each run's median (runs alternate ours / Pinocchio, pinned to one core). "
             "*Pinocchio* is Pinocchio's algorithms compiled here, header-only, with our flags "
             f"(`{info['flags_ours']}`, model from a URDF with RX/RY/RZ joints); *Pinocchio libs* runs the "
             "explicitly instantiated algorithms of the wheel's `libpinocchio_default` (its own flags).\n")
    L.append("| kernel | ours ns | Pinocchio ns | ratio ours/pin | Pinocchio libs ns | Pinocchio call |")
    L.append("|---|---:|---:|---:|---:|---|")
    for label, o, p, lb, call in rows:
        L.append(f"| {label} | {fmt_ns(o)} | {fmt_ns(p)} | {ratio(o, p)} | {fmt_ns(lb)} | {call} |")
    L.append("")
    L.append("Notes: Pinocchio's `crba` fills only the upper triangle (ours writes all of A; `A_sym` below "
             "adds the copy). Our `world` Jacobian is Pinocchio's `LOCAL_WORLD_ALIGNED`. For J_left + J_right "
             "the fastest of three Pinocchio ways is taken"
             + (f" (here `{pj_name}`)" if pj_name else "") + ".\n")
    if tick_summary:
        t_ours = timer.get("ours") or next(iter(timer.values()), {})
        cold_kib = (t_ours.get("cold_bytes") or 0) / 1024
        L.append("## Control tick: per-call latency in sequence (ns)\n")
        L.append(
            "The table above is throughput of a hot kernel: each kernel is called alone in a tight loop, so its "
            "code and data stay in L1/L2. A controller instead runs the kernels one after the other once per tick. "
            "Here, for each pre-drawn state in turn, one tick calls A, C, Q, J_left, J_right "
            "(ours: `krang_compute_A`, `krang_compute_C`, `krang_compute_Q`, `krang_jacobian_left_world`, "
            "`krang_jacobian_right_world`; Pinocchio: `crba`, `computeCoriolisMatrix`, "
            "`computeGeneralizedGravity`, and the main table's J_left/J_right method "
            "(`computeJointJacobian` + rotate to LOCAL_WORLD_ALIGNED) once per arm), and every call is timed on "
            f"its own with {t_ours.get('timer', '?')}; the timer overhead, measured as the median of empty timed "
            f"regions ({t_ours.get('overhead_ns', float('nan')):.1f} ns here; `clock_gettime` costs "
            f"{t_ours.get('clock_gettime_ns', float('nan')):.0f} ns), is subtracted from each call. Figures: median "
            "over ticks (about "
            f"{t_ours.get('warm_ticks', 0):,.0f} ticks per measurement for ours), median over measurements and "
            "rounds; rounds alternate ours / Pinocchio as above. *whole tick* is timed in a separate pass with no "
            "timestamps inside the tick; its *tight loop* figure is the sum of the four tight-loop rows. The "
            "ratio columns are ours / Pinocchio; *tick / tight* is how much longer the same call takes inside "
            "the tick than in its tight loop.\n")

        def tick_table(mode):
            L.append("| call | ours ns | Pinocchio ns | ratio ours/pin | Pinocchio libs ns | tight loop: ours ns "
                     "| tight loop: Pinocchio ns | tight loop ratio | ours tick / tight | Pinocchio tick / tight |")
            L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for label, o, p, lb, ot, pt in tick_rows(summary, tick_summary, mode):
                L.append(f"| {label} | {fmt_ns(o)} | {fmt_ns(p)} | {ratio(o, p)} | {fmt_ns(lb)} | {fmt_ns(ot)} | "
                         f"{fmt_ns(pt)} | {ratio(ot, pt)} | {ratio(o, ot)} | {ratio(p, pt)} |")
            L.append("")

        tick_table("warm")
        ours_w = tick_summary.get("ours", {}).get("warm", {})
        if "sum" in ours_w and "tick" in ours_w:
            pin_w = tick_summary.get("pin", {}).get("warm", {})
            extra = (f"; Pinocchio {fmt_ns(pin_w['sum']['median'])} vs {fmt_ns(pin_w['tick']['median'])}"
                     if "sum" in pin_w and "tick" in pin_w else "")
            all_seq = summary.get("ours", {}).get("all_seq", {}).get("median")
            pin_seq = summary.get("pin", {}).get("all_seq", {}).get("median")
            L.append(f"Check: the sum of the individually timed calls of a tick, ours "
                     f"{fmt_ns(ours_w['sum']['median'])} ns vs the whole tick timed alone "
                     f"{fmt_ns(ours_w['tick']['median'])} ns{extra}; the same sequence in a tight loop over the "
                     f"states (`all_seq`): ours {fmt_ns(all_seq)} ns, Pinocchio {fmt_ns(pin_seq)} ns.\n")
        if any("cold" in m for m in tick_summary.values()):
            L.append("### Cold tick: caches evicted before every tick (ns)\n")
            L.append(f"Before every tick the harness reads one byte of every cache line of a {cold_kib:,.0f} KiB "
                     f"buffer (`--cold-kib`; caches per core: {info.get('cpu_caches', '?')}). With L2 = 2 MiB a "
                     "2 MiB buffer evicts only part of it; on the machine this was written on, 4 and 8 MiB gave "
                     "the same figures. So each tick starts with its code and data out of L1/L2 (served from L3). "
                     "This is the other bound: a real tick that follows other work (estimation, I/O, a Python "
                     "step) lies between the warm and the cold figures, depending on how much that work "
                     "displaces. Our kernels are long straight-line code (machine code: "
                     f"{info.get('code_bytes', '?')}), Pinocchio's are small loops over the joints, so cache "
                     f"misses cost ours much more. About {t_ours.get('cold_ticks', 0):,.0f} ticks per "
                     "measurement.\n")
            tick_table("cold")
        L.append("Per-tick 90th percentiles (median over rounds, ns) are in bench.json (`tick_summary`, "
                 "modes `warm_p90` / `cold_p90`).\n")
    L.append("### Every timed call (median [min - max over rounds], ns)\n")
    L.append("| harness | name | median | range | call |")
    L.append("|---|---|---:|---|---|")
    for h, ks in summary.items():
        for k, s in ks.items():
            call = OUR_CALLS.get(k, "") if h == "ours" else PIN_CALLS.get(k, "")
            L.append(f"| {h} | {k} | {fmt_ns(s['median'])} | {fmt_ns(s['lo'])} - {fmt_ns(s['hi'])} | {call} |")
    L.append("")
    L.append("## Agreement (max relative error over the first states)\n")
    if agreement:
        keys = ["A", "C", "C*dq", "Q", "J_left", "J_right"]
        L.append("| pair | " + " | ".join(keys) + " |")
        L.append("|---|" + "---:|" * len(keys))
        for pair, res in agreement.items():
            L.append(f"| {pair} | " + " | ".join(f"{res[k]:.1e}" if k in res else "" for k in keys) + " |")
        L.append("\nC is compared as a matrix and as C*dq: any factorization with the same C*dq is a valid "
                 "Coriolis matrix; ours uses Christoffel symbols.\n")
    else:
        L.append("No generated C yet.\n")
    L.append("## Python level: µs per call\n")
    L.append("timeit medians, one state, pinned to one core; default parameters (`params=None`). Pinocchio's "
             "Python calls write into its `data` (they have no `out=`).\n")
    if py_note:
        L.append(f"Note: {py_note}\n")
    L.append("The two *minus C* columns are a `krang_kernels` call with `out=` minus ours in C, the C time taken "
             "from the tight loop (C/C++ table) and from the warm control tick. Neither is purely the wrapper's "
             "cost: in timeit's loop the kernel runs between interpreter code, which displaces part of its code, "
             "so it is colder than in the tight loop (the tight-loop column also counts that slowdown, large for "
             "the long C) but can be warmer than in the tick, where the much longer compute_C runs between two "
             "A calls (hence negative values). The small kernels (Q, J), whose C time hardly depends on the "
             "context, show the wrapper's own cost. compute_all has no `out=`.\n")
    L.append("| kernel | krang_kernels µs | with out= µs | Python out= minus C (tight loop) µs "
             "| Python out= minus C (tick latency) µs | pinocchio µs | ratio ours (faster of the two)/pin "
             "| pinocchio call |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in py_rows:
        best = min((v for v in (r["ours"], r["ours_out"]) if v is not None), default=None)
        L.append(f"| {r['kernel']} | {fmt_us(r['ours'])} | {fmt_us(r['ours_out'])} | "
                 f"{fmt_dus(r.get('out_minus_c_tight_us'))} | {fmt_dus(r.get('out_minus_c_tick_us'))} | "
                 f"{fmt_us(r['pin'])} | {ratio(best, r['pin'])} | {r['pin_call']} |")
    L.append("")
    L.append("## Generation\n")
    if gen_files:
        L.append("| file | bytes | lines | ops (banner) | gcc -O2 compile s |")
        L.append("|---|---:|---:|---|---:|")
        for f in gen_files:
            ops = ", ".join(f"{k}: {v:,}" for k, v in f["ops"]) or ""
            cs = f"{f['compile_s']:.2f}" if f["compile_s"] is not None else ""
            L.append(f"| {f['file']} | {f['bytes']:,} | {f['lines']:,} | {ops} | {cs} |")
        tb = sum(f["bytes"] for f in gen_files if f["file"].endswith(".c"))
        tc = [f["compile_s"] for f in gen_files if f["compile_s"] is not None]
        L.append(f"| **all .c** | {tb:,} | | | {sum(tc):.2f} |" if tc else f"| **all .c** | {tb:,} | | | |")
        L.append("")
    else:
        L.append("No generated sources found.\n")
    L.append(f"`make generate` wall time: {gen_time}\n")
    L.append("![bench](bench.png)\n")
    (out_dir / "bench.md").write_text("\n".join(L))
    return rows


def plot(out_dir: Path, rows, py_rows, summary=None, tick_summary=None):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (pip install matplotlib, the `bench` extra): no bench.png")
        return False
    have_tick = bool(tick_summary) and bool(tick_summary.get("ours"))
    ncols = 3 if have_tick else 2
    fig, axes = plt.subplots(1, ncols, figsize=(20 if have_tick else 14, 5.5),
                             gridspec_kw=dict(width_ratios=[7, 6, 6][:ncols]))
    series = [("ours", 1, "#1f77b4"), ("Pinocchio (same flags)", 2, "#ff7f0e"), ("Pinocchio libs", 3, "#bbbbbb")]
    x = np.arange(len(rows))
    w = 0.27
    ax = axes[0]
    for n, (label, col, color) in enumerate(series):
        vals = [r[col] if r[col] is not None else 0 for r in rows]
        bars = ax.bar(x + (n - 1) * w, vals, w, label=label, color=color)
        if col == 1:
            for b, r in zip(bars, rows):
                if r[1] is not None and r[2]:
                    ax.annotate(f"{r[1] / r[2]:.2g}x", (b.get_x() + b.get_width() / 2, b.get_height()),
                                ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [r[0].replace("compute_all vs sum of pin's four", "all vs sum") for r in rows],
                  rotation=20, ha="right")
    ax.set_ylabel("ns per call (median)")
    ax.set_yscale("log")
    ax.set_title("C / C++ level, tight loop (label: ours / Pinocchio)")
    ax.legend(fontsize=8)
    ax = axes[1]
    x = np.arange(len(py_rows))
    for n, (key, label, color) in enumerate([("ours", "krang_kernels", "#1f77b4"),
                                             ("ours_out", "krang_kernels out=", "#6baed6"),
                                             ("pin", "pinocchio", "#ff7f0e")]):
        ax.bar(x + (n - 1) * w, [r[key] or 0 for r in py_rows], w, label=label, color=color)
    ax.set_xticks(x, [r["kernel"].replace("compute_all vs pin's four", "all vs sum") for r in py_rows],
                  rotation=20, ha="right")
    ax.set_ylabel("µs per call (median)")
    ax.set_yscale("log")
    ax.set_title("Python level")
    ax.legend(fontsize=8)
    if have_tick:
        ax = axes[2]
        modes = [("tight", "tight loop", "#9ecae1")] + [
            (m, lab, c) for m, lab, c in (("warm", "control tick", "#3182bd"), ("cold", "cold tick", "#08306b"))
            if any(m in v for v in tick_summary.values())]
        labels = [label for label, _ in TICK_ROWS]
        x = np.arange(len(labels))
        w = 0.8 / len(modes)
        for n, (mode, lab, color) in enumerate(modes):
            if mode == "tight":
                tr = tick_rows(summary, tick_summary, "warm")
                vals = [r[4] / r[5] if r[4] is not None and r[5] else 0 for r in tr]
            else:
                tr = tick_rows(summary, tick_summary, mode)
                vals = [r[1] / r[2] if r[1] is not None and r[2] else 0 for r in tr]
            bars = ax.bar(x + (n - (len(modes) - 1) / 2) * w, vals, w, label=lab, color=color)
            for b, v in zip(bars, vals):
                if v:
                    ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, b.get_height()),
                                ha="center", va="bottom", fontsize=7)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel("ratio ours / Pinocchio (lower: ours faster)")
        ax.set_title("C / C++ level: tight loop vs control tick")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "bench.png", dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generated", type=Path, default=ROOT / "generated", help="generated C directory")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "krang.toml")
    ap.add_argument("--build-dir", type=Path, default=HERE / "build")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--rounds", type=int, default=5, help="alternating harness runs (>= 5 recommended)")
    ap.add_argument("--states", type=int, default=64)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--target-ms", type=float, default=20.0, help="duration of one measurement")
    ap.add_argument("--inner", type=int, default=5, help="measurements per harness run")
    ap.add_argument("--py-repeat", type=int, default=7, help="timeit repeats at the Python level")
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last one)")
    ap.add_argument("--no-pin", dest="pin_core", action="store_false", help="do not pin to a core")
    ap.add_argument("--no-pin-lib", action="store_true", help="skip the shipped-libraries Pinocchio build")
    ap.add_argument("--no-python", action="store_true", help="skip the Python-level timings")
    ap.add_argument("--no-tick", action="store_true", help="skip the control-tick measurement")
    ap.add_argument("--cold-kib", type=int, default=4096,
                    help="buffer read before every cold tick, KiB (0: no cold tick; default 4096 = 2x this "
                         "machine's L2 per core)")
    ap.add_argument("--no-compile-time", action="store_true", help="skip the -O2 compile-time measurement")
    ap.add_argument("--random-params", action="store_true", help="ignore models/krang_params.toml")
    ap.add_argument("--generate-time", type=float, default=None, help="`make generate` wall time to report (s)")
    ap.add_argument("--measure-generate", action="store_true",
                    help="time the generation step of `make generate` (python -m codegen), into a scratch "
                         "directory under --build-dir so generated/ is left alone")
    ap.add_argument("--quick", action="store_true", help="1 round, short measurements (smoke test)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.target_ms, args.inner, args.py_repeat = 1, 5.0, 3, 3
    core = None
    if args.pin_core:
        core = args.cpu if args.cpu is not None else (os.cpu_count() or 1) - 1

    import pinocchio as pin

    build = args.build_dir
    build.mkdir(parents=True, exist_ok=True)
    gen_time = f"{args.generate_time:.1f} s (given)" if args.generate_time is not None else "not measured"
    if args.measure_generate:
        scratch = build / "regen"
        shutil.rmtree(scratch, ignore_errors=True)
        cmd = [sys.executable, "-m", "codegen", str(args.model), str(ROOT / "models" / "krang_params.toml"),
               "--out", str(scratch)]
        log(f"timing the generation: {shlex.join(cmd)}")
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=ROOT)
        gen_time = (f"{time.perf_counter() - t0:.1f} s measured for `python -m codegen` (the generation step of "
                    "`make generate`, without the extension rebuild)" if r.returncode == 0 else "codegen failed")
    model = load_model(args.model)
    params, params_src = get_params(model, args)
    nd = model.ndof
    q, dq = draw_states(args.states, nd, args.seed)
    states = build / "states.bin"
    write_states(states, params, q, dq)
    urdf = build / f"{model.name}_aligned.urdf"
    pmodel = pin_model.build_aligned(model, params, urdf)
    model_txt = build / f"{model.name}_pin_model.txt"
    model_txt.write_text(pin_model.harness_model_text(pmodel, model, urdf))

    # The aligned URDF model must be the frame table's robot.
    ref = python_pin_outputs(pin_model.build_unaligned(model, params), model, q[:DUMP_STATES], dq[:DUMP_STATES])
    ali = python_pin_outputs(pmodel, model, q[:DUMP_STATES], dq[:DUMP_STATES])
    agreement = {"pin URDF (RX/RY/RZ) vs pin unaligned joints (Python)": compare(ali, ref, dq[:DUMP_STATES])}
    worst = max(agreement[next(iter(agreement))].values())
    if worst > 1e-9:
        raise SystemExit(f"the axis-aligned URDF model differs from the frame table ({worst:.1e}); fix pin_model.py")

    prefix = cmeel_prefix()
    with ThreadPoolExecutor(max_workers=2) as pool:
        f_pin = pool.submit(build_pin, prefix, build, args.cxx, False, pin.__version__)
        f_lib = None if args.no_pin_lib else pool.submit(build_pin, prefix, build, args.cxx, True, pin.__version__)
        ours_exe, ours_status = build_ours(args.generated, build, args.cc, pool)
        pin_exe, _ = f_pin.result()
        lib_exe, lib_status = f_lib.result() if f_lib else (None, "skipped")
    log(f"ours: {ours_status}; pin-lib: {lib_status}")

    harnesses = {}
    if ours_exe:
        harnesses["ours"] = [ours_exe, states]
    harnesses["pin"] = [pin_exe, model_txt, states]
    if lib_exe:
        harnesses["pin-lib"] = [lib_exe, model_txt, states]

    # Agreement of the harnesses' own outputs.
    dumps = {}
    for name, cmd in harnesses.items():
        path = build / f"dump_{name}.bin"
        run_harness(cmd + ["--dump", path, DUMP_STATES], None, parse=False)
        dumps[name] = read_dump(path, nd, min(DUMP_STATES, args.states))
    agreement["pin C++ vs pin Python"] = compare(dumps["pin"], ali, dq[:DUMP_STATES])
    if "pin-lib" in dumps:
        agreement["pin libs C++ vs pin Python"] = compare(dumps["pin-lib"], ali, dq[:DUMP_STATES])
    if "ours" in dumps:
        agreement["ours vs pin C++"] = compare(dumps["ours"], dumps["pin"], dq[:DUMP_STATES])
        bad = {k: v for k, v in agreement["ours vs pin C++"].items() if k != "C" and v > 1e-8}
        if bad:
            log(f"WARNING: ours and Pinocchio disagree ({bad}): the models differ, timings still reported")

    gen_files = generation_figures(args.generated, args.cc, not args.no_compile_time) if ours_exe else []

    log(f"timing: {args.rounds} round(s) of {', '.join(harnesses)}; core {core}")
    load_before = loadavg()
    extra = ["--target-ms", args.target_ms, "--inner", args.inner, "--cold-kib", args.cold_kib]
    if args.no_tick:
        extra.append("--no-tick")
    per_round, tick_per_round, timer_runs = timing_rounds(harnesses, args.rounds, core, extra)
    summary = summarize(per_round)
    tick_summary = summarize_tick(tick_per_round)
    timer = summarize_timer(timer_runs)

    py_rows, py_note = [], "skipped (--no-python)"
    if not args.no_python:
        log("Python level")
        py_rows, py_note = python_level(pmodel, model, q[0], dq[0], args.py_repeat, core)
        add_c_columns(py_rows, summary, tick_summary)

    info = dict(
        date=_dt.datetime.now().isoformat(timespec="seconds"),
        cpu=cpu_model(), cpu_flags=cpu_flags(), cpu_caches=cpu_caches(), cores=os.cpu_count(),
        cc=first_line([args.cc, "--version"]), cxx=first_line([args.cxx, "--version"]),
        flags_ours=" ".join(["-std=c99", *OPT]),
        flags_pin=" ".join(["-std=c++17", *OPT, *BOOST_DEFS]),
        flags_pin_lib="-std=c++17 -O3 -DNDEBUG -DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION -DPINOCCHIO_WITH_URDFDOM "
                      "+ boost defines; -lpinocchio_default -lpinocchio_parsers",
        pin=pin.__version__, python=platform.python_version(), numpy=np.__version__,
        params=params_src, states=f"{args.states} random (q in [-pi, pi], dq in [-2, 2]), seed {args.seed}",
        rounds=f"{args.rounds} x {args.inner} measurements of ~{args.target_ms:g} ms"
               + ("" if args.no_tick else " (tight loop; then the same for the control tick, warm"
                  + (f" and cold ({args.cold_kib} KiB read before each tick)" if args.cold_kib else "") + ")"),
        pinned=f"taskset -c {core}" if taskset_prefix(core) else "no",
        load=f"{load_before} before timing, {loadavg()} after",
    )
    code = machine_code_sizes(build / "obj")
    if code:
        info["code_bytes"] = ", ".join(f"{k.removeprefix('krang_')} {v:,} B" for k, v in code.items()
                                       if k in ("krang_compute_A", "krang_compute_C", "krang_compute_Q",
                                                "krang_jacobian_left_world", "krang_jacobian_right_world"))
    rows = write_report(args.out, info, summary, agreement, py_rows, py_note, gen_files, gen_time,
                        tick_summary, timer)
    plot(args.out, rows, py_rows, summary, tick_summary)
    (args.out / "bench.json").write_text(json.dumps(
        dict(info=info, per_round=per_round, summary=summary, agreement=agreement, python=py_rows,
             python_note=py_note, generation=gen_files, make_generate=gen_time,
             tick_per_round=tick_per_round, tick_summary=tick_summary, tick_timer=timer), indent=1, default=str))
    print((args.out / "bench.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

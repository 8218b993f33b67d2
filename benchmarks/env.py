"""Machine facts for the benchmark report, and where the C++ headers are.

Everything here only reads the machine (/proc, sysfs, compiler banners, the
installed wheels); nothing is timed.
"""
from __future__ import annotations

import os
import platform
import shutil
import site
import subprocess
import sys
from pathlib import Path

from codegen.build import module as pybuild

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HARNESS = HERE / "harness"  # the C / C++ harness sources

BOOST_DEFS = [
    "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
    "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
]
# The same flags for our kernels and the header-only Pinocchio build.
OPT = ["-O3", "-march=native", "-ffp-contract=fast", "-DNDEBUG"]
# Our kernels as the wheel builds them (codegen.build.module): target_clones, no -march.
PORTABLE = [f for f in pybuild.FLAGS if f != "-std=c99"] + pybuild.X86_FLAGS + ["-DNDEBUG"]


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


def cmeel_prefixes() -> list[Path]:
    """Every cmeel.prefix on the path, the pin wheel's first.

    The header-only wheels (cmeel-eigen, cmeel-urdfdom-headers) may sit in a
    virtual environment while pin is in the system site, each with its own
    prefix, so the include path is the union."""
    import pinocchio

    found = []
    for parent in Path(pinocchio.__file__).resolve().parents:
        if parent.name == "cmeel.prefix":
            found.append(parent)
            break
    if not found:
        raise SystemExit("cannot find the cmeel prefix of the pin wheel (is `pin` installed from PyPI?)")
    dirs = list(sys.path) + site.getsitepackages() + [site.getusersitepackages()]
    for d in dirs:
        p = Path(d) / "cmeel.prefix"
        if p.is_dir() and p.resolve() not in found:
            found.append(p.resolve())
    return found


def provenance(date: str, cpu: str, cores, cc: str, flags: str) -> str:
    """The one line every results table carries: machine, compiler, flags, date
    (benchmarks.docs_tables copies it with the table into docs/)."""
    return f"Machine: {cpu}, {cores} cores; compiler: {cc}; flags: `{flags}`; date: {date}."


def find_include(prefixes, rel: str) -> Path | None:
    """The first prefix's include/<rel> that exists."""
    for p in prefixes:
        if (p / "include" / rel).exists():
            return p / "include" / rel
    return None


def first_line(cmd) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip() if out else ""
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _cpuinfo(key: str) -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or "?"


def cpu_flags() -> str:
    flags = _cpuinfo("flags")
    if flags is None:
        return "?"
    have = set(flags.split())
    return " ".join(f for f in ("avx", "avx2", "fma", "avx512f") if f in have)


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


def default_core(args) -> int | None:
    """The core the harnesses are pinned to: --cpu, else the last one; None with --no-pin."""
    if not args.pin_core:
        return None
    return args.cpu if args.cpu is not None else (os.cpu_count() or 1) - 1


def machine_info(args, core, pin_version: str, load_before: str) -> dict:
    """The report's first table (the keys and wording of the original bench.py)."""
    import numpy as np

    return dict(
        cpu=cpu_model(), cpu_flags=cpu_flags(), cpu_caches=cpu_caches(), cores=os.cpu_count(),
        cc=first_line([args.cc, "--version"]), cxx=first_line([args.cxx, "--version"]),
        flags_ours=" ".join(["-std=c99", *OPT]),
        flags_portable=" ".join(["-std=c99", *PORTABLE]),
        flags_pin=" ".join(["-std=c++17", *OPT, *BOOST_DEFS]),
        flags_pin_lib="-std=c++17 -O3 -DNDEBUG -DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION -DPINOCCHIO_WITH_URDFDOM "
                      "+ boost defines; -lpinocchio_default -lpinocchio_parsers",
        pin=pin_version, python=platform.python_version(), numpy=np.__version__,
        rounds=f"{args.rounds} x {args.inner} measurements of ~{args.target_ms:g} ms"
               + ("" if args.no_tick else " (tight loop; then the same for the control tick, warm"
                  + (f" and cold ({args.cold_kib} KiB read before each tick)" if args.cold_kib else "") + ")"),
        pinned=f"taskset -c {core}" if taskset_prefix(core) else "no",
        load=f"{load_before} before timing, {loadavg()} after",
    )

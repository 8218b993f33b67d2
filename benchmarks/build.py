"""Compiling the harnesses, cached in the build directory, and the figures of the generated code.

Cache keys hash the sources, the flags and the compiler's banner, so a stale
binary is never reused; older builds of the same thing are pruned.
"""
from __future__ import annotations

import hashlib
import os
import re
import resource
import shlex
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codegen.build.compiler import jobs

from .env import BOOST_DEFS, HARNESS, OPT, find_include, first_line, log
from .robot import KernelSet, robot_header_text


def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _prune(build: Path, pattern: str, keep: Path):
    """Drop older cached builds of the same thing. A pattern ending in `-[0-9a-f]*` (a digest)
    drops only names whose part after that dash is all hex digits: `NAME-clones`, another build,
    starts with the hex digit c."""
    hexed = pattern.endswith("-[0-9a-f]*")
    head = pattern[:-len("[0-9a-f]*")] if hexed else ""
    for old in build.glob(pattern):
        if old != keep and (not hexed or re.fullmatch(r"[0-9a-f]+", old.name[len(head):])):
            old.unlink(missing_ok=True)


def _run_build(cmd, what):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"build of {what} failed:\n{shlex.join(cmd)}\n{r.stderr[-4000:]}")
    return time.perf_counter() - t0


def build_ours(ks: KernelSet, build: Path, cc: str, pool, opt=OPT, tag: str = "", harness: str = "bench_c.c",
               robot_h: tuple[str, str] | None = None, pad: Path | None = None):
    """A C harness (harness/bench_c.c, or `harness`) for one kernel set: its *.c compiled once each
    with `opt`, the harness linked to them. tag names a second build (e.g. "-clones") so that both
    stay cached; robot_h: (file name, text) of the header the harness includes (default
    bench_robot.h, robot.robot_header_text); pad: an object linked before the kernels' objects
    (benchmarks/copies.py: a copy of the harness with the kernels placed elsewhere; give a tag
    that does not start with a hex digit, "-pad1", or the plain build's pruning deletes it)."""
    gen = ks.gen_dir
    sources = sorted(gen.glob("*.c"))
    cver = first_line([cc, "--version"])
    hdrs = b"".join(h.read_bytes() for h in sorted(gen.glob("*.h")))
    objdir = build / "obj"
    objdir.mkdir(parents=True, exist_ok=True)
    robot_dir = build / f"robot-{ks.prefix}"
    robot_dir.mkdir(exist_ok=True)
    robot_name, text = robot_h or ("bench_robot.h", robot_header_text(ks))
    robot_h = robot_dir / robot_name
    if not robot_h.exists() or robot_h.read_text() != text:
        robot_h.write_text(text)
    flags = ["-std=c99", *opt, f"-I{gen}"]
    jobs, objs = [], []
    for src in sources:
        key = _digest([cver, *flags, src.name, src.read_bytes(), hdrs])
        obj = objdir / f"{src.stem}-{key}.o"
        objs.append(obj)
        if not obj.exists():
            tmp = obj.with_suffix(".tmp.o")
            jobs.append((obj, tmp, [cc, *flags, "-c", str(src), "-o", str(tmp)]))
    sources_h = [HARNESS / harness, HARNESS / "bench_common.h"]
    key = _digest([cver, *flags, *(p.read_bytes() for p in sources_h), text, hdrs, *(o.name for o in objs),
                   *([pad.name] if pad else [])])
    stem = Path(harness).stem
    exe = build / f"{stem}_{ks.prefix}{tag}-{key}"
    if exe.exists():
        return exe, objs, "cached"
    if jobs:
        log(f"compiling {len(jobs)} generated C file(s) with {cc} {' '.join(opt)}")
    futures = [(pool.submit(_run_build, cmd, str(obj)), obj, tmp) for obj, tmp, cmd in jobs]
    for fut, obj, tmp in futures:
        fut.result()
        tmp.rename(obj)
    tmp = exe.with_suffix(".tmp")
    _run_build([cc, *flags, f"-I{robot_dir}", f"-I{HARNESS}", str(HARNESS / harness), *([str(pad)] if pad else []),
                *map(str, objs), "-lm",
                "-o", str(tmp)], stem)
    tmp.rename(exe)
    _prune(build, f"{stem}_{ks.prefix}{tag}-[0-9a-f]*", exe)
    return exe, objs, "built"


def pin_build_cmd(prefixes, cxx: str, lib: bool, out: Path, source: str = "bench_pin.cpp"):
    """prefixes: the cmeel prefixes (env.cmeel_prefixes), the pin wheel's first; source: the C++
    harness in harness/."""
    cmd = [cxx, "-std=c++17"]
    if lib:
        # The wheel's libraries were built without -march=native: keep Eigen's
        # alignment and vector ABI equal to theirs.
        cmd += ["-O3", "-DNDEBUG", "-DBENCH_PIN_LIB", "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
                "-DPINOCCHIO_WITH_URDFDOM"]
    else:
        cmd += OPT
    cmd += BOOST_DEFS + [f"-I{HARNESS}"] + [f"-I{p / 'include'}" for p in prefixes]
    cmd += [f"-I{find_include(prefixes, 'eigen3')}"]
    if lib:
        cmd += [f"-I{find_include(prefixes, 'urdfdom')}", f"-I{find_include(prefixes, 'urdfdom_headers')}"]
    cmd += [str(HARNESS / source), "-o", str(out)]
    if lib:
        libdir = prefixes[0] / "lib"
        cmd += [f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-lpinocchio_default", "-lpinocchio_parsers"]
    return cmd


# What every C++ harness includes besides its own source.
PIN_HEADERS = ("bench_common.h", "bench_pin_model.hpp")


def build_pin(prefixes, build: Path, cxx: str, lib: bool, pin_version: str, source: str = "bench_pin.cpp"):
    """A C++ harness (harness/bench_pin.cpp, or `source`) against Pinocchio: header-only with our
    flags, or (lib) the wheel's libraries; cached by the hash of its sources, flags and compiler."""
    if find_include(prefixes, "eigen3/Eigen") is None:
        raise SystemExit("Eigen headers missing: pip install cmeel-eigen (the `bench` extra)")
    if lib and find_include(prefixes, "urdfdom_headers") is None:
        return None, "urdfdom headers missing: pip install cmeel-urdfdom-headers"
    name = Path(source).stem + ("_lib" if lib else "")
    cxxver = first_line([cxx, "--version"])
    probe = pin_build_cmd(prefixes, cxx, lib, Path("OUT"), source)
    key = _digest([cxxver, pin_version, *probe, *((HARNESS / f).read_bytes() for f in (source, *PIN_HEADERS))])
    exe = build / f"{name}-{key}"
    if exe.exists():
        return exe, "cached"
    log(f"compiling {name} (Pinocchio C++, takes a minute or two)")
    tmp = exe.with_suffix(".tmp")
    _run_build(pin_build_cmd(prefixes, cxx, lib, tmp, source), name)
    tmp.rename(exe)
    _prune(build, f"{name}-*", exe)
    return exe, "built"


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


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes: on a shared machine the
    wall time of a compile depends on the other jobs, its CPU time much less."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _compile_parts(cc: str, gen: Path, source: Path, nparts: int) -> bool:
    """The parts of a generated .c (-DKKPART=k), as many at a time as the Python module build
    compiles them (codegen.build.compiler.jobs: KRANG_BUILD_JOBS, else the CPUs this process
    may use), the largest part (most text) first."""
    text = source.read_text(errors="replace")
    size = {k: sum(len(b) for b in re.split(r"^#if ", text, flags=re.M) if b.startswith(f"KKIN({k})"))
            for k in range(1, nparts + 1)}
    order = sorted(size, key=lambda k: -size[k])
    with ThreadPoolExecutor(max_workers=jobs(nparts)) as pool:
        runs = list(pool.map(lambda k: subprocess.run(
            [cc, "-std=c99", "-O2", f"-DKKPART={k}", f"-I{gen}", "-c", str(source), "-o", os.devnull],
            capture_output=True, text=True), order))
    return all(r.returncode == 0 for r in runs)


def generation_figures(gen: Path, cc: str, measure_compile: bool, by_parts: bool = False):
    """Per generated file: size, lines, op counts from its banner, gcc -O2 compile time
    (by_parts: its parts compiled concurrently, _compile_parts; compile_cpu_s is then
    their summed CPU time, about one serial compile's)."""
    files = []
    for f in sorted(gen.glob("*.c")) + sorted(gen.glob("*.h")):
        text = f.read_text(errors="replace")
        ops = op_counts(text) if f.suffix == ".c" else []
        entry = dict(file=f.name, bytes=f.stat().st_size, lines=text.count("\n"), ops=ops, compile_s=None,
                     compile_cpu_s=None)
        if measure_compile and f.suffix == ".c":
            nparts = re.search(r"^#define KKNPARTS (\d+)", text, re.M)
            t0, c0 = time.perf_counter(), children_cpu()
            if by_parts and nparts:
                ok = _compile_parts(cc, gen, f, int(nparts.group(1)))
            else:
                ok = subprocess.run([cc, "-std=c99", "-O2", f"-I{gen}", "-c", str(f), "-o", os.devnull],
                                    capture_output=True, text=True).returncode == 0
            entry["compile_s"] = time.perf_counter() - t0 if ok else None
            entry["compile_cpu_s"] = children_cpu() - c0 if ok else None
        files.append(entry)
    return files


def _code_symbols(path) -> dict:
    """{function: bytes of machine code} of the text symbols an object or executable defines (nm -S)."""
    r = subprocess.run(["nm", "-S", "--defined-only", str(path)], capture_output=True, text=True)
    return {f[3]: int(f[1], 16) for f in map(str.split, r.stdout.splitlines()) if len(f) == 4 and f[2] in "Tt"}


def machine_code_sizes(objs, prefix: str):
    """{function: bytes of machine code} of one kernel set's objects (nm -S), {} if unavailable."""
    sizes = {}
    if shutil.which("nm") is None:
        return sizes
    for obj in objs:
        for sym, size in _code_symbols(obj).items():
            # a kernel's share: its gcc clones (.constprop.0, .cold) and the static
            # routines it calls (kk_<kernel>_part<k>, codegen/emit/cnames.routine_name)
            base = sym.split(".")[0]
            routine = re.fullmatch(r"kk_(\w+?)_part[0-9]+", base)
            if routine:
                name = f"{prefix}_{routine.group(1)}"
            elif sym.startswith(prefix + "_"):
                name = base
            else:
                continue
            sizes[name] = sizes.get(name, 0) + size
    return sizes


_FN_RE = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_CALL_RE = re.compile(r"\b(?:call|jmp)\w*\s+[0-9a-f]+ <([^>+]+)>")


def tick_code(exe: Path, objs, *root_sets) -> list[list[tuple[str, int]]]:
    """Per set of roots (one tick's calls): [(function, bytes of machine code)] of every function
    that tick executes: the roots and, transitively, the functions of the kernel objects they call
    or jump to (sincos_q, unless inlined), found in the linked executable's disassembly (read once
    for all the sets); sizes from its symbol table (nm -S). [] each if binutils are missing."""
    if not (shutil.which("nm") and shutil.which("objdump")):
        return [[] for _ in root_sets]
    ours = set().union(*(_code_symbols(obj) for obj in objs))
    sizes = _code_symbols(exe)
    calls, cur = {}, None
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    for line in dis.splitlines():
        m = _FN_RE.match(line)
        if m:
            cur = calls.setdefault(m.group(2), set())
        elif cur is not None:
            c = _CALL_RE.search(line)
            if c:
                cur.add(c.group(1))
    out = []
    for roots in root_sets:
        seen, todo = [], [f for f in roots if f in sizes]
        while todo:
            f = todo.pop(0)
            if f in seen:
                continue
            seen.append(f)
            # not kk_copy_*: a kernel's rare path when an input overlaps an output
            # (codegen/emit/layout.guard_inputs), which a tick does not execute
            todo += sorted(c for c in calls.get(f, ()) if c in ours and c != f and not c.startswith("kk_copy_"))
        out.append([(f, sizes[f]) for f in seen])
    return out

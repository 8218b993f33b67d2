"""Compiling a generated module: no debug information unless asked, the
translation units concurrently, and a failure that carries the compiler's
own first error lines.

    BuildExt: setuptools' build_ext with these three changes (used by
              codegen.build.module.compile_module).

Why each:
* Python's sysconfig CFLAGS carry `-g`, which multiplies the compiler's
  peak memory on a large robot (measured: docs/design-notes.md#module-build-flags);
  a generated module is rebuilt, not debugged, so `-g` comes only with
  debug=True (KRANG_BUILD_DEBUG=1).
* setuptools compiles an extension's sources one after the other. The
  Cython wrapper and the kernels' parts (-DKKPART=k) are independent
  translation units, so they compile at the same time (KRANG_BUILD_JOBS,
  default: the CPUs this process may use, at most the number of sources),
  the ones named in first_sources first (the largest parts).
* setuptools reports a failed compiler run as "command 'gcc' failed with
  exit code 1", the diagnostics gone to a terminal the caller may not see;
  CompileFailed carries the first error lines.
* The other sources (the Cython wrapper: argument checks and calls, no
  arithmetic) compile at -O1 (`other_flags`): measured much quicker to
  compile than -O3, which every robot pays, for the same call overhead
  (docs/design-notes.md#module-build-flags).
* CFLAGS, CPPFLAGS, LDFLAGS, CC and LDSHARED reach every command line
  setuptools runs. Flags that change floating-point results (VALUE_FLAGS:
  -ffast-math and its parts, -Ofast) would compile the wrapper's NaN/inf
  checks away and, at the link, add crtfastmath.o, whose constructor turns
  on flush-to-zero for the whole process that imports the module. They are
  removed from the compiler and linker commands (`stripped` lists them; the
  caller warns). -fno-trapping-math and -fno-math-errno stay: they change no
  result in the default floating-point environment.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from setuptools.command.build_ext import build_ext

from ..support.errors import BuildError
from ..support.progress import report
from .log import first_errors

from .flags import VALUE_FLAG_PREFIXES, VALUE_FLAGS, without_value_flags  # noqa: E402,F401 - re-exported


class ValueFlagWarning(UserWarning):
    """Value-changing flags from the build environment were left out of a module build."""


def value_flag_warning(removed) -> str:
    return ("ignoring floating-point flags from the build environment (CFLAGS, CPPFLAGS, LDFLAGS, CC, LDSHARED) "
            f"that would change the module's results: {' '.join(dict.fromkeys(removed))}")


class CompileFailed(BuildError):
    """A compiler run failed; str() names the source and quotes the first error lines."""


def jobs(n_sources: int) -> int:
    env = os.environ.get("KRANG_BUILD_JOBS", "")
    if env.strip().isdigit() and int(env) > 0:
        n = int(env)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(n, n_sources))


def debug_requested() -> bool:
    return os.environ.get("KRANG_BUILD_DEBUG", "") not in ("", "0")


def without_debug_info(command) -> list:
    """A compiler command line without -g, -g3, -ggdb ... (the optimization flags stay)."""
    return [a for a in command if not (a == "-g" or (a.startswith("-g") and a[2:3].isalnum()
                                                        and not a.startswith("-gno")))]


@dataclass(frozen=True)
class CompilerRun:
    """One compiler run: its source, wall and CPU seconds, and peak resident bytes
    (the compiler driver and its waited children, cc1 and as, from wait4)."""
    source: str
    seconds: float
    cpu_seconds: float
    peak_bytes: int


def run_compiler(command, source) -> CompilerRun:
    """Run one compiler command; its warnings go to stderr, its failure raises CompileFailed."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([os.fspath(a) for a in command], stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        output = log.read().decode(errors="replace").strip()
    run = CompilerRun(os.fspath(source), time.perf_counter() - t0, usage.ru_utime + usage.ru_stime,
                      usage.ru_maxrss * 1024)  # Linux: kilobytes
    if output:  # to the build log (codegen/build/log.py captures it), warnings and errors alike
        print(output, file=sys.stderr, flush=True)
    if proc.returncode != 0:
        raise CompileFailed(f"compiling {os.path.basename(source)} failed (exit status {proc.returncode}; "
                            f"{shlex.join(map(str, command[:1]))}): " + " | ".join(first_errors(output)))
    return run


def _concurrent_compile(compiler, debug_info: bool, first=(), other_flags=()):
    """A replacement of compiler.compile (distutils.ccompiler.CCompiler.compile's
    signature) that runs the compiler once per source, concurrently; the sources
    in `first` are started first, in that order (build_ext sorts an extension's
    sources by name: the longest jobs first keep both cores busy to the end),
    the others with `other_flags` last on their command line."""
    rank = {os.path.abspath(s): i for i, s in enumerate(first)}

    def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=False,
                extra_preargs=None, extra_postargs=None, depends=None):
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = compiler._get_cc_args(pp_opts, debug_info, extra_preargs)
        base = list(compiler.compiler_so)
        if not debug_info:
            base = without_debug_info(base)
        todo = [(obj, build[obj][0]) for obj in objects if obj in build]
        todo.sort(key=lambda item: rank.get(os.path.abspath(item[1]), len(rank)))  # stable: the rest as given

        done = []  # parts finished so far (list.append is atomic under the GIL)

        def one(item):
            obj, src = item
            os.makedirs(os.path.dirname(obj) or ".", exist_ok=True)
            last = [] if os.path.abspath(src) in rank else list(other_flags)
            t0 = time.perf_counter()
            run_compiler(base + cc_args + [src, "-o", obj] + list(extra_postargs or ()) + last, src)
            done.append(src)
            # the longest step of a big robot's build (minutes): one line per part as it finishes
            report(f"compiled {os.path.basename(src)} ({len(done)} of {len(todo)})", t0, always=True)

        with ThreadPoolExecutor(jobs(len(todo))) as pool:
            for _ in pool.map(one, todo):  # re-raises the first failure
                pass
        return objects

    return compile


class BuildExt(build_ext):
    """build_ext whose compiler drops -g (unless debug) and value-changing flags,
    compiles the sources of an extension concurrently and reports failures with
    the compiler's error lines."""

    debug_info = False
    first_sources = ()  # compiled first, in this order (the largest translation units)
    other_flags = ()  # appended to the command line of the other sources
    stripped = ()  # the value-changing flags removed from the environment's commands

    def build_extensions(self):
        removed = []
        for attr in getattr(self.compiler, "executables", {}):  # compiler_so, linker_so, ...
            command = getattr(self.compiler, attr, None)
            if isinstance(command, list):
                kept, gone = without_value_flags(command)
                setattr(self.compiler, attr, kept)
                removed += gone
        self.stripped = tuple(dict.fromkeys(removed))
        debug_info = self.debug_info or debug_requested()
        if hasattr(self.compiler, "compiler_so") and hasattr(self.compiler, "_setup_compile"):
            self.compiler.compile = _concurrent_compile(self.compiler, debug_info, self.first_sources,
                                                        self.other_flags)
            if not debug_info:
                self.compiler.linker_so = without_debug_info(self.compiler.linker_so)
        super().build_extensions()

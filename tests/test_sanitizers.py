"""AddressSanitizer + UndefinedBehaviorSanitizer over the generated C.

The mini model's kernels are built with -fsanitize=address,undefined and
float-cast-overflow (which GCC's "undefined" leaves out; it is the one that
catches a double-to-int conversion of NaN or of a huge angle), with
-fno-sanitize-recover=all, and a driver written from the ABI description
calls every function with exactly sized heap buffers (so any out-of-bounds
access is caught) on random and extreme inputs: NaN, +-inf, 0, -0,
+-1e300, denormals, and every index argument in and out of range. The test
passes if the driver exits cleanly; skipped if the compiler cannot build
with sanitizers.
"""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from codegen.emit.abi import IN, INDEX, INTERLEAVE, OUT, REAL, describe
from codegen.emit.cnames import cnames
from codegen.pipeline import generate_from_files
from codegen.read.model import load_model

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "tests" / "models" / "mini.toml"
PARAMS = ROOT / "tests" / "models" / "mini_params.toml"
CC = shutil.which("gcc") or shutil.which("cc")
SAN = ["-fsanitize=address,undefined,float-cast-overflow", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
EXTREMES = ["NAN", "INFINITY", "-INFINITY", "0.0", "-0.0", "1e300", "-1e300", "4.9e-324", "-2.2e-308", "1e5",
            "-3.5e9", "1e-300"]


STATES = 40  # the index loops run n (and steps) up to 39


def _doubles(a) -> int:
    """The doubles to allocate for array argument `a` with n, steps < STATES: per state (batched), per
    step (stepped) or per block of INTERLEAVE states (blocked)."""
    return (a.size * (STATES if a.batched else 1) * (STATES if a.stepped else 1)
            * (-(-STATES // INTERLEAVE) if a.blocked else 1))


def _driver(abi) -> str:
    """C source: for every input pattern, call every function of the ABI."""
    lines = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", f'#include "{abi.name}_kernels.h"',
             "static double pick(unsigned *st, int mode, int i) {",
             f"    static const double ext[] = {{{', '.join(EXTREMES)}}};",
             "    *st = *st * 1103515245u + 12345u;",
             "    double u = (double)(*st >> 8) / 16777216.0 * 2.0 - 1.0;",
             "    if (mode == 0) return 3.0 * u;",
             f"    if (mode == 1) return ext[(unsigned)(i + (int)(*st >> 4)) % {len(EXTREMES)}u];",
             f"    return ext[(unsigned)mode % {len(EXTREMES)}u];",
             "}",
             "int main(void) {", "    unsigned st = 1u;", "    double sink = 0.0;",
             f"    for (int mode = 0; mode < {2 + len(EXTREMES)}; ++mode) {{"]
    for f in abi.functions:
        lines.append("    {")
        call = []
        for a in f.args:
            if a.role == INDEX:
                call.append(f"ix_{a.name}")
                continue
            if a.role == REAL:
                lines.append(f"        const double {a.name} = pick(&st, mode, 0);")
                call.append(a.name)
                continue
            # batch kernels: n < 40 states (the index loop); rollout's per-step arrays: steps < 40 of them too;
            # the interleaved layout's blocks of INTERLEAVE states: ceil(40 / INTERLEAVE) of them
            size = _doubles(a)
            lines.append(f"        double *{a.name} = malloc({size} * sizeof(double));")
            fill = "pick(&st, mode, i)" if a.role == IN else "NAN"
            lines.append(f"        for (int i = 0; i < {size}; ++i) {a.name}[i] = {fill};")
            call.append(a.name)
        indexes = [a for a in f.args if a.role == INDEX]
        indent = "        "
        for a in indexes:
            lines.append(f"{indent}for (int ix_{a.name} = -2; ix_{a.name} < 40; ix_{a.name} += 1) {{")
            indent += "    "
        invoke = f"{abi.prefix}{f.name}({', '.join(call)})"
        if f.returns.strip() == "void":
            lines.append(f"{indent}{invoke};")
        elif f.returns.strip() == "int":
            lines.append(f"{indent}sink += (double){invoke};")
        else:
            lines.append(f"{indent}{{ const char *r = {invoke}; if (r) sink += (double)r[0]; }}")
        for _ in indexes:
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        for a in f.args:
            if a.role == OUT:
                size = _doubles(a)
                lines.append(f"        for (int i = 0; i < {size}; ++i) sink += {a.name}[i] == {a.name}[i];")
        for a in f.args:
            if a.role not in (INDEX, REAL):
                lines.append(f"        free({a.name});")
        lines.append("    }")
    lines += ["    }", '    printf("ok %g\\n", sink);', "    return 0;", "}"]
    return "\n".join(lines) + "\n"


def test_driver_uses_every_function():
    model = load_model(MODEL)
    names = cnames(model)
    abi = dataclasses.replace(describe(model, ee_idents=names.ees), name=names.prefix)
    src = _driver(abi)
    for f in abi.functions:
        assert f"{abi.prefix}{f.name}(" in src
    assert any(a.role == IN for f in abi.functions for a in f.args)


def test_asan_ubsan_clean(tmp_path):
    if CC is None:
        pytest.skip("no C compiler")
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    r = subprocess.run([CC, *SAN, str(probe), "-o", str(tmp_path / "probe")], capture_output=True, text=True)
    if r.returncode != 0 or subprocess.run([str(tmp_path / "probe")], capture_output=True).returncode != 0:
        pytest.skip(f"{CC} cannot build and run with sanitizers: {r.stderr.strip()[:200]}")
    model = load_model(MODEL)
    generate_from_files(MODEL, PARAMS, tmp_path)
    names = cnames(model)
    abi = dataclasses.replace(describe(model, ee_idents=names.ees), name=names.prefix, prefix=f"{names.prefix}_")
    (tmp_path / "driver.c").write_text(_driver(abi))
    exe = tmp_path / "driver"
    r = subprocess.run([CC, "-std=c99", "-O1", "-g", *SAN, "-I", str(tmp_path), str(tmp_path / "driver.c"),
                        str(tmp_path / f"{names.prefix}_kernels.c"), "-o", str(exe), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                       env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"})
    assert r.returncode == 0 and "runtime error" not in r.stderr and "ERROR" not in r.stderr, r.stderr[-3000:]
    assert r.stdout.startswith("ok ")

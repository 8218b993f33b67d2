"""codegen/build/compiler.py: generated modules build without debug information unless
asked, their sources compile concurrently, and a failure quotes the compiler's errors."""
from __future__ import annotations

import shutil
import sysconfig
import threading
import time
from pathlib import Path

import pytest

from codegen.build import compiler as compile_c
from codegen.build.compiler import BuildExt, CompileFailed, without_debug_info

pytestmark = [
    pytest.mark.builds,
    pytest.mark.skipif(shutil.which(sysconfig.get_config_var("CC").split()[0]) is None,
                       reason="no C compiler"),
]

GOOD = """#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "%s", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_%s(void) { return PyModule_Create(&def); }
"""
HELPER = "double kk_helper(double x) { return 2.0 * x; }\n"


def build(tmp_path, name, sources, debug_info=False, first=(), other_flags=()):
    from setuptools import Distribution, Extension

    ext = Extension(name, sources=[str(s) for s in sources])
    dist = Distribution({"name": name, "ext_modules": [ext], "script_name": "test"})
    cmd = BuildExt(dist)
    cmd.debug_info = debug_info
    cmd.first_sources = [str(s) for s in first]
    cmd.other_flags = list(other_flags)
    cmd.build_lib, cmd.build_temp, cmd.force = str(tmp_path / "lib"), str(tmp_path / "tmp"), True
    cmd.ensure_finalized()
    cmd.run()
    (out,) = cmd.get_outputs()
    return out


def sources(tmp_path, name):
    (tmp_path / f"{name}.c").write_text(GOOD % (name, name))
    (tmp_path / "helper.c").write_text(HELPER)
    return [tmp_path / f"{name}.c", tmp_path / "helper.c"]


def test_no_debug_information_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("KRANG_BUILD_DEBUG", raising=False)
    plain = build(tmp_path / "a", "plain", sources(tmp_path, "plain"))
    debug = build(tmp_path / "b", "debugged", sources(tmp_path, "debugged"), debug_info=True)
    # Python's CFLAGS carry -g: with it the ELF has a .debug_info section (its name in .shstrtab)
    assert b".debug_info" in open(debug, "rb").read()
    assert b".debug_info" not in open(plain, "rb").read()


def test_sources_compile_concurrently(tmp_path, monkeypatch):
    """Both compiler runs are in flight at once (observed through run_compiler)."""
    monkeypatch.setenv("KRANG_BUILD_JOBS", "2")
    active, peak, lock = [0], [0], threading.Lock()
    real = compile_c.run_compiler

    def run(command, source):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.5)  # long enough for the other to start
        try:
            real(command, source)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(compile_c, "run_compiler", run)
    build(tmp_path, "both", sources(tmp_path, "both"))
    assert peak[0] == 2


def test_first_sources_start_first(tmp_path, monkeypatch):
    """build_ext sorts the sources by name; first_sources (the largest parts) start before the rest."""
    monkeypatch.setenv("KRANG_BUILD_JOBS", "1")
    started = []
    real = compile_c.run_compiler
    monkeypatch.setattr(compile_c, "run_compiler", lambda command, source: (started.append(source),
                                                                            real(command, source))[1])
    srcs = sources(tmp_path, "ordered")
    (tmp_path / "zz_part.c").write_text("double kk_other(double x) { return x; }\n")
    build(tmp_path, "ordered", [*srcs, tmp_path / "zz_part.c"], first=[tmp_path / "zz_part.c", srcs[1]])
    assert [Path(s).name for s in started] == ["zz_part.c", "helper.c", "ordered.c"]


def test_other_flags_come_last_for_the_other_sources_only(tmp_path, monkeypatch):
    """The wrapper's -O1 (module_build) overrides the kernels' -O3 on its command line alone."""
    commands = {}
    real = compile_c.run_compiler
    monkeypatch.setattr(compile_c, "run_compiler", lambda command, source: (
        commands.__setitem__(Path(source).name, command), real(command, source))[1])
    srcs = sources(tmp_path, "flags")
    build(tmp_path, "flags", srcs, first=[srcs[1]], other_flags=["-O1"])
    assert commands["flags.c"][-1] == "-O1"
    assert "-O1" not in commands["helper.c"]


def test_failure_quotes_the_first_error_lines(tmp_path):
    srcs = sources(tmp_path, "broken")
    srcs[1].write_text("double kk_helper(double x) { return 2.0 * undeclared_thing; }\n")
    with pytest.raises(CompileFailed) as exc:
        build(tmp_path, "broken", srcs)
    text = str(exc.value)
    assert "compiling helper.c failed" in text
    assert "error" in text and "undeclared_thing" in text


def test_helpers():
    assert without_debug_info(["gcc", "-g", "-O3", "-g3", "-ggdb", "-gno-record-gcc-switches", "-Wall"]) == \
        ["gcc", "-O3", "-gno-record-gcc-switches", "-Wall"]
    assert compile_c.jobs(1) == 1

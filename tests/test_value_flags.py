"""Flags from the environment cannot change a module's numbers.

CFLAGS, CPPFLAGS and LDFLAGS reach every setuptools build. -ffast-math and
its parts would compile away the wrapper's NaN/inf checks, and at link time
-ffast-math or -Ofast adds crtfastmath.o, whose constructor turns on
flush-to-zero for the whole process when the module is imported. The module
build strips them (codegen/build/compiler.py, setup.py) and the wrapper
tests finiteness on the IEEE-754 bits (templates/python/checks.pxi).

Three builds of the mini model, each imported in a fresh interpreter: every
flag in CFLAGS, -ffast-math in LDFLAGS alone, -Ofast in CPPFLAGS alone.
"""
from __future__ import annotations

import json
import runpy
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from codegen.build import compiler
from codegen.build.module import build_python_module
from codegen.emit.abi import describe
from codegen.pipeline import CodegenConfig, generate_from_files
from codegen.read.model import load_model, load_param_values

pytestmark = pytest.mark.system  # several module builds with odd flags and names

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL = HERE / "models" / "mini.toml"
PARAMS = HERE / "models" / "mini_params.toml"
ALL = ("-ffast-math -ffinite-math-only -Ofast -funsafe-math-optimizations -fno-signed-zeros "
       "-freciprocal-math -fassociative-math")
BUILDS = {
    "every flag in CFLAGS": {"CFLAGS": ALL},
    "-ffast-math in LDFLAGS": {"LDFLAGS": "-ffast-math"},
    "-Ofast in CPPFLAGS": {"CPPFLAGS": "-Ofast"},
}

# Run in a fresh interpreter: flush-to-zero set by a module's constructor
# would stay on in this process for every later test.
PROBE = textwrap.dedent("""
    import importlib.util, json, sys
    import numpy as np
    smallest_normal = np.array([2.2250738585072014e-308])
    before = bool((smallest_normal / 2)[0] != 0)
    spec = importlib.util.spec_from_file_location("mini_kernels", sys.argv[1])
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    out = {"denormals_before": before,
           "denormals_after": bool((smallest_normal / 2)[0] != 0),
           "denormal_product": bool(np.float64(5e-324) * 1.0 != 0)}
    q, v = np.array([0.3, -1.2, 0.05]), np.array([0.5, 0.1, -0.7])
    calls = {
        "q nan": lambda: m.compute_A([0.3, np.nan, 0.05]),
        "dq inf": lambda: m.compute_C(q, [0.5, -np.inf, 0.0]),
        "dt nan": lambda: m.integrate(q, v, float("nan")),
        "batch nan": lambda: m.compute_Q(np.array([q, [0.0, 0.0, np.nan]])),
        "params inf": lambda: m.compute_Q(q, np.full(m.N_PARAMS, np.inf)),
        "params_from_dict nan": lambda: m.params_from_dict({m.PARAM_NAMES[0]: float("nan")}),
    }
    for name, call in calls.items():
        try:
            call()
            out[name] = "accepted"
        except ValueError as exc:
            out[name] = str(exc)
    out["numbers"] = (m.compute_A(q).tobytes() + m.compute_C(q, v).tobytes()
                      + m.inverse_dynamics(q, v, v).tobytes()).hex()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def mini_c(tmp_path_factory):
    """mini's generated C, once: each build compiles a copy of it."""
    out = tmp_path_factory.mktemp("mini_c")
    generate_from_files(MODEL, PARAMS, CodegenConfig(out_dir=out))
    return out


def _build(name, mini_c, out):
    """The module of one entry of BUILDS (-march=native: a third of the compile time),
    the build's warnings, and what the module does in a fresh interpreter."""
    for f in mini_c.iterdir():
        if f.suffix in (".c", ".h"):
            shutil.copy(f, out / f.name)
    model = load_model(MODEL)
    values = load_param_values(PARAMS, model)
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for var in ("CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED", "CC"):
            mp.delenv(var, raising=False)
        for var, value in BUILDS[name].items():
            mp.setenv(var, value)
        so = build_python_module(describe(model), model, values, out, SimpleNamespace(name=None, native=True))
    r = subprocess.run([sys.executable, "-c", PROBE, str(so)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return SimpleNamespace(so=so, probe=json.loads(r.stdout), warnings=[str(w.message) for w in caught])


@pytest.fixture(scope="module")
def builds(mini_c, tmp_path_factory):
    return {name: _build(name, mini_c, tmp_path_factory.mktemp("flags")) for name in BUILDS}


def test_inputs_that_are_not_finite_are_refused(builds):
    for name, b in builds.items():
        for call in ("q nan", "dq inf", "dt nan", "batch nan", "params inf", "params_from_dict nan"):
            assert b.probe[call] != "accepted", f"{name}: {call} accepted"
        assert "q[1]" in b.probe["q nan"] and "dq[1]" in b.probe["dq inf"], name
        assert "q[1, 2]" in b.probe["batch nan"], name


def test_importing_keeps_denormals(builds):
    """No flush-to-zero, no denormals-are-zero after the import (crtfastmath.o not linked)."""
    for name, b in builds.items():
        assert b.probe["denormals_before"]
        assert b.probe["denormals_after"], f"{name}: flush-to-zero on after importing the module"
        assert b.probe["denormal_product"], f"{name}: denormals-are-zero on after importing the module"


def test_the_flags_are_stripped_with_a_one_line_warning(builds):
    for name, b in builds.items():
        flags = set(" ".join(BUILDS[name].values()).split())
        lines = [w for w in b.warnings if "ignoring" in w]
        assert len(lines) == 1, (name, b.warnings)
        assert "\n" not in lines[0] and all(f in lines[0] for f in flags), lines[0]


def test_the_builds_give_the_same_numbers(builds):
    """The LDFLAGS build compiled its kernels without any value-changing flag (LDFLAGS
    only reach the link): the others give the very same bits."""
    reference = builds["-ffast-math in LDFLAGS"].probe["numbers"]
    for name, b in builds.items():
        assert b.probe["numbers"] == reference, name


@pytest.mark.parametrize("command, kept, stripped", [
    (["gcc", "-O3", "-ffast-math", "-fPIC"], ["gcc", "-O3", "-fPIC"], ["-ffast-math"]),
    (["gcc", "-Ofast", "-O2"], ["gcc", "-O2"], ["-Ofast"]),
    (["cc", "-ffinite-math-only", "-fno-signed-zeros", "-freciprocal-math", "-fassociative-math",
      "-funsafe-math-optimizations", "-ffp-contract=fast", "-fno-math-errno", "-fno-trapping-math"],
     ["cc", "-ffp-contract=fast", "-fno-math-errno", "-fno-trapping-math"],
     ["-ffinite-math-only", "-fno-signed-zeros", "-freciprocal-math", "-fassociative-math",
      "-funsafe-math-optimizations"]),
    (["clang", "-ffp-model=fast", "-fno-honor-nans", "-fno-honor-infinities", "-fapprox-func",
      "-fdenormal-fp-math=preserve-sign", "-mdaz-ftz", "-fsingle-precision-constant", "-fno-fast-math"],
     ["clang", "-fno-fast-math"],
     ["-ffp-model=fast", "-fno-honor-nans", "-fno-honor-infinities", "-fapprox-func",
      "-fdenormal-fp-math=preserve-sign", "-mdaz-ftz", "-fsingle-precision-constant"]),
    (["gcc", "-ffp-model=precise", "-ffast-math-x"], ["gcc", "-ffp-model=precise", "-ffast-math-x"], []),
])
def test_value_flags_are_recognised(command, kept, stripped):
    assert compiler.without_value_flags(command) == (kept, stripped)


def test_setup_strips_the_same_flags():
    """setup.py cannot import codegen (pip's isolated build): its copy of the rule must agree."""
    helpers = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_helpers")
    assert helpers["VALUE_FLAGS"] == compiler.VALUE_FLAGS
    assert helpers["VALUE_FLAG_PREFIXES"] == compiler.VALUE_FLAG_PREFIXES
    command = ["gcc", "-Ofast", "-O2", "-ffp-model=fast", "-fdenormal-fp-math=ieee", "-fPIC"]
    assert helpers["without_value_flags"](command) == compiler.without_value_flags(command)

"""Two robots of one name in one process each keep their own kernels.

A generated module's kernels are C functions named after the robot
(mini_compute_A, ...). Were they exported, a module loaded RTLD_GLOBAL
first would supply its kernels to every later same-named module: the
second robot computing the first one's dynamics, silently. The Python
module is compiled with -fvisibility=hidden (only PyInit_<module> is
exported, calls bind inside the module); C hosts give each library a
symbol prefix, NAME_kernels_prefix (docs/c-abi.md).

Two models both named "mini" (tests/models/mini.toml and a copy with
another gravity and another link offset).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from codegen.pipeline import CodegenConfig, generate, generate_from_files
from codegen.read.model import load_model, load_param_values

pytestmark = pytest.mark.system  # several module builds with odd flags and names

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL = HERE / "models" / "mini.toml"
PARAMS = HERE / "models" / "mini_params.toml"
NM = shutil.which("nm")
CC = shutil.which("cc") or shutil.which("gcc")
CMAKE = shutil.which("cmake")


def _other_mini(directory: Path) -> Path:
    """mini.toml with another gravity direction and arm a further out: other numbers, same name."""
    text = MODEL.read_text()
    for old, new in (('gravity = [0.6, 0, -0.8]', 'gravity = [0, 0.6, -0.8]'),
                     ('origin = ["L2", "0", "L3"]', 'origin = ["L2 + L4", "0", "L3"]')):
        assert old in text
        text = text.replace(old, new)
    path = directory / "mini.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def robots(tmp_path_factory):
    """Both models' C and Python modules (the default, portable build: target_clones)."""
    tmp = tmp_path_factory.mktemp("same_name")
    out = {}
    for key, model in (("one", MODEL), ("two", _other_mini(tmp))):
        d = tmp / key
        generate_from_files(model, PARAMS, CodegenConfig(out_dir=d, python=True))
        (so,) = d.glob("mini_kernels.*.so")
        out[key] = SimpleNamespace(model=model, dir=d, so=so)
    return out


# The outputs of a module, as JSON: compute_A, compute_Q, jacobian, forward_dynamics at one state.
OUTPUTS = textwrap.dedent("""
    import importlib.util, json, os, sys
    import numpy as np

    def load(path):
        spec = importlib.util.spec_from_file_location("mini_kernels", path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        return m

    def outputs(m):
        q, dq = np.array([0.3, -1.2, 0.05]), np.array([0.5, 0.1, -0.7])
        return {"A": m.compute_A(q).tolist(), "Q": m.compute_Q(q).tolist(),
                "J": m.jacobian(q, "tool", "world").tolist(),
                "ddq": m.forward_dynamics(q, dq, np.ones(3)).tolist(),
                "p": m.default_params().tolist()}

    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)  # the flags of a host that shares its symbols
    modules = [load(path) for path in sys.argv[1:]]
    print(json.dumps([outputs(m) for m in modules]))
""")


def _outputs(*paths):
    r = subprocess.run([sys.executable, "-c", OUTPUTS, *map(str, paths)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_same_named_modules_keep_their_own_kernels(robots):
    one, two = robots["one"].so, robots["two"].so
    (alone_one,), (alone_two,) = _outputs(one), _outputs(two)
    assert alone_one["Q"] != alone_two["Q"] and alone_one["A"] != alone_two["A"]  # the models differ
    for order in ((one, two), (two, one)):
        together = _outputs(*order)
        for path, got in zip(order, together):
            want = alone_one if path == one else alone_two
            for key in want:
                assert got[key] == want[key], f"{path.parent.name}'s {key} loaded after another mini"


@pytest.mark.skipif(NM is None, reason="no nm")
def test_only_the_module_init_is_exported(robots):
    for r in robots.values():
        text = subprocess.run([NM, "-D", "--defined-only", str(r.so)], capture_output=True, text=True,
                              check=True).stdout
        names = [line.split()[-1] for line in text.splitlines() if line.strip()]
        assert names == ["PyInit_mini_kernels"], names


MAIN = """#include <stdio.h>
void run_one(double *Q);
void run_two(double *Q);
int main(void)
{
    double a[3], b[3];
    run_one(a);
    run_two(b);
    for (int i = 0; i < 3; ++i) printf("%.17g %.17g\\n", a[i], b[i]);
    return 0;
}
"""
RUN = """#include "mini_kernels.h"
void run_%s(double *Q)
{
    double q[MINI_NQ] = {0.3, -1.2, 0.05}, p[MINI_NP];
    mini_default_params(p);
    mini_compute_Q(q, p, Q);
}
"""


@pytest.mark.skipif(CC is None or NM is None, reason="no C compiler or nm")
def test_c_symbol_prefix_lets_two_same_named_robots_link_together(robots, tmp_path):
    """Each robot's C compiled with -Dmini_kernels_prefix=<its prefix>, and each caller
    with the same: one program, no duplicate symbols, each caller its own robot."""
    objects = []
    for key, r in robots.items():
        flags = ["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-Dmini_kernels_prefix={key}_", "-I", str(r.dir)]
        kernels, caller = tmp_path / f"kernels_{key}.o", tmp_path / f"run_{key}.o"
        subprocess.run([CC, *flags, "-c", str(r.dir / "mini_kernels.c"), "-o", str(kernels)], check=True)
        (tmp_path / f"run_{key}.c").write_text(RUN % key)
        subprocess.run([CC, *flags, "-c", str(tmp_path / f"run_{key}.c"), "-o", str(caller)], check=True)
        text = subprocess.run([NM, "--defined-only", "-g", str(kernels)], capture_output=True, text=True,
                              check=True).stdout
        names = [line.split()[-1] for line in text.splitlines() if line.strip()]
        assert names and all(n.startswith(f"{key}_mini_") for n in names), names
        objects += [kernels, caller]
    (tmp_path / "main.c").write_text(MAIN)
    exe = tmp_path / "both"
    subprocess.run([CC, "-std=c99", str(tmp_path / "main.c"), *map(str, objects), "-lm", "-o", str(exe)], check=True)
    got = np.loadtxt(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines())
    (one,), (two,) = _outputs(robots["one"].so), _outputs(robots["two"].so)
    np.testing.assert_allclose(got[:, 0], one["Q"], rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(got[:, 1], two["Q"], rtol=1e-14, atol=1e-14)


@pytest.mark.skipif(CMAKE is None or NM is None, reason="no cmake or nm")
def test_cmake_symbol_prefix(robots, tmp_path):
    """KRANG_KERNELS_SYMBOL_PREFIX: the libraries' symbols and file names carry it, and a
    consumer linked to the target calls the unprefixed names (the definition travels with
    the target). On mini generated as `krang` (seconds to compile, unlike Krang)."""
    gen = tmp_path / "gen"
    model = load_model(MODEL)
    generate(model, load_param_values(PARAMS, model), CodegenConfig(out_dir=gen, name="krang"))
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "main.c").write_text('#include <stdio.h>\n#include "krang_kernels.h"\nint main(void)\n{\n'
                                     '    double q[KRANG_NQ] = {0.3, -1.2, 0.05}, p[KRANG_NP], Q[KRANG_NDOF];\n'
                                     '    krang_default_params(p);\n    krang_compute_Q(q, p, Q);\n'
                                     '    printf("%.17g\\n", Q[0]);\n    return 0;\n}\n')
    (consumer / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(consumer C)\n"
        f'add_subdirectory("{ROOT.as_posix()}" krang_kernels)\n'
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE krang_kernels::krang_kernels)\n"
        "add_executable(app_static main.c)\n"
        "target_link_libraries(app_static PRIVATE krang_kernels::krang_kernels_static)\n")
    build = tmp_path / "build"
    for cmd in ([CMAKE, "-S", consumer, "-B", build, "-DCMAKE_BUILD_TYPE=Debug", f"-DKRANG_KERNELS_GENERATED_DIR={gen}",
                 "-DKRANG_KERNELS_SYMBOL_PREFIX=left_"], [CMAKE, "--build", build, "-j2"]):
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (lib,) = (build / "krang_kernels").glob("libleft_krang_kernels.so")
    text = subprocess.run([NM, "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in text.splitlines() if line.split()[1:2] in (["T"], ["i"])]
    assert names and all(n.startswith("left_krang_") for n in names), names
    assert "left_krang_compute_Q" in names
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib.parent))
    got = [float(subprocess.run([str(build / exe)], capture_output=True, text=True, env=env, check=True).stdout)
           for exe in ("app", "app_static")]
    (one,) = _outputs(robots["one"].so)  # the same model, as the Python module computes it
    np.testing.assert_allclose(got, [one["Q"][0]] * 2, rtol=1e-12)

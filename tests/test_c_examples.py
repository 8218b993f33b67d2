"""The C library as C and C++ users see it: the README's and docs/c-abi.md's C
snippets compile and run as written, the C and C++/Eigen examples give
Pinocchio's inverse dynamics, the CMake project works through
find_package (installed, with its pkg-config file) and add_subdirectory, and
docs/c-abi.md's stack-use table is what gcc measures."""
from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codegen.read.model import load_model, load_param_values
from reference.abi_ctypes import compile_objects

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT / "generated"
README = ROOT / "README.md"
C_PAGE = ROOT / "docs" / "c-abi.md"  # the C ABI page: build flags, snippets, the stack table
CC = shutil.which("cc") or shutil.which("gcc")
CXX = shutil.which("c++") or shutil.which("g++")
CMAKE = shutil.which("cmake")
# The README's compile flags, plus warnings as errors.
CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]

pytestmark = [pytest.mark.system, pytest.mark.skipif(CC is None, reason="no C compiler")]


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def kernels_o(tmp_path_factory):
    """generated/krang_kernels.c compiled once with the README's flags, as its parts
    (concurrently: the same functions as one compiler run); the .su file next to each
    object has gcc's stack use per function."""
    return compile_objects(GEN / "krang_kernels.c", tmp_path_factory.mktemp("c"), [*CFLAGS, "-fstack-usage"], CC)


@pytest.fixture(scope="module")
def expected():
    """tau = A ddq + C dq + Q and the left hand's world velocity J dq from
    Pinocchio, at the examples' q, dq, ddq and the parameter file's defaults."""
    pin_reference = pytest.importorskip("reference.pin_reference")
    model = load_model(ROOT / "models" / "krang.toml")
    values = np.array(load_param_values(ROOT / "models" / "krang_params.toml", model), dtype=float)
    n = model.ndof
    i = np.arange(n)
    q, dq, ddq = 0.1 * (i + 1) - 0.8, 0.3 - 0.05 * i, np.ones(n)
    pm, _ = pin_reference.build_pin_model(model, values)
    ref = pin_reference.pin_reference(pm, pm.createData(), q, dq)
    return {"tau": ref["A"] @ ddq + ref["C"] @ dq + ref["Q"], "v": ref["J_left_world"] @ dq}


def parse(out: str) -> dict:
    vals: dict = {}
    for key, i, x in re.findall(r"^(tau|v) (\d+) (\S+)", out, re.M):
        vals.setdefault(key, {})[int(i)] = float(x)
    return {k: np.array([v[i] for i in range(len(v))]) for k, v in vals.items()}


def check_against_pinocchio(out: str, expected):
    got = parse(out)
    for key in ("tau", "v"):
        ref = expected[key]
        assert got[key].shape == ref.shape, key
        err = np.abs(got[key] - ref).max() / (1 + np.abs(ref).max())
        assert err < 1e-10, f"{key}: relative error {err:.3g}"


def test_c_example(kernels_o, tmp_path, expected):
    exe = tmp_path / "example"
    run([CC, *CFLAGS, "-I", GEN, ROOT / "examples" / "c" / "main.c", *kernels_o, "-lm", "-o", exe])
    check_against_pinocchio(run([exe]), expected)


def test_c_example_documents_its_build_line():
    line = "cc -O2 -std=c99 -I generated {}main.c generated/krang_kernels.c -lm"
    assert line.format("examples/c/") in (ROOT / "examples" / "c" / "main.c").read_text()
    assert line.format("") in README.read_text() and line.format("") in C_PAGE.read_text()


def eigen_include():
    """Eigen's headers: from the cmeel-eigen wheel (the test extra) or the system."""
    dirs = [Path(d) / "cmeel.prefix" / "include" / "eigen3" for d in [*sys.path, *site.getsitepackages()]]
    dirs.append(Path("/usr/include/eigen3"))
    return next((d for d in dirs if (d / "Eigen" / "Dense").is_file()), None)


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_cpp_eigen_example(kernels_o, tmp_path, expected):
    eigen = eigen_include()
    if eigen is None:
        pytest.skip("Eigen headers not found (pip install cmeel-eigen)")
    exe = tmp_path / "example_cpp"
    run([CXX, "-O2", "-std=c++17", "-Wall", "-Wextra", "-I", GEN, "-I", eigen,
         ROOT / "examples" / "cpp" / "main.cpp", *kernels_o, "-o", exe])
    out = run([exe])
    check_against_pinocchio(out, expected)
    ddq_error = float(re.search(r"^ddq_error (\S+)", out, re.M).group(1))
    assert ddq_error < 1e-9  # forward dynamics through Eigen's LLT of the mapped A


def readme_c_blocks():
    """The C snippets of the README and of the C ABI page."""
    return [b for page in (README, C_PAGE) for b in re.findall(r"```c\n(.*?)```", page.read_text(), re.S)]


def test_readme_c_snippets_compile_and_run(kernels_o, tmp_path):
    blocks = readme_c_blocks()
    assert blocks, "README has no C example"
    for k, block in enumerate(blocks):
        src = tmp_path / f"snippet{k}.c"
        src.write_text(block)
        exe = tmp_path / f"snippet{k}"
        run([CC, *CFLAGS, "-I", GEN, src, *kernels_o, "-lm", "-o", exe])
        run([exe])


# --- stack use -------------------------------------------------------------

def measured_stack(kernels_o) -> dict:
    out: dict = {}
    for obj in kernels_o:  # a static helper is in every part that calls it: its largest use
        for m in re.finditer(r":(\w+)\t(\d+)\t", obj.with_suffix(".su").read_text()):
            out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(2)))
    return out


def test_readme_stack_table_is_measured(kernels_o):
    """Every exported function of the header is in the README's table with
    the bytes gcc -O2 reports (-fstack-usage), within 25 % (compilers differ)."""
    measured = measured_stack(kernels_o)
    exported = re.findall(r"^[a-z].*?\b(krang_\w+)\(", (GEN / "krang_kernels.h").read_text(), re.M)
    text = C_PAGE.read_text()
    section = re.search(r"<!-- stack:start -->(.*?)<!-- stack:end -->", text, re.S)
    assert section, "docs/c-abi.md has no stack table"
    stated = {name: int(b) for name, b in re.findall(r"^\| `(krang_\w+)` \| ([\d]+) \|", section.group(1), re.M)}
    table = "\n".join(f"| `{f}` | {measured[f]} |" for f in exported)
    assert set(stated) == set(exported), f"docs/c-abi.md's stack table should list exactly:\n{table}"
    off = {f: (stated[f], measured[f]) for f in exported if not 0.75 * stated[f] <= measured[f] <= 1.25 * stated[f]}
    assert not off, f"stack use changed (stated, measured): {off}; measured table:\n{table}"


# --- CMake -----------------------------------------------------------------

needs_cmake = pytest.mark.skipif(CMAKE is None, reason="no cmake")
# Debug builds: the -O0 compile of the kernels takes ~2 s instead of ~20 s.
CMAKE_CONFIG = ["-DCMAKE_BUILD_TYPE=Debug"]


@needs_cmake
def test_cmake_install_find_package_and_pkg_config(tmp_path, expected):
    # installed into a prefix chosen after configuring (cmake --install --prefix): the
    # CMake package and the pkg-config file must point into it, not at the configured one
    prefix, configured = tmp_path / "prefix", tmp_path / "configured"
    run([CMAKE, "-S", ROOT, "-B", tmp_path / "build", *CMAKE_CONFIG, f"-DCMAKE_INSTALL_PREFIX={configured}"])
    run([CMAKE, "--build", tmp_path / "build", "-j2"])
    run([CMAKE, "--install", tmp_path / "build", "--prefix", prefix])
    assert not configured.exists()
    libdir = next(d for d in (prefix / "lib", prefix / "lib64") if d.is_dir())
    for f in ("libkrang_kernels.a", "libkrang_kernels.so", "pkgconfig/krang_kernels.pc",
              "cmake/krang_kernels/krang_kernelsConfig.cmake", "cmake/krang_kernels/krang_kernelsConfigVersion.cmake"):
        assert (libdir / f).exists(), f
    assert (prefix / "include" / "krang_kernels.h").read_bytes() == (GEN / "krang_kernels.h").read_bytes()

    # A consumer project (the C example's CMakeLists.txt) through find_package.
    run([CMAKE, "-S", ROOT / "examples" / "c", "-B", tmp_path / "consumer", *CMAKE_CONFIG,
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([CMAKE, "--build", tmp_path / "consumer"])
    for exe in ("krang_example_c", "krang_example_c_shared"):
        check_against_pinocchio(run([tmp_path / "consumer" / exe]), expected)

    # pkg-config, as documented: the shared library; --static adds -lm.
    pkg_config = shutil.which("pkg-config")
    if pkg_config:
        env = dict(os.environ, PKG_CONFIG_PATH=str(libdir / "pkgconfig"))
        assert str(configured) not in (libdir / "pkgconfig" / "krang_kernels.pc").read_text()
        assert Path(run([pkg_config, "--variable=prefix", "krang_kernels"], env=env).strip()).resolve() == prefix.resolve()
        assert "-lm" in run([pkg_config, "--libs", "--static", "krang_kernels"], env=env).split()
        flags = run([pkg_config, "--cflags", "--libs", "krang_kernels"], env=env).split()
        exe = tmp_path / "pc_example"
        run([CC, "-std=c99", ROOT / "examples" / "c" / "main.c", *flags, "-o", exe])
        check_against_pinocchio(run([exe], env=dict(os.environ, LD_LIBRARY_PATH=str(libdir))), expected)


@needs_cmake
def test_cmake_add_subdirectory(tmp_path, expected):
    consumer = tmp_path / "src"
    consumer.mkdir()
    (consumer / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(consumer C)\n"
        f'add_subdirectory("{ROOT.as_posix()}" krang_kernels)\n'
        f'add_subdirectory("{(ROOT / "examples" / "c").as_posix()}" example)\n')
    run([CMAKE, "-S", consumer, "-B", tmp_path / "build", *CMAKE_CONFIG])
    run([CMAKE, "--build", tmp_path / "build", "-j2"])
    assert not (tmp_path / "build" / "krang_kernels" / "krang_kernels.pc").exists()  # no install rules as a subproject
    check_against_pinocchio(run([tmp_path / "build" / "example" / "krang_example_c"]), expected)

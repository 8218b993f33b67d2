"""A generated robot's C library as a CMake project (codegen/build/export.py,
codegen/emit/cmake_project.py): codegen.import_urdf(..., out=DIR), codegen.export(module,
DIR), codegen.export(directory, DIR) and `python -m codegen ROBOT.urdf --cmake` write the
same project; it builds, installs into a prefix chosen after configuring, and a C program
built against it through find_package (shared and static targets), add_subdirectory and
pkg-config (after the prefix is moved: the .pc file is relocatable) computes what the
Python module computes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")
CMAKE = shutil.which("cmake")
PKG_CONFIG = shutil.which("pkg-config")
NAME = "arm2"
STEM = f"{NAME}_kernels"
PROJECT = ["CMakeLists.txt", f"{STEM}.c", f"{STEM}.h", f"{STEM}.pc.in", f"{STEM}Config.cmake.in"]
# A two-link arm: a revolute joint about z, one about a tilted axis, a tool on a fixed joint.
URDF = """<?xml version="1.0"?>
<robot name="two_link_description">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.02 0.01 0.15" rpy="0.1 0.2 0.3"/><mass value="3.0"/>
    <inertia ixx="0.03" ixy="0.001" ixz="0.002" iyy="0.035" iyz="0.0" izz="0.01"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.2 0 0.05" rpy="0 0 0"/><mass value="2.0"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.25" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.1 0 0.3" rpy="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="flange" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="0.4 0 0"/></joint>
</robot>
"""
Q = [0.3, -0.7]
# The consumer: A, Q and the tool's world Jacobian at Q, at the default parameters, as JSON.
MAIN_C = """#include <stdio.h>
#include "arm2_kernels.h"

int main(void)
{
    double q[ARM2_NDOF] = {0.3, -0.7}, p[ARM2_NP];
    double A[ARM2_NDOF * ARM2_NDOF], Q[ARM2_NDOF], J[6 * ARM2_NDOF];
    int i;
    arm2_default_params(p);
    arm2_compute_A(q, p, A);
    arm2_compute_Q(q, p, Q);
    arm2_jacobian(q, p, 0, 0, J);
    printf("{\\"A\\": [");
    for (i = 0; i < ARM2_NDOF * ARM2_NDOF; i++) printf("%s%.17g", i ? ", " : "", A[i]);
    printf("], \\"Q\\": [");
    for (i = 0; i < ARM2_NDOF; i++) printf("%s%.17g", i ? ", " : "", Q[i]);
    printf("], \\"J\\": [");
    for (i = 0; i < 6 * ARM2_NDOF; i++) printf("%s%.17g", i ? ", " : "", J[i]);
    printf("]}\\n");
    return 0;
}
"""
CONSUMER = """cmake_minimum_required(VERSION 3.16)
project(consumer C)
{find}
add_executable(app_shared main.c)
target_link_libraries(app_shared PRIVATE arm2_kernels::arm2_kernels)
add_executable(app_static main.c)
target_link_libraries(app_static PRIVATE arm2_kernels::arm2_kernels_static)
"""
CMAKE_CONFIG = ["-DCMAKE_BUILD_TYPE=Debug"]  # a quick -O0 compile of the kernels

needs_cmake = pytest.mark.skipif(CMAKE is None or CC is None, reason="no cmake or no C compiler")


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(module, its project directory written by import_urdf(..., out=), the URDF)."""
    import codegen

    base = tmp_path_factory.mktemp("export")
    urdf = base / "two_link.urdf"
    urdf.write_text(URDF)
    out = base / "project"
    module = codegen.import_urdf(urdf, end_effectors=["tool"], name=NAME, kernels=(), quiet=True, out=out)
    return module, out, urdf


@pytest.fixture(scope="module")
def expected(built):
    module = built[0]
    return {"A": module.compute_A(Q), "Q": module.compute_Q(Q), "J": module.jacobian(Q, "tool")}


def check(stdout: str, expected) -> None:
    got = json.loads(stdout)
    for key, want in expected.items():
        np.testing.assert_allclose(np.reshape(got[key], np.shape(want)), want, rtol=1e-12, atol=1e-12,
                                   err_msg=key)


def files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_every_route_writes_the_same_project(built, tmp_path):
    import codegen

    module, out, urdf = built
    assert sorted(p.name for p in out.iterdir()) == PROJECT
    codegen.export(module, tmp_path / "from_module")
    assert files(tmp_path / "from_module") == files(out)
    written = codegen.export(out, tmp_path / "from_dir")  # a directory holding NAME_kernels.{c,h}
    assert sorted(p.name for p in written) == PROJECT and files(tmp_path / "from_dir") == files(out)
    # the same call again, with the module already imported, and into an existing directory
    again = codegen.import_urdf(urdf, end_effectors=["tool"], name=NAME, kernels=(), quiet=True,
                                out=tmp_path / "from_dir")
    assert again is module and files(tmp_path / "from_dir") == files(out)
    cmake_lists = (out / "CMakeLists.txt").read_text()
    for text in (f"project({STEM} VERSION ", "KK_TARGET_CLONES", "-ffp-contract=fast", "C_STANDARD 99",
                 f"NAMESPACE {STEM}::", "write_basic_package_version_file", "${pcfiledir}"):
        assert text in cmake_lists, text


def test_the_command_line_writes_the_project_with_cmake(built, tmp_path):
    _, out, urdf = built
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run([sys.executable, "-m", "codegen", urdf, "--out", tmp_path / "cli", "--name", NAME, "--end-effector", "tool",
         "--kernels", "core", "--cmake"], env=env, cwd=ROOT)
    cli = files(tmp_path / "cli")
    assert sorted(cli) == PROJECT
    assert {k: v for k, v in cli.items() if k != f"{STEM}.c"} == \
        {k: v for k, v in files(out).items() if k != f"{STEM}.c"}
    run([sys.executable, "-m", "codegen", urdf, "--out", tmp_path / "plain", "--name", NAME, "--end-effector", "tool",
         "--kernels", "core"], env=env, cwd=ROOT)
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == [f"{STEM}.c", f"{STEM}.h"]  # opt-in
    # a model file and a parameter file; the URDF without the module cache
    run([sys.executable, "-m", "codegen", ROOT / "tests" / "models" / "mini.toml",
         ROOT / "tests" / "models" / "mini_params.toml", "--out", tmp_path / "toml", "--name", "p2",
         "--kernels", "core", "--cmake"], env=env, cwd=ROOT)
    assert sorted(p.name for p in (tmp_path / "toml").iterdir()) == \
        ["CMakeLists.txt", "p2_kernels.c", "p2_kernels.h", "p2_kernels.pc.in", "p2_kernelsConfig.cmake.in"]
    run([sys.executable, "-m", "codegen", urdf, "--out", tmp_path / "no_cache", "--name", NAME, "--end-effector",
         "tool", "--kernels", "core", "--cmake", "--no-cache"], env=env, cwd=ROOT)
    assert files(tmp_path / "no_cache") == cli


def test_a_private_build_exports_before_its_directory_goes(built, tmp_path):
    """cache=False builds in a temporary directory removed afterwards: out= exports first;
    codegen.export of such a module afterwards says why it cannot."""
    import codegen

    _, out, urdf = built
    module = codegen.import_urdf(urdf, end_effectors=["tool"], name=NAME, kernels=(), quiet=True, cache=False,
                                 out=tmp_path / "private")
    assert files(tmp_path / "private") == files(out)
    with pytest.raises(ValueError, match="cache=False"):
        codegen.export(module, tmp_path / "later")


def test_export_refuses_a_directory_without_one_library(tmp_path):
    import codegen

    with pytest.raises(ValueError, match="no NAME_kernels.h"):
        codegen.export(tmp_path, tmp_path / "out")
    with pytest.raises(ValueError, match="not a directory"):
        codegen.export(tmp_path / "missing", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@needs_cmake
def test_install_then_find_package_and_relocated_pkg_config(built, expected, tmp_path):
    _, out, _ = built
    prefix, configured = tmp_path / "prefix", tmp_path / "configured"
    run([CMAKE, "-S", out, "-B", tmp_path / "build", *CMAKE_CONFIG, f"-DCMAKE_INSTALL_PREFIX={configured}"])
    run([CMAKE, "--build", tmp_path / "build", "-j2"])
    run([CMAKE, "--install", tmp_path / "build", "--prefix", prefix])
    assert not configured.exists()
    libdir = next(d for d in (prefix / "lib", prefix / "lib64") if d.is_dir())
    for f in (f"lib{STEM}.a", f"lib{STEM}.so", f"pkgconfig/{STEM}.pc", f"cmake/{STEM}/{STEM}Config.cmake",
              f"cmake/{STEM}/{STEM}ConfigVersion.cmake", f"cmake/{STEM}/{STEM}Targets.cmake"):
        assert (libdir / f).exists(), f
    assert (prefix / "include" / f"{STEM}.h").read_bytes() == (out / f"{STEM}.h").read_bytes()

    # (a) find_package, with CMAKE_PREFIX_PATH: the shared and the static imported target
    src = tmp_path / "consumer"
    src.mkdir()
    (src / "main.c").write_text(MAIN_C)
    (src / "CMakeLists.txt").write_text(CONSUMER.format(find=f"find_package({STEM} 0.2 REQUIRED)"))
    run([CMAKE, "-S", src, "-B", tmp_path / "consumer_build", *CMAKE_CONFIG, f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([CMAKE, "--build", tmp_path / "consumer_build"])
    for exe in ("app_shared", "app_static"):
        check(run([tmp_path / "consumer_build" / exe]), expected)

    # (b) pkg-config, after moving the installed prefix: the .pc file's prefix is ${pcfiledir}/../..
    if PKG_CONFIG is None:
        pytest.skip("no pkg-config")
    moved = tmp_path / "moved"
    prefix.rename(moved)
    libdir = moved / libdir.name
    pc_env = dict(os.environ, PKG_CONFIG_PATH=str(libdir / "pkgconfig"))
    assert str(configured) not in (libdir / "pkgconfig" / f"{STEM}.pc").read_text()
    assert Path(run([PKG_CONFIG, "--variable=prefix", STEM], env=pc_env).strip()).resolve() == moved.resolve()
    assert "-lm" in run([PKG_CONFIG, "--libs", "--static", STEM], env=pc_env).split()
    flags = run([PKG_CONFIG, "--cflags", "--libs", STEM], env=pc_env).split()
    exe = tmp_path / "pc_app"
    run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", src / "main.c", *flags, "-o", exe])
    check(run([exe], env=dict(os.environ, LD_LIBRARY_PATH=str(libdir))), expected)


@needs_cmake
def test_add_subdirectory(built, expected, tmp_path):
    _, out, _ = built
    src = tmp_path / "consumer"
    src.mkdir()
    (src / "main.c").write_text(MAIN_C)
    (src / "CMakeLists.txt").write_text(CONSUMER.format(find=f'add_subdirectory("{out.as_posix()}" {STEM})'))
    run([CMAKE, "-S", src, "-B", tmp_path / "build", *CMAKE_CONFIG])
    run([CMAKE, "--build", tmp_path / "build", "-j2"])
    assert not (tmp_path / "build" / STEM / f"{STEM}.pc").exists()  # no install rules as a subproject
    check(run([tmp_path / "build" / "app_static"]), expected)

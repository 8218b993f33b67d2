"""The example controllers run (with their short option, as `make examples`
runs them in full) and report small tracking errors: examples/computed_torque.py,
examples/task_space.py (Python, subprocesses from the repository root),
examples/floating_base.py (Solo12 in free flight: momentum, CoM and energy balance),
examples/ilqr.py (iLQR on Panda with the derivative kernels and with finite differences),
examples/humanoid_push.py (Talos on both soles under a push: equilibrium, sole forces, drift),
examples/quadruped_mpc.py (Solo12 trotting: Crocoddyl's gait problem by iLQR on the contact kernels and
on Pinocchio, the same steps), examples/crocoddyl_quadruped.py (the same gait by Crocoddyl's FDDP, native
and on the contact kernels through a DifferentialActionModel, in .venv-crocoddyl) and
examples/c_controller/main.c (compiled with docs/c-abi.md's build line, run for a few ticks)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

pytest.importorskip("krang_kernels")

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")


def _run(cmd, timeout=300, **kw):
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw)
    assert res.returncode == 0, f"{cmd}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def _number(text, label):
    m = re.search(rf"{label}:? ([0-9.]+e[+-][0-9]+)", text)
    assert m, f"no {label!r} in:\n{text}"
    return float(m.group(1))


def test_computed_torque(tmp_path):
    png = tmp_path / "ct.png"
    out = _run([sys.executable, "-m", "examples.computed_torque", "--short", "--png", str(png)])
    assert _number(out, "initial error") == pytest.approx(0.02)
    # 20 mrad initial offset, 1 kg unmodelled payload: the PD keeps it to ~1e-2 rad
    assert _number(out, "max tracking error") < 0.03
    assert _number(out, "rms tracking error") < 5e-3
    assert png.is_file() or "matplotlib is not installed" in out


def test_task_space(tmp_path):
    png = tmp_path / "ts.png"
    out = _run([sys.executable, "-m", "examples.task_space", "--short", "--png", str(png)])
    assert _number(out, "hold: max position error") < 5e-3  # m
    assert _number(out, "push: position error along the wall") < 5e-3
    # 20 N commanded; the unmodelled payload costs ~1 N
    assert _number(out, "max force error") < 2.0
    assert png.is_file() or "matplotlib is not installed" in out


def test_identify(tmp_path):
    png = tmp_path / "id.png"
    out = _run([sys.executable, "-m", "examples.identify", "--short", "--png", str(png)])
    # 1 % torque noise: the base parameters come back to a few percent overall
    assert _number(out, "base parameter relative error") < 0.1
    conds = re.findall(r"(random|optimized) excitation: +condition number ([0-9.]+e[+-][0-9]+)", out)
    assert [c[0] for c in conds] == ["random", "optimized"], out
    assert float(conds[1][1]) < float(conds[0][1])  # the optimized excitation is better conditioned
    m = re.search(r"identified ([0-9.]+e[+-][0-9]+) N m, default parameters ([0-9.]+e[+-][0-9]+)", out)
    assert m, out
    identified, default = float(m.group(1)), float(m.group(2))
    assert identified < 0.2 * default  # the identified model predicts the validation torques far better
    assert png.is_file() or "matplotlib is not installed" in out


def test_floating_base(tmp_path):
    pytest.importorskip("pinocchio")  # example-robot-data's Solo12 comes with it
    png = tmp_path / "fb.png"
    # the first run generates and builds Solo12's module (the test's own cache): minutes on a loaded machine
    out = _run([sys.executable, "-m", "examples.floating_base", "--short", "--png", str(png)], timeout=1500)
    # free flight: centroidal angular momentum constant, linear = h0 + M g t, CoM ballistic,
    # energy + dissipation constant; RK4 at 1 ms leaves errors far below these bounds
    assert _number(out, "max angular momentum drift") < 1e-6
    assert _number(out, "linear momentum error") < 1e-6
    assert _number(out, "max CoM deviation from the ballistic parabola") < 1e-5  # m
    assert _number(out, "max CoM velocity mismatch") < 1e-12
    assert _number(out, "energy balance error") < 2e-5
    assert _number(out, "energy dissipated by the PD dampers") > 0
    assert _number(out, "max quaternion norm error") < 1e-12
    assert png.is_file() or "matplotlib is not installed" in out


def test_ilqr(tmp_path):
    pytest.importorskip("pinocchio")  # example-robot-data's Panda comes with it
    png = tmp_path / "ilqr.png"
    # the first run generates and builds Panda's module (the test's own cache): minutes on a loaded machine
    out = _run([sys.executable, "-m", "examples.ilqr", "--short", "--png", str(png)], timeout=1500)
    m = re.search(r"final cost: analytic ([0-9.]+e[+-][0-9]+), finite differences ([0-9.]+e[+-][0-9]+) "
                  r"\(initial ([0-9.]+e[+-][0-9]+)\)", out)
    assert m, out
    analytic, fd, initial = (float(x) for x in m.groups())
    assert analytic < 1e-3 * initial  # converged: the hand reaches the pose and stops
    assert fd == pytest.approx(analytic, rel=1e-4)  # the same run: derivatives agree to ~1e-8
    # central differences at h = 1e-6: truncation and rounding ~1e-8 relative
    assert _number(out, "max relative difference") < 1e-6
    assert _number(out, "final position error") < 5e-3  # m
    assert _number(out, "orientation error") < 1e-2  # rad
    assert _number(out, "final speed") < 0.05  # rad/s
    assert _number(out, "max torque / limit") <= 1.0 + 1e-12  # the limits hold (and bind: 1.0 measured)
    assert png.is_file() or "matplotlib is not installed" in out


def test_humanoid_push(tmp_path):
    pytest.importorskip("pinocchio")  # example-robot-data's Talos comes with it
    png = tmp_path / "push.png"
    # the first run generates and builds Talos's module (the test's own cache): minutes on a loaded machine
    out = _run([sys.executable, "-m", "examples.humanoid_push", "--short", "--png", str(png)], timeout=1500)
    assert _number(out, "max [|]ddq[|]") < 1e-9  # the feedforward holds the stance: an equilibrium
    assert _number(out, r"max [|]lambda_c - lambda0[|]") < 1e-6  # N, of ~440 N per sole
    assert _number(out, "peak push") > 100  # N: the push is there
    # 180 N at the pelvis for 0.1 s: ~90 N of each sole's ~440 N moves, the feet stay physical
    assert 200 < _number(out, "min normal force") < 430  # N
    assert _number(out, "max friction ratio") < 0.3
    assert 0.3 < _number(out, "max CoP / sole edge") < 1.0
    assert "a real floor: lift-off no, slip no, tipping no" in out
    assert _number(out, "max sole drift") < 1e-5  # m: semi-implicit Euler at 1 ms, ~1e-7 measured
    assert png.is_file() or "matplotlib is not installed" in out


def test_quadruped_mpc(tmp_path):
    pytest.importorskip("pinocchio")  # example-robot-data's Solo12 comes with it, and the reference
    png = tmp_path / "trot.png"
    # the first run generates and builds Solo12's module with contacts (the test's own cache): minutes
    out = _run([sys.executable, "-m", "examples.quadruped_mpc", "--short", "--png", str(png)], timeout=1500)
    m = re.search(r"iterations: ours (\d+), Pinocchio (\d+)", out)
    assert m, out
    assert m.group(1) == m.group(2) and 5 <= int(m.group(1)) < 100  # converged, both in the same steps
    m = re.search(r"final cost: ours ([0-9.]+e[+-][0-9]+), Pinocchio ([0-9.]+e[+-][0-9]+) "
                  r"\(relative difference [0-9.]+e[+-][0-9]+; initial ([0-9.]+e[+-][0-9]+)\)", out)
    assert m, out
    ours, pin, initial = (float(x) for x in m.groups())
    assert pin == pytest.approx(ours, rel=1e-10)  # the derivatives agree to ~1e-13: the same run (~1e-14 measured)
    assert ours < 1e-2 * initial  # 2.9e5 -> 676 measured, Crocoddyl's own solvers' optimum to 1e-10
    assert _number(out, "max base position difference ours vs Pinocchio") < 1e-9  # m
    assert re.search(r"time per iteration: ours [0-9.]+ ms, Pinocchio [0-9.]+ ms", out), out
    assert 0.05 < _number(out, "base travelled") < 0.15  # m: the CoM's reference moves 0.11 m (0.074 measured)
    assert png.is_file() or "matplotlib is not installed" in out


CROCODDYL_PYTHON = ROOT / ".venv-crocoddyl" / "bin" / "python"


@pytest.mark.skipif(not CROCODDYL_PYTHON.exists(), reason=".venv-crocoddyl does not exist (make crocoddyl-env): Crocoddyl "
                    "3.2.1 needs pin 4.0.0, .venv has 4.1.0")
def test_crocoddyl_quadruped(tmp_path):
    png = tmp_path / "croc.png"
    # Solo12's module: built by the Crocoddyl environment's generator on first use (minutes), or the same
    # cache entry as test_quadruped_mpc's when the build tools' versions match
    out = _run([str(CROCODDYL_PYTHON), "-m", "examples.crocoddyl_quadruped", "--short", "--repeat", "1", "--calls", "200",
                "--png", str(png)], timeout=1500)
    assert re.search(r"crocoddyl 3\.2\.1, pinocchio 4\.0\.0", out), out
    # every node of ours: the contact nodes, the terminal one and the touchdowns
    m = re.search(r"(\d+) nodes, (\d+) contact nodes and the terminal one ours, (\d+) touchdowns ours, 0 native", out)
    assert m and int(m.group(2)) + int(m.group(3)) == int(m.group(1)) and int(m.group(3)) == 2, out
    # ddq, lambda, v+ and their derivatives against Crocoddyl's native models (the example asserts 1e-9 too)
    assert _number(out, "largest difference ours vs native") < 1e-9
    nodes = re.findall(r"node +\d+ \((stance|touchdown) [01]{4}\), (?:initial guess|perturbed):", out)
    assert nodes.count("stance") == 6 and nodes.count("touchdown") == 4, out  # 3 contact sets, 2 touchdowns, 2 points
    m = re.search(r"iterations: native (\d+), ours (\d+) \(converged: native True, ours True\)", out)
    assert m and 3 <= int(m.group(1)) < 100 and abs(int(m.group(1)) - int(m.group(2))) <= 1, out
    m = re.search(r"final cost: native ([0-9.]+e[+-][0-9]+), ours ([0-9.]+e[+-][0-9]+)", out)
    assert m, out
    native, ours = float(m.group(1)), float(m.group(2))
    assert ours == pytest.approx(native, rel=1e-6)  # the same problem: ~1e-14 measured
    assert _number(out, "max base position difference ours vs native") < 1e-6  # m
    assert re.search(r"time per iteration: native [0-9.]+ ms, ours [0-9.]+ ms", out), out
    assert png.is_file() or "matplotlib is not installed" in out


def _readme_build_line():
    text = (ROOT / "docs" / "c-abi.md").read_text(encoding="utf-8")
    (line,) = [x.strip() for x in text.splitlines() if "examples/c_controller/main.c" in x and x.startswith("    cc")]
    return line.split("&&")[0].split()


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_c_controller(tmp_path):
    cmd = _readme_build_line()  # cc -O2 -std=c99 -I generated examples/c_controller/main.c ... -lm
    assert cmd[0] == "cc" and cmd[-1] == "-lm"
    exe = tmp_path / "ctrl"
    _run([CC, *cmd[1:], "-Wall", "-Wextra", "-Werror", "-o", str(exe)])
    out = _run([str(exe), "2000"])
    assert "2000 ticks" in out
    assert _number(out, "max tracking error") < 5e-3
    m = re.search(r"p50 (\d+)\s+p99 (\d+)\s+max (\d+)", out)
    assert m and 0 < int(m.group(1)) <= int(m.group(2)) <= int(m.group(3))
    res = subprocess.run([str(exe), "0"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "usage" in res.stderr

"""The benchmark's derivative rows (`make bench`, `make bench-robots`: inverse_dynamics_derivatives and
forward_dynamics_derivatives against Pinocchio's computeRNEADerivatives and computeABADerivatives),
without timing and without compiling Pinocchio: the robot header the C harness includes, the figures
read from timing summaries, and the table with its target."""
from __future__ import annotations

import pytest

from benchmarks.robot import kernel_set, robot_header_text
from benchmarks.tables import CONTROLLER_ROWS, controller_rows
from benchmarks.timing import summarize
from benchmarks.urdf_robots import DERIVATIVE_KEYS, derivative_figures, derivative_table

pytestmark = pytest.mark.unit

HEADER = """void bot_jacobian(const double *q, const double *p, int ee, int frame, double *J);
void bot_inverse_dynamics_derivatives(const double *q, const double *v, const double *a, const double *p,
                                      double *dtau_dq, double *dtau_dv);
void bot_forward_dynamics_derivatives(const double *q, const double *v, const double *tau, const double *p,
                                      double *dddq_dq, double *dddq_dv, double *Minv);
"""


def _kernels(tmp_path, derivatives=True):
    text = HEADER if derivatives else HEADER.split("void bot_inverse")[0]
    (tmp_path / "bot_kernels.h").write_text(text)
    (tmp_path / "bot_kernels.c").write_text("")
    return kernel_set(tmp_path, "bot", ("tool",))


def test_robot_header_names_the_derivative_kernels(tmp_path):
    ks = _kernels(tmp_path)
    assert ks.has_derivatives
    text = robot_header_text(ks)
    for line in ("#define BR_HAVE_DERIVATIVES 1",
                 "#define BR_inverse_dynamics_derivatives bot_inverse_dynamics_derivatives",
                 "#define BR_forward_dynamics_derivatives bot_forward_dynamics_derivatives"):
        assert line in text
    (tmp_path / "core").mkdir()  # a build with --kernels core: no derivative kernels, no rows
    core = _kernels(tmp_path / "core", derivatives=False)
    assert not core.has_derivatives and "#define BR_HAVE_DERIVATIVES 0" in robot_header_text(core)
    assert "BR_inverse_dynamics_derivatives" not in robot_header_text(core)


def _res(ours_id, ours_fd, pin_id, pin_fd):
    per_round = {"ours": {"ID_derivatives": ours_id, "FD_derivatives": ours_fd},
                 "pin": {"ID_derivatives": pin_id, "FD_derivatives": pin_fd}}
    return dict(per_round=per_round, summary=summarize(per_round))


def test_derivative_figures_and_table():
    g = derivative_figures(_res([100.0, 120.0, 110.0], [300.0, 200.0, 250.0], [1000.0] * 3, [500.0, 500.0, 1000.0]))
    assert g["ID_derivatives"] == (110.0, 1000.0) and g["FD_derivatives"] == (250.0, 500.0)
    assert g["spread"]["ID_derivatives"] == (0.1, 0.12) and g["spread"]["FD_derivatives"] == (0.25, 0.6)
    lines, missed = derivative_table([dict(name="bot", ndof=3, derivatives=g), dict(name="core", ndof=3)])
    assert "| bot | 3 | 110 / 1,000 = **0.11** [0.10-0.12] | 250 / 500 = **0.5** [0.25-0.60] |" in lines
    assert missed == ["bot FD_derivatives: 0.5 (target <= 0.3)"]
    assert not any(ln.startswith("| core") for ln in lines)
    assert derivative_table([dict(name="core", ndof=3)]) == ([], [])


def test_make_bench_controller_rows_include_the_derivatives():
    summary = summarize(_res([100.0], [200.0], [1000.0], [800.0])["per_round"])
    rows = {r[0]: r for r in controller_rows(summary)}
    assert {k for k, *_ in CONTROLLER_ROWS} >= set(DERIVATIVE_KEYS)
    assert rows["ID_derivatives"][1:3] == (100.0, 1000.0) and rows["FD_derivatives"][1:3] == (200.0, 800.0)
    assert "ID" not in rows  # a kernel neither harness timed has no row

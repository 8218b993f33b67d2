"""The benchmark's identification rows (`make bench-robots`: regressor and base_regressor against
Pinocchio's computeJointTorqueRegressor), without timing and without compiling Pinocchio: the robot
header the C harness includes, the figures read from a generated header and the timing summaries,
and the table with its targets."""
from __future__ import annotations

from types import SimpleNamespace
import pytest

from benchmarks.robot import kernel_set, robot_header_text
from benchmarks.timing import summarize
from benchmarks.urdf_robots import regressor_figures, regressor_table

pytestmark = pytest.mark.unit

HEADER = """#define BOT_NPI 33
#define BOT_NBASE 21
void bot_jacobian(const double *q, const double *p, int ee, int frame, double *J);
void bot_regressor(const double *q, const double *dq, const double *ddq, const double *p, double *Y);
void bot_base_regressor(const double *q, const double *dq, const double *ddq, const double *p, double *Yb);
"""


def _kernels(tmp_path, regressor=True):
    text = HEADER if regressor else "\n".join(ln for ln in HEADER.splitlines() if "regressor" not in ln)
    (tmp_path / "bot_kernels.h").write_text(text)
    (tmp_path / "bot_kernels.c").write_text("")
    return kernel_set(tmp_path, "bot", ("tool",))


def test_robot_header_names_the_regressor_kernels(tmp_path):
    ks = _kernels(tmp_path)
    assert ks.has_regressor
    text = robot_header_text(ks)
    for line in ("#define BR_HAVE_REGRESSOR 1", "#define BR_NPI BOT_NPI", "#define BR_NBASE BOT_NBASE",
                 "#define BR_regressor bot_regressor", "#define BR_base_regressor bot_base_regressor"):
        assert line in text
    (tmp_path / "old").mkdir()
    old = _kernels(tmp_path / "old", regressor=False)
    assert not old.has_regressor and "#define BR_HAVE_REGRESSOR 0" in robot_header_text(old)
    assert "BR_NPI" not in robot_header_text(old)


def _res(ours_y, ours_yb, pin_y):
    per_round = {"ours": {"regressor": ours_y, "base_regressor": ours_yb}, "pin": {"regressor": pin_y}}
    return dict(per_round=per_round, summary=summarize(per_round))


def test_regressor_figures_and_table(tmp_path):
    ks = _kernels(tmp_path)
    pmodel = SimpleNamespace(njoints=4)  # universe + 3 joints: Pinocchio's 30 columns
    g = regressor_figures(ks.header, "bot", pmodel, _res([100.0, 120.0, 110.0], [90.0, 60.0, 80.0],
                                                         [1000.0, 1000.0, 500.0]))
    assert (g["npi"], g["nbase"], g["pin_cols"]) == (33, 21, 30)
    assert g["Y"] == (110.0, 1000.0) and g["Yb"] == (80.0, 1000.0)
    assert g["spread_Y"] == (0.1, 0.22) and g["spread_base_full"] == (0.5, 0.9)
    lines, missed = regressor_table([dict(name="bot", ndof=3, regressor=g)])
    assert "| bot | 3 | 33 / 30 | 21 | 110 / 1,000 = **0.11** [0.10-0.22] | 80.0 / 1,000 = **0.08** " \
           "[0.06-0.16] | 80.0 / 110 = **0.727** [0.50-0.90] |" in lines
    assert missed == [] and "Missed (identification): none" in lines


def test_regressor_table_names_the_misses():
    g = dict(npi=33, nbase=21, pin_cols=30, Y=(400.0, 1000.0), Yb=(500.0, 1000.0), spread_Y=None,
             spread_Yb=None, spread_base_full=None)
    lines, missed = regressor_table([dict(name="bot", ndof=3, regressor=g), dict(name="old", ndof=3)])
    assert missed == ["bot regressor: 0.4 (target <= 0.3)", "bot base_regressor / regressor: 1.25 (target <= 1)"]
    assert sum(ln.startswith("| bot |") for ln in lines) == 1 and not any(ln.startswith("| old") for ln in lines)
    assert regressor_table([dict(name="old", ndof=3)]) == ([], [])

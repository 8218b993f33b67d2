"""models/krang.toml against the Krang report's transforms (Zafar 2015,
section 2.1), typed here from the report with its OCR damage repaired:
row 2 of 0T1 is [-1 0 0 0], the repeated 2T3 blocks are dropped. Each iTj(q)
built from the model file must equal the report's, and every report
rotation satisfies R^T dR/dq = hat(e) with the report's axis e (section 2.2).
"""
import sympy as sp
import pytest

from codegen.derive.kinematics import Kinematics
from codegen.read.model import load_model
from codegen.derive.program import Program
from codegen.derive.spatial import hat
from codegen.derive.symbols import Symbols
from tests.conftest import ROOT

pytestmark = pytest.mark.unit

q = sp.Symbol("q", real=True)
c, s = sp.cos(q), sp.sin(q)
L = sp.symbols("L1:10", real=True)

# (rotation rows, origin, axis e) of iTj per frame key, as printed in the report.
ARM = {  # 4T5 ... 9T10, the same for both arms
    "5": ([[-1, 0, 0], [0, -c, -s], [0, -s, c]], [0, 0, 0], [-1, 0, 0]),
    "6": ([[-c, 0, s], [0, -1, 0], [s, 0, c]], [0, -L[6], 0], [0, -1, 0]),
    "7": ([[-1, 0, 0], [0, -c, -s], [0, -s, c]], [0, 0, 0], [-1, 0, 0]),
    "8": ([[-c, 0, s], [0, -1, 0], [s, 0, c]], [0, -L[7], 0], [0, -1, 0]),
    "9": ([[-1, 0, 0], [0, -c, -s], [0, -s, c]], [0, 0, 0], [-1, 0, 0]),
    "10": ([[-c, -s, 0], [0, 0, -1], [s, -c, 0]], [0, -L[8], 0], [0, 0, -1]),
}
REPORT = {
    "1": ([[0, s, -c], [-1, 0, 0], [0, c, s]], [0, 0, 0], [-1, 0, 0]),
    "2": ([[1, 0, 0], [0, c, s], [0, -s, c]], [0, L[0], -L[1]], [-1, 0, 0]),
    "3": ([[-c, 0, s], [0, 1, 0], [-s, 0, -c]], [0, L[2], L[3]], [0, -1, 0]),
    "4l": ([[0, 1, 0], [c, 0, -s], [-s, 0, -c]], [L[5], L[4], 0], [0, -1, 0]),
    "4r": ([[0, -1, 0], [c, 0, -s], [s, 0, c]], [-L[5], L[4], 0], [0, -1, 0]),
}
for side in "lr":
    REPORT.update({k + side: v for k, v in ARM.items()})


def test_report_rotations_turn_about_their_axis():
    for key, (rows, _, e) in REPORT.items():
        R = sp.Matrix(rows)
        assert sp.simplify(R.T * R - sp.eye(3)) == sp.zeros(3), key
        assert sp.simplify(R.T * R.diff(q) - hat(e)) == sp.zeros(3), key


def test_model_file_reproduces_the_report_transforms():
    model = load_model(ROOT / "models" / "krang.toml")
    assert sorted(f.key for f in model.frames) == sorted(REPORT)
    syms = Symbols(model)
    kin = Kinematics(model, syms, Program())
    geometry = {syms.params[f"L{i + 1}"]: L[i] for i in range(9)}
    for f in model.frames:
        rows, origin, e = REPORT[f.key]
        trig = {syms.c[f.index]: c, syms.s[f.index]: s}
        R, P = sp.eye(3), sp.zeros(3, 1)
        for Rs, rs in reversed(kin.stages(f.key)):  # parent -> child
            P = P + R * sp.Matrix(rs)
            R = R * Rs
        R, P = R.xreplace(trig), P.xreplace(geometry)
        assert sp.simplify(R - sp.Matrix(rows)) == sp.zeros(3), f.key
        assert P == sp.Matrix(origin), f.key
        assert list(f.axis) == e, f.key
        assert f.type == "revolute"

"""codegen/read/urdf_numbers.py: rpy against Pinocchio's rpyToMatrix, snapping of
rotations, axes and origins to exact 0 and +-1 (and where it must not snap), the
bound on origins. The URDF reader as a whole: tests/test_urdf.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from codegen.read.model import ModelError, unit_axis
from codegen.read.urdf_numbers import ORIGIN_SNAP_TOL, SNAP_TOL, axis, origin, rotation, rpy_matrix

pytestmark = pytest.mark.unit

pin = pytest.importorskip("pinocchio")


def test_rpy_matches_pinocchio():
    rng = np.random.default_rng(3)
    for rpy in rng.uniform(-math.pi, math.pi, size=(50, 3)):
        assert np.abs(rpy_matrix(rpy) - pin.rpy.rpyToMatrix(*rpy)).max() <= 1e-15


def test_rounded_quarter_turns_snap_to_exact_rotations():
    # URDFs write pi/2 to 11 digits: within SNAP_TOL of the exact quarter turn
    R = rpy_matrix((1.57079632679, 0, -1.57079632679))
    exact = pin.rpy.rpyToMatrix(math.pi / 2, 0, -math.pi / 2)
    assert np.abs(R - exact).max() <= SNAP_TOL
    out = rotation(R, True, "test")
    assert out == sp.Matrix(np.rint(exact).astype(int).tolist()) and all(x.is_Integer for x in out)
    kept = rotation(R, False, "test")
    assert [float(x) for x in kept] == [float(x) for x in R.flatten()]  # exact doubles, nothing snapped


def test_a_rotation_off_the_axes_is_not_snapped():
    R = rpy_matrix((0.3, 1e-10, 0))  # a roll of 0.3 and a pitch within SNAP_TOL of 0
    out = rotation(R, True, "test")
    assert out[0, 0] == 1 and out[2, 0] == 0 and out[0, 1] == 0  # the x axis: its row and column snap
    assert not out[1, 1].is_Integer and float(out[1, 1]) == R[1, 1] == math.cos(0.3)  # the rest: exact doubles
    assert np.abs(np.array(out.tolist(), dtype=float) - R).max() <= SNAP_TOL


def test_axes_normalized_and_snapped():
    assert axis((1e-12, 0, -3), True, "test") == (0, 0, -1)
    ax = axis((1e-12, 0, -3), False, "test")
    assert ax[0] != 0 and abs(sum(float(a) ** 2 for a in ax) - 1) <= 1e-15
    diag = axis((0, 1, 1), True, "test")
    assert diag[0] == 0 and abs(float(diag[1]) - math.sqrt(0.5)) <= 1e-16
    # the fixed point of model.unit_axis: the TOML written from it loads to the same numbers
    assert unit_axis([float(x) for x in diag], "test") == diag
    with pytest.raises(ModelError, match="zero length"):
        axis((0, 1e-9, 0), True, "joint 'j'")


def test_origins_snap_tiny_entries_and_are_bounded():
    p = origin(np.array([ORIGIN_SNAP_TOL / 2, 0.5, 2.0]), True, "test")
    assert p == (0, sp.Float(0.5, precision=53), 2) and p[0].is_Integer and p[2].is_Integer
    assert origin(np.array([ORIGIN_SNAP_TOL / 2, 0.5, 2.0]), False, "test")[0] != 0
    with pytest.raises(ModelError, match="lies beyond"):
        origin(np.array([0.0, 1e300, 0.0]), True, "joint 'j'")
    with pytest.raises(ModelError, match="lies beyond"):
        origin(np.array([0.0, math.nan, 0.0]), True, "joint 'j'")


def test_snapped_rotations_are_rotations():
    for rpy in np.random.default_rng(5).integers(-2, 3, size=(30, 3)) * (math.pi / 2):
        out = rotation(rpy_matrix(rpy), True, "test")
        assert all(x.is_Integer for x in out) and out * out.T == sp.eye(3) and out.det() == 1

"""A free-flying base's quaternion at the Python boundary.

q[3:7] is the base's orientation (x, y, z, w). Every kernel reads it
normalized, q/|q| (codegen/derive/kinematics.py base_rotation, integrate in
templates/c/kernels.c.j2), so any finite non-zero quaternion is a rotation
and is accepted. The degenerate ones are refused with a ValueError naming
q[3:7] (q[i, 3:7] in a batch): zero (every kernel but compute_A returned
NaN), a squared norm that underflows (zero or subnormal) or overflows.
NaN and inf are refused by the finiteness check, naming the entry.

The tiny floating robot (tests/models/floating_tiny.urdf), without the
optional kernels and for this CPU only: its module builds in seconds.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

pytestmark = pytest.mark.builds

VECTORS = ("dq", "ddq", "tau", "v")


@pytest.fixture(scope="module")
def tiny(floating_tiny_module):
    return floating_tiny_module


def _state(m, nb=None):
    rng = np.random.default_rng(5)
    shape = (m.N_Q,) if nb is None else (nb, m.N_Q)
    q = rng.uniform(-1, 1, size=shape)
    q[..., 3:7] /= np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    return q, rng.uniform(-1, 1, size=shape[:-1] + (m.N_DOF,))


def _calls(m):
    """Every public function whose first argument is q: name -> call(q, vector)."""
    calls = {}
    for name in m.__all__:
        f = getattr(m, name)
        if not callable(f):
            continue
        params = list(inspect.signature(f).parameters)
        if params[:1] != ["q"]:
            continue
        extra = {"ee": 0, "dt": 0.01}

        def call(q, vec, f=f, params=params, extra=extra):
            fext = np.zeros(np.shape(vec)[:-1] + (6 * m.N_BODIES,))  # the *_fext kernels' forces
            extra = {**extra, "fext": fext}
            args = [q] + [vec if p in VECTORS else extra[p] for p in params[1:] if p in VECTORS or p in extra]
            return f(*args)
        calls[name] = call
    assert {"compute_A", "compute_Q", "fk", "integrate", "compute_all"} <= set(calls)
    return calls


DEGENERATE = {
    "zero": [0.0, 0.0, 0.0, 0.0],
    "negative zero": [-0.0, 0.0, -0.0, 0.0],
    "squared norm underflows to 0": [1e-170, -1e-170, 0.0, 1e-170],
    "subnormal squared norm": [0.0, 1e-160, 0.0, 0.0],
    "squared norm overflows": [1e155, 0.0, 0.0, 1e155],
    "squared norm within a factor 2 of overflowing": [0.0, 0.0, 1e154, 0.0],
}


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_degenerate_quaternion_is_refused_everywhere(tiny, case):
    q, vec = _state(tiny)
    q[3:7] = DEGENERATE[case]
    for name, call in _calls(tiny).items():
        with pytest.raises(ValueError, match=r"^q\[3:7\] .*quaternion"):
            call(q, vec)
            pytest.fail(f"{name} accepted the quaternion {DEGENERATE[case]}")


def test_degenerate_quaternion_in_a_batch_names_its_row(tiny):
    q, vec = _state(tiny, nb=4)
    q[2, 3:7] = 0.0
    for name, call in _calls(tiny).items():
        with pytest.raises(ValueError, match=r"^q\[2, 3:7\] .*quaternion"):
            call(q, vec)
            pytest.fail(f"{name} accepted a zero quaternion in row 2")


def test_not_finite_quaternion_names_the_entry(tiny):
    q, vec = _state(tiny)
    for bad in (np.nan, np.inf, -np.inf):
        q2 = q.copy()
        q2[5] = bad
        for call in _calls(tiny).values():
            with pytest.raises(ValueError, match=r"q\[5\] is"):
                call(q2, vec)


@pytest.mark.parametrize("scale", [2.7, 1e-150, 1e150, 3e153])
def test_non_unit_quaternion_is_accepted_and_normalized(tiny, scale):
    """Not degenerate: the same numbers as the unit quaternion (the kernels normalize)."""
    q, vec = _state(tiny)
    scaled = q.copy()
    scaled[3:7] *= scale
    for name, call in _calls(tiny).items():
        want, got = call(q, vec), call(scaled, vec)
        if isinstance(want, dict):
            want, got = np.concatenate([w.ravel() for w in want.values()]), np.concatenate(
                [g.ravel() for g in got.values()])
        assert np.all(np.isfinite(got)), name
        err = np.max(np.abs(got - want)) / (1 + np.max(np.abs(want)))
        assert err <= 1e-13, (name, err)

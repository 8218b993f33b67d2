"""The interleaved batch layout at the Python boundary (issue #36): compute_A / compute_C with
layout="interleaved" (compute_A also packed), cholesky_batch_interleaved, solve_batch_interleaved
and unpack_interleaved, as every generated module has them (templates/python/module.pyx.j2 from
the ABI's INTERLEAVED functions, codegen/emit/python_module.py).

Unpacked, the interleaved results equal the row-major batch state by state (the same statements,
the same SIMD width: to rounding, as tests/test_batch_interleaved.py checks the C), the factors and
solutions numpy.linalg.cholesky / numpy.linalg.solve; the padding lanes repeat the last state.
Krang's module (krang_kernels) and the tiny free-floating robot (tests/models/floating_tiny.urdf,
its module built for this CPU in seconds). Wrong arguments are refused with one error naming them.
"""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.builds

SIZES = (1, 7, 8, 9, 17)
TOL = 1e-12  # relative to the largest entry: the same statements, SIMD widths apart


@pytest.fixture(scope="module", params=["krang", "floating_tiny"])
def m(request):
    if request.param == "krang":
        return pytest.importorskip("krang_kernels._kernels")
    return request.getfixturevalue("floating_tiny_module")  # tests/conftest.py


def _states(m, n, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, size=(n, m.N_Q))
    if m.N_Q != m.N_DOF:  # a free-flying base: a unit quaternion at q[3:7]
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q, rng.uniform(-1, 1, size=(n, m.N_DOF))


def _close(a, b):
    assert a.shape == b.shape
    assert np.abs(a - b).max() <= TOL * (1 + np.abs(b).max())


def _lanes(arr):
    """Every lane of an interleaved array as rows (padding included): (nblk * 8, K)."""
    return arr.transpose(0, 2, 1).reshape(-1, arr.shape[1])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("packed", [False, True])
def test_compute_A_interleaved_unpacks_to_the_row_major_batch(m, n, packed):
    nv, il = m.N_DOF, m.INTERLEAVE
    q, _ = _states(m, n)
    out = m.compute_A(q, layout="interleaved", packed=packed)
    k = nv * (nv + 1) // 2 if packed else nv * nv
    assert out.shape == (-(-n // il), k, il) and out.dtype == np.float64 and out.flags.c_contiguous
    assert out.ctypes.data % 64 == 0
    A = m.compute_A(q)
    _close(m.unpack_interleaved(out, n, nv, packed=packed), A)
    for i in (0, n - 1):  # and the single-state kernel
        _close(m.unpack_interleaved(out, n, nv, packed=packed)[i], m.compute_A(q[i]))
    lanes = _lanes(out)
    assert (lanes[n:] == lanes[n - 1]).all(), "the padding lanes repeat the last state"
    if packed:
        i, j = np.tril_indices(nv)
        _close(lanes[:n], A[:, i, j])


@pytest.mark.parametrize("n", SIZES)
def test_compute_C_interleaved_unpacks_to_the_row_major_batch(m, n):
    nv = m.N_DOF
    q, dq = _states(m, n, 1)
    out = m.compute_C(q, dq, layout="interleaved")
    assert out.shape == (-(-n // m.INTERLEAVE), nv * nv, m.INTERLEAVE)
    _close(m.unpack_interleaved(out, n, nv), m.compute_C(q, dq))
    _close(m.unpack_interleaved(out, n, nv)[n - 1], m.compute_C(q[n - 1], dq[n - 1]))


@pytest.mark.parametrize("n", SIZES)
def test_cholesky_and_solve_equal_numpy(m, n):
    nv = m.N_DOF
    q, b = _states(m, n, 2)
    A = m.compute_A(q)
    L = m.cholesky_batch_interleaved(m.compute_A(q, layout="interleaved", packed=True), n)
    assert L.shape == (-(-n // m.INTERLEAVE), nv * (nv + 1) // 2, m.INTERLEAVE)
    _close(np.tril(m.unpack_interleaved(L, n, nv, packed=True)), np.linalg.cholesky(A))
    x = m.solve_batch_interleaved(L, b)
    assert x.shape == (n, nv)
    ref = np.linalg.solve(A, b[..., None])[..., 0]
    assert np.abs(x - ref).max() <= 1e-9 * (1 + np.abs(ref).max())


def test_out_is_written_in_place_and_returned(m):
    nv, n = m.N_DOF, 9
    q, b = _states(m, n, 3)
    k = nv * (nv + 1) // 2
    out = np.full((2, k, m.INTERLEAVE), np.nan)
    assert m.compute_A(q, out=out, layout="interleaved", packed=True) is out
    assert np.isfinite(out).all()
    fresh = m.compute_A(q, layout="interleaved", packed=True)
    assert (out == fresh).all()
    assert m.cholesky_batch_interleaved(out, n, out=out) is out  # in place
    _close(out, m.cholesky_batch_interleaved(fresh, n))
    x = b.copy()
    assert m.solve_batch_interleaved(out, x, out=x) is x
    _close(x, m.solve_batch_interleaved(out, b))


def test_empty_batch(m):
    q = np.empty((0, m.N_Q))
    out = m.compute_A(q, layout="interleaved", packed=True)
    assert out.shape == (0, m.N_DOF * (m.N_DOF + 1) // 2, m.INTERLEAVE)
    assert m.unpack_interleaved(out, 0, m.N_DOF, packed=True).shape == (0, m.N_DOF, m.N_DOF)


def test_bad_arguments_are_refused(m):
    nv, il, n = m.N_DOF, m.INTERLEAVE, 9
    q, dq = _states(m, n, 4)
    k = nv * (nv + 1) // 2
    with pytest.raises(ValueError, match="layout must be"):
        m.compute_A(q, layout="interleave")
    with pytest.raises(ValueError, match="layout must be"):
        m.compute_C(q, dq, layout="column-major")
    with pytest.raises(ValueError, match="needs a batch"):
        m.compute_A(q[0], layout="interleaved")
    with pytest.raises(ValueError, match="needs layout='interleaved'"):
        m.compute_A(q, packed=True)
    with pytest.raises(TypeError, match="packed must be a bool"):
        m.compute_A(q, layout="interleaved", packed=1)
    with pytest.raises(TypeError):
        m.compute_C(q, dq, layout="interleaved", packed=True)  # no packed form: no such argument
    with pytest.raises(TypeError, match="positional arguments"):
        m.compute_A(q, None, None, "interleaved")  # keyword-only
    with pytest.raises(ValueError, match=r"out must have shape \(2, %d, %d\)" % (k, il)):
        m.compute_A(q, layout="interleaved", packed=True, out=np.empty((2, nv * nv, il)))
    with pytest.raises(ValueError, match="out must have shape"):
        m.compute_A(q, layout="interleaved", out=np.empty((n, nv, nv)))  # a row-major out
    with pytest.raises(ValueError, match="C-contiguous"):
        m.compute_A(q, layout="interleaved", packed=True, out=np.empty((2, il, k)).transpose(0, 2, 1))
    with pytest.raises(TypeError, match="float64"):
        m.compute_A(q, layout="interleaved", packed=True, out=np.empty((2, k, il), dtype=np.float32))
    with pytest.raises(ValueError, match="q must have shape"):
        m.compute_A(q[:, :-1], layout="interleaved")
    A = m.compute_A(q, layout="interleaved", packed=True)
    with pytest.raises(ValueError, match=r"A must have shape \(1, %d, %d\)" % (k, il)):
        m.cholesky_batch_interleaved(A, 8)  # 9 states are two blocks
    with pytest.raises(ValueError, match=r"A must have shape"):
        m.cholesky_batch_interleaved(m.compute_A(q, layout="interleaved"), n)  # full, not packed
    with pytest.raises(ValueError, match="n must be an int"):
        m.cholesky_batch_interleaved(A, -1)
    with pytest.raises(TypeError, match="A must hold real numbers"):
        m.cholesky_batch_interleaved(A.astype(complex), n)
    L = m.cholesky_batch_interleaved(A, n)
    with pytest.raises(ValueError, match="b must have shape"):
        m.solve_batch_interleaved(L, dq[:, :-1])
    with pytest.raises(ValueError, match="L must have shape"):
        m.solve_batch_interleaved(L, dq[:8])
    bad = L.copy()
    bad[1, 0, 3] = np.nan
    with pytest.raises(ValueError, match=r"L\[1, 0, 3\] is nan"):
        m.solve_batch_interleaved(bad, dq)
    with pytest.raises(ValueError, match="out must have shape"):
        m.solve_batch_interleaved(L, dq, out=np.empty((n, nv + 1)))
    with pytest.raises(ValueError, match="arr must have shape"):
        m.unpack_interleaved(A, n, nv)  # packed data read as full
    with pytest.raises(ValueError, match="n must be an int"):
        m.unpack_interleaved(A, -1, nv, packed=True)


def test_inputs_are_converted_like_every_batch(m):
    """Lists, other real dtypes and strided inputs are copied, as the row-major batch's are."""
    n = 8
    q, b = _states(m, n, 5)
    ref = m.compute_A(q, layout="interleaved", packed=True)
    wide = np.zeros((n, 2 * m.N_Q))
    wide[:, ::2] = q
    assert (m.compute_A(wide[:, ::2], layout="interleaved", packed=True) == ref).all()
    L = m.cholesky_batch_interleaved(ref.tolist(), n)
    assert (L == m.cholesky_batch_interleaved(ref, n)).all()
    assert (m.solve_batch_interleaved(L, b.tolist()) == m.solve_batch_interleaved(L, b)).all()

"""Lane-interleaved batch kernels (issue #36): PFX_compute_A_batch_interleaved
(full and packed lower triangle), PFX_compute_C_batch_interleaved and their
consumer PFX_cholesky_batch_interleaved / PFX_solve_batch_interleaved.

Layout (codegen/emit/abi.py, INTERLEAVED_LAYOUT): block b holds states
8b .. 8b + 7, element k of state 8b + l at out[(b * K + k) * 8 + l], whatever
the build's lane count; the padding lanes of the last block repeat the last
state. Checked state by state against the scalar kernel of the same library
(itself checked against Pinocchio in tests/test_against_pinocchio.py), the
factors and solutions against numpy.linalg.cholesky / numpy.linalg.solve, in
the portable loop (-DKKNOSIMD), the target_clones build the Python module uses,
an AVX2 build (4 lanes: two vector groups per block) and an AVX-512 build
(8 lanes), all with -Wall -Wextra -Werror (reference.abi_ctypes.CFLAGS)."""
from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codegen.emit.abi import INTERLEAVE, STREAM_BYTES
from codegen.read.model import load_model
from reference.abi_ctypes import CFLAGS, Library, build, compile_shared

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
MINI = (ROOT / "tests" / "models" / "mini.toml", ROOT / "tests" / "models" / "mini_params.toml")
SIZES = (1, 7, 8, 9, 17)
_D = ctypes.POINTER(ctypes.c_double)
BUILDS = {"nosimd": ["-DKKNOSIMD"], "clones": ["-DKK_TARGET_CLONES"], "avx2": ["-mavx2", "-mfma"],
          "avx512": ["-mavx512f", "-mfma"]}


def _cpu_has(flag: str) -> bool:
    try:
        return any(flag in line.split() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except OSError:
        return False


def _skip_unless_runs(flags):
    for need, flag in (("avx2", "-mavx2"), ("avx512f", "-mavx512f")):
        if flag in flags and not _cpu_has(need):
            pytest.skip(f"the CPU has no {need}")


_LIBS = {}


@pytest.fixture(scope="module", params=list(BUILDS))
def mini(request, tmp_path_factory):
    _skip_unless_runs(BUILDS[request.param])
    if request.param not in _LIBS:
        _LIBS[request.param] = build(*MINI, tmp_path_factory.mktemp(request.param),
                                     [*CFLAGS, "-O3", "-ffp-contract=fast", *BUILDS[request.param]])
    return _LIBS[request.param]


def _ptr(a):
    return a.ctypes.data_as(_D)


def _fn(lib, name):
    return getattr(lib.lib, lib.abi.prefix + name)


def _interleaved(lib, name, n, inputs, p, k, packed=None, extra_blocks=1):
    """Call an interleaved kernel; the output array has an extra NaN block that must stay NaN."""
    nb = -(-n // INTERLEAVE) if n > 0 else 0
    out = np.full((nb + extra_blocks, k, INTERLEAVE), np.nan)
    args = [n, *[_ptr(x) for x in inputs], _ptr(p)] + ([packed] if packed is not None else []) + [_ptr(out)]
    _fn(lib, name)(*args)
    assert np.isnan(out[nb:]).all(), "wrote past the last block"
    return out[:nb]


def unpack(out, n, nv, packed):
    """(n, NV, NV) matrices from an interleaved output (ceil(n/8), K, 8); packed: symmetric from the lower triangle."""
    states = out.transpose(0, 2, 1).reshape(-1, out.shape[1])[:n]
    if not packed:
        return states.reshape(n, nv, nv)
    m = np.zeros((n, nv, nv))
    i, j = np.tril_indices(nv)
    m[:, i, j] = states
    m[:, j, i] = states
    return m


def _states(rng, n, width, scale):
    return np.ascontiguousarray(rng.uniform(-scale, scale, (n, width)))


def _close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * max(np.abs(want).max(), 1e-300), err_msg=what)


def _check_A_C(lib, rng, sizes=SIZES):
    nv, nq = lib.model.ndof, lib.model.nq
    p = np.ascontiguousarray(lib.default_params() * rng.uniform(0.8, 1.2, lib.abi.nparams))
    for n in sizes:
        q, dq = _states(rng, n, nq, 7.0), _states(rng, n, nv, 3.0)
        if nq != nv:  # a free-flying base: unit quaternions
            quat = rng.normal(size=(n, 4))
            q[:, 3:7] = quat / np.linalg.norm(quat, axis=1)[:, None]
        nb = -(-n // INTERLEAVE)
        last = [min(s, n - 1) for s in range(nb * INTERLEAVE)]  # the padding lanes: the last state again
        for packed in (0, 1):
            k = nv * (nv + 1) // 2 if packed else nv * nv
            out = _interleaved(lib, "compute_A_batch_interleaved", n, [q], p, k, packed)
            got = unpack(out, nb * INTERLEAVE, nv, packed)
            for s, r in enumerate(last):
                _close(got[s], lib.compute_A(q[r], p), f"A packed={packed} n={n} lane {s}")
        out = _interleaved(lib, "compute_C_batch_interleaved", n, [q, dq], p, nv * nv)
        got = unpack(out, nb * INTERLEAVE, nv, False)
        for s, r in enumerate(last):
            _close(got[s], lib.compute_C(q[r], dq[r], p), f"C n={n} lane {s}")


def test_interleaved_equals_scalar(mini):
    _check_A_C(mini, np.random.default_rng(36))


def test_nonpositive_n_writes_nothing(mini):
    nv, p = mini.model.ndof, np.ascontiguousarray(mini.default_params())
    q = np.zeros((1, mini.model.nq))
    for n in (0, -3):
        out = np.full((1, nv * nv, INTERLEAVE), np.nan)
        _fn(mini, "compute_A_batch_interleaved")(n, _ptr(q), _ptr(p), 0, _ptr(out))
        _fn(mini, "cholesky_batch_interleaved")(n, _ptr(out), _ptr(out))
        assert np.isnan(out).all()


def test_avx2_and_avx512_builds_write_the_same_layout(tmp_path_factory):
    """4 lanes (two vector groups per block) and 8 lanes (one): the same array, to rounding."""
    for flags in BUILDS.values():
        _skip_unless_runs(flags)
    libs = {tag: _LIBS.get(tag) or build(*MINI, tmp_path_factory.mktemp(tag), [*CFLAGS, "-O3", "-ffp-contract=fast", *BUILDS[tag]])
            for tag in ("avx2", "avx512")}
    rng = np.random.default_rng(8)
    nv, nq = libs["avx2"].model.ndof, libs["avx2"].model.nq
    p = np.ascontiguousarray(libs["avx2"].default_params())
    q = _states(rng, 17, nq, 3.0)
    for packed in (0, 1):
        k = nv * (nv + 1) // 2 if packed else nv * nv
        a2, a8 = (_interleaved(lib, "compute_A_batch_interleaved", 17, [q], p, k, packed) for lib in libs.values())
        _close(a2, a8, f"packed={packed}")


def test_streamed_output_equals_the_plain_stores(mini):
    """An output of STREAM_BYTES or more, 64-byte aligned, goes out with non-temporal stores (AVX builds):
    the same values as the same call on a misaligned array (plain stores) and as the scalar kernel."""
    nv, nq = mini.model.ndof, mini.model.nq
    k = nv * nv
    n = STREAM_BYTES // (8 * k) + 3  # just above the threshold, a partial last block
    nb = -(-n // INTERLEAVE)
    rng = np.random.default_rng(3)
    q, p = _states(rng, n, nq, 3.0), np.ascontiguousarray(mini.default_params())
    size = nb * k * INTERLEAVE
    raw, raw2 = np.full(size + 16, np.nan), np.full(size + 16, np.nan)
    first, second = (-raw.ctypes.data % 64) // 8, (-raw2.ctypes.data % 64) // 8 + 1
    aligned, plain = raw[first:first + size], raw2[second:second + size]  # plain: 8 bytes past 64, never streamed
    assert aligned.ctypes.data % 64 == 0 and plain.ctypes.data % 64 != 0 and aligned.nbytes >= STREAM_BYTES
    _fn(mini, "compute_A_batch_interleaved")(n, _ptr(q), _ptr(p), 0, _ptr(aligned))
    _fn(mini, "compute_A_batch_interleaved")(n, _ptr(q), _ptr(p), 0, _ptr(plain))
    np.testing.assert_array_equal(aligned, plain)
    got = unpack(aligned.reshape(nb, k, INTERLEAVE), n, nv, False)
    for s in (0, n // 2, n - 1):
        _close(got[s], mini.compute_A(q[s], p), f"state {s}")


def _spd_blocks(lib, rng, n):
    nv = lib.model.ndof
    p = np.ascontiguousarray(lib.default_params())
    q = _states(rng, n, lib.model.nq, 3.0)
    a = _interleaved(lib, "compute_A_batch_interleaved", n, [q], p, nv * (nv + 1) // 2, 1)
    return q, p, a


def test_cholesky_and_solve_against_numpy(mini):
    nv = mini.model.ndof
    rng = np.random.default_rng(11)
    for n in SIZES:
        q, p, a = _spd_blocks(mini, rng, n)
        k = nv * (nv + 1) // 2
        L = np.full_like(a, np.nan)
        _fn(mini, "cholesky_batch_interleaved")(n, _ptr(a), _ptr(L))
        inplace = a.copy()
        _fn(mini, "cholesky_batch_interleaved")(n, _ptr(inplace), _ptr(inplace))
        np.testing.assert_array_equal(inplace, L)
        b = _states(rng, n, nv, 1.0)
        x = np.full_like(b, np.nan)
        _fn(mini, "solve_batch_interleaved")(n, _ptr(L), _ptr(b), _ptr(x))
        xb = b.copy()
        _fn(mini, "solve_batch_interleaved")(n, _ptr(L), _ptr(xb), _ptr(xb))
        np.testing.assert_array_equal(xb, x)
        factors = L.transpose(0, 2, 1).reshape(-1, k)
        i, j = np.tril_indices(nv)
        for s in range(n):
            m = mini.compute_A(q[s], p)
            want = np.linalg.cholesky(m)
            np.testing.assert_allclose(factors[s], want[i, j], rtol=0, atol=1e-12 * np.abs(want).max())
            np.testing.assert_allclose(x[s], np.linalg.solve(m, b[s]), rtol=1e-10, atol=1e-12 * np.abs(x[s]).max())


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_in_its_lane_only(mini):
    nv = mini.model.ndof
    n = 9
    q, p, a = _spd_blocks(mini, np.random.default_rng(12), n)
    good = np.full_like(a, np.nan)
    _fn(mini, "cholesky_batch_interleaved")(n, _ptr(a), _ptr(good))
    bad = a.copy()
    last = nv * (nv + 1) // 2 - 1  # the last diagonal entry of state 3 (block 0, lane 3)
    bad[0, last, 3] = -1.0
    L = np.full_like(a, np.nan)
    _fn(mini, "cholesky_batch_interleaved")(n, _ptr(bad), _ptr(L))
    assert np.isnan(L[0, last, 3])
    keep = np.ones_like(L, dtype=bool)
    keep[0, last, 3] = False
    np.testing.assert_array_equal(L[keep], good[keep])


@pytest.mark.robots
def test_krang_interleaved_equals_scalar(tmp_path_factory):
    """The committed Krang C (17 DOF, K = 289 or 153), the machine's build, -O1 as tests/test_batch_kernels.py."""
    so = tmp_path_factory.mktemp("krang") / "libkrang.so"
    lib = Library(load_model(ROOT / "models" / "krang.toml"),
                  compile_shared(ROOT / "generated" / "krang_kernels.c", so, [*CFLAGS, "-O1", "-march=native", "-ffp-contract=fast"]))
    _check_A_C(lib, np.random.default_rng(17), sizes=(1, 9, 17))


FLOATING = ROOT / "tests" / "models" / "floating_tiny.urdf"


def test_floating_base_interleaved_equals_scalar(tmp_path_factory):
    """A free-flying base: q rows of NQ = NDOF + 1, the padded copy of the last block too."""
    from codegen.read.urdf import load_urdf

    out = tmp_path_factory.mktemp("floating")
    subprocess.run([sys.executable, "-m", "codegen", str(FLOATING), "--out", str(out), "--name", "ftiny",
                    "--floating-base"], check=True, capture_output=True, cwd=ROOT)
    robot = load_urdf(FLOATING, name="ftiny", floating_base=True)
    so = compile_shared(out / "ftiny_kernels.c", out / "libftiny.so", [*CFLAGS, "-O2", "-march=native", "-ffp-contract=fast"])
    _check_A_C(Library(robot.model, so, "ftiny"), np.random.default_rng(21))

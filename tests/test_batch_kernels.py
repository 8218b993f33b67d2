"""Batch kernels: PFX_compute_A_batch / PFX_compute_C_batch and the
dynamics' PFX_inverse_dynamics_batch, PFX_bias_batch,
PFX_forward_dynamics_batch equal the scalar kernels state by state, for
every n around the vector width (n = 0, 1, W - 1, W, W + 1 for both lane
counts W the C may choose, 64, 67 and a negative n, which writes nothing), on
the mini model and on Krang, compiled with the vector path (GCC) and with it
turned off (-DKKNOSIMD: the portable loop).

The reference is the scalar kernel of the same library, itself checked
against Pinocchio elsewhere (tests/test_against_pinocchio.py)."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codegen.emit.batch import LANE_CHOICES
from codegen.read.model import load_model
from reference.abi_ctypes import CFLAGS, Library, build, compile_shared

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
MINI = (ROOT / "tests" / "models" / "mini.toml", ROOT / "tests" / "models" / "mini_params.toml")
SIZES = (0, 1, *sorted({n for w in LANE_CHOICES for n in (w - 1, w, w + 1)}), 64, 67)
# batch kernel -> its scalar kernel's per-state inputs (q, dq, and ddq or tau), its number of outputs
# and their size (ndof -> elements per state)
SQUARE = lambda n: n * n  # noqa: E731
KERNELS = {"compute_A": (1, 1, SQUARE), "compute_C": (2, 1, SQUARE), "inverse_dynamics": (3, 1, int),
           "bias": (2, 1, int), "forward_dynamics": (3, 1, int), "inverse_dynamics_derivatives": (3, 2, SQUARE),
           "forward_dynamics_derivatives": (3, 3, SQUARE)}
_D = ctypes.POINTER(ctypes.c_double)


@pytest.fixture(scope="module", params=["simd", "native", "nosimd"])
def libs(request, tmp_path_factory):
    """(mini, krang) libraries: with the vector path for the baseline target
    (4 lanes; mini with target_clones) and for the machine (8 lanes where it
    has AVX-512), the two
    crossed between mini and Krang (Krang's batch kernels take seconds to
    compile, so it is built at -O1, twice), or without the vector path (mini
    only)."""
    # the flags of the shipped build (contraction): fused and unfused lanes must agree too
    base, native = [*CFLAGS, "-O3", "-ffp-contract=fast"], ["-march=native"]
    tmp = tmp_path_factory.mktemp(request.param)
    if request.param == "nosimd":
        return build(*MINI, tmp / "mini", [*base, "-DKKNOSIMD"]), None
    mini_native = request.param == "native"
    # the baseline mini build as the Python extension builds it: target_clones
    # (an AVX2 copy where the CPU has it) with the helpers inlined into each copy
    mini = build(*MINI, tmp / "mini", base + (native if mini_native else ["-DKK_TARGET_CLONES"]))
    # Krang compiled by its first test only (robots tier: tens of seconds each)
    return mini, lambda: _krang(tmp_path_factory, native * (not mini_native))


_KRANG = {}


def _krang(tmp_path_factory, extra):
    if tuple(extra) not in _KRANG:
        so = tmp_path_factory.mktemp("krang") / "libkrang.so"
        flags = [*CFLAGS, "-O1", *extra, "-ffp-contract=fast"]
        _KRANG[tuple(extra)] = Library(load_model(ROOT / "models" / "krang.toml"),
                                       compile_shared(ROOT / "generated" / "krang_kernels.c", so, flags))
    return _KRANG[tuple(extra)]


def _ptr(a):
    return a.ctypes.data_as(_D)


def _batch(lib, name, n, inputs, p, size, nout=1):
    """Call the batch kernel: inputs (n x NDOF arrays), outputs n x size, NaN-filled
    (the array, or a list of nout > 1)."""
    outs = [np.full((max(n, 0) + 1, size), np.nan) for _ in range(nout)]  # one sentinel row past the end
    fn = getattr(lib.lib, f"{lib.abi.prefix}{name}")
    fn.argtypes = [ctypes.c_int] + [_D] * (len(inputs) + 1 + nout)
    fn.restype = None
    fn(n, *[_ptr(x) for x in inputs], _ptr(p), *map(_ptr, outs))
    assert all(np.isnan(out[max(n, 0)]).all() for out in outs), "wrote past the n states"
    outs = [out[:max(n, 0)] for out in outs]
    return outs[0] if nout == 1 else outs


def _check(lib, name, n, inputs, p, nout, size):
    """The batch kernel's outputs equal the scalar kernel's state by state, to 1e-14 of each output's largest."""
    got = _batch(lib, f"{name}_batch", n, inputs, p, size, nout)
    got = [got] if nout == 1 else got
    for k in range(n):
        want = getattr(lib, name)(*[x[k] for x in inputs], p)
        for j, w in enumerate([want] if nout == 1 else want):
            w = np.ravel(w)
            scale = max(np.abs(w).max(), 1e-300)
            np.testing.assert_allclose(got[j][k], w, rtol=0, atol=1e-14 * scale,
                                       err_msg=f"{name} (output {j}): n={n} state {k}")


def _states(rng, n, ndof, scale):
    return np.ascontiguousarray(rng.uniform(-scale, scale, (max(n, 1), ndof)))


@pytest.mark.parametrize("which", [0, pytest.param(1, marks=pytest.mark.robots)], ids=["mini", "krang"])
def test_batch_equals_scalar(libs, which):
    lib = libs[0] if which == 0 else libs[1] and libs[1]()
    if lib is None:
        pytest.skip("Krang: vector path only")
    ndof = lib.model.ndof
    rng = np.random.default_rng(9 + which)
    p = np.ascontiguousarray(lib.default_params() * rng.uniform(0.8, 1.2, lib.abi.nparams))
    for n in SIZES:
        # angles beyond +-pi too (the lane sincos reduces them), and one beyond its
        # polynomial range (libm takes over for that lane)
        q, dq = _states(rng, n, ndof, 7.0), _states(rng, n, ndof, 3.0)
        if n >= 3:
            q[2, 0] = 3.0e5
        if n >= 2:  # friction's sign(dq) at dq = 0 (in some lanes only): 0, as the scalar kernel's
            dq[1, ::2] = 0.0
            dq[n - 1, 0] = 0.0
        third = _states(rng, n, ndof, 5.0)  # ddq (inverse dynamics) or tau (forward dynamics)
        for name, (nin, nout, size) in KERNELS.items():
            _check(lib, name, n, [q, dq, third][:nin], p, nout, size(ndof))


def test_negative_n_writes_nothing(libs):
    lib = libs[0]
    ndof = lib.model.ndof
    q = np.zeros((1, ndof))
    p = lib.default_params()
    assert _batch(lib, "compute_A_batch", -3, [q], p, ndof * ndof).size == 0
    assert _batch(lib, "compute_C_batch", -1, [q, q], p, ndof * ndof).size == 0
    for name, (nin, nout, _) in KERNELS.items():
        assert np.size(_batch(lib, f"{name}_batch", -2, [q] * nin, p, ndof, nout)) == 0


def _macros(*flags) -> dict:
    """The template's configuration macros as gcc's preprocessor sets them for the committed C."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    r = subprocess.run(["gcc", *flags, "-dM", "-E", str(ROOT / "generated" / "krang_kernels.c")],
                       capture_output=True, text=True, check=True)
    return {f[1]: f[2] for f in map(str.split, r.stdout.splitlines()) if len(f) == 3 and f[1].startswith(("KK", "SINCOS"))}


@pytest.mark.parametrize("std", [[], ["-std=gnu17"], ["-std=gnu11"], ["-std=c11"], ["-std=c99"], ["-std=gnu99"]])
def test_vector_path_under_every_c_standard(std):
    """GCC's default GNU C11+ modes set FLT_EVAL_METHOD to 16 (ISO/IEC TS 18661-3), not 0:
    double arithmetic is still exact double, so the vector path and the fast sincos must stay on
    (they silently fell back to the scalar loop and the slower quadrant conversion)."""
    m = _macros(*std, "-O2")
    assert (m["KKDOUBLE"], m["KKSIMD"], m["SINCOSCONVERT"]) == ("1", "1", "0")


def test_x87_excess_precision_turns_the_vector_path_off():
    m = _macros("-O2", "-mfpmath=387")
    assert (m["KKDOUBLE"], m["KKSIMD"], m["SINCOSCONVERT"]) == ("0", "0", "1")


FLOATING = ROOT / "tests" / "models" / "floating_tiny.urdf"


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    """The tiny robot on a free-flying base (q: NQ = NDOF + 1, a unit quaternion), 8 lanes where
    the machine has AVX-512; the batch kernels transpose q by rows of NQ."""
    from codegen.read.urdf import load_urdf

    out = tmp_path_factory.mktemp("floating")
    subprocess.run([sys.executable, "-m", "codegen", str(FLOATING), "--out", str(out), "--name", "ftiny",
                    "--floating-base"], check=True, capture_output=True, cwd=ROOT)
    robot = load_urdf(FLOATING, name="ftiny", floating_base=True)
    so = compile_shared(out / "ftiny_kernels.c", out / "libftiny.so",
                        [*CFLAGS, "-O2", "-march=native", "-ffp-contract=fast"])
    return Library(robot.model, so, "ftiny")


def test_floating_base_batch_equals_scalar(floating):
    lib = floating
    ndof, nq = lib.model.ndof, lib.model.nq
    rng = np.random.default_rng(5)
    p = np.ascontiguousarray(lib.default_params())
    for n in SIZES:
        q = _states(rng, n, nq, 3.0)
        quat = rng.normal(size=(len(q), 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1)[:, None]
        dq, third = _states(rng, n, ndof, 3.0), _states(rng, n, ndof, 5.0)
        if n >= 2:
            dq[1, ::2] = 0.0
        for name, (nin, nout, size) in KERNELS.items():
            _check(lib, name, n, [q, dq, third][:nin], p, nout, size(ndof))


def test_a_split_kernel_has_no_vector_batch():
    """A kernel long enough to be split into chunks (codegen/emit/chunks.py) keeps its chunks;
    its batch loops over it (one vector function that long would not compile in reasonable time)."""
    from codegen.emit.batch import batch
    from codegen.emit.cse import Argument, Kernel

    k = Kernel("forward_dynamics", "", [Argument("q", 2, False), Argument("ddq", 2, True)], {},
               body=[("", "kk_forward_dynamics_chunk0(q, kk_x)"), ("const double t1", "kk_x[0]")],
               writes=[("ddq[0]", "t1"), ("ddq[1]", "t1")])
    assert not batch(k, "forward_dynamics_batch").simd


def _aligned(rows, size):
    """rows x size doubles, NaN, starting on a 64-byte boundary (kk_stream_ok)."""
    buf = np.full(rows * size + 8, np.nan)
    skip = (-buf.ctypes.data % 64) // 8
    out = buf[skip:skip + rows * size].reshape(rows, size)
    assert out.ctypes.data % 64 == 0
    return out


@pytest.mark.skipif(sys.platform != "linux" or " avx2" not in Path("/proc/cpuinfo").read_text(),
                    reason="the streamed stores need AVX (4 lanes: an AVX2 build)")
def test_streamed_batch_outputs_equal_scalar(tmp_path):
    """store_lanes' non-temporal stores (kk_stream_rows: 4 lanes, outputs 64-byte aligned with rows of
    a multiple of 4 elements; any length with -DKKSTREAMBYTES=1) write the scalar kernel's values:
    the tiny free-flyer without its prismatic joint (NDOF 8: 64 elements per matrix), AVX2."""
    urdf = tmp_path / "even.urdf"
    urdf.write_text(FLOATING.read_text().replace('name="slider" type="prismatic"', 'name="slider" type="fixed"'))
    out = tmp_path / "gen"
    subprocess.run([sys.executable, "-m", "codegen", str(urdf), "--out", str(out), "--name", "even",
                    "--floating-base"], check=True, capture_output=True, cwd=ROOT)
    from codegen.read.urdf import load_urdf
    robot = load_urdf(urdf, name="even", floating_base=True)
    so = compile_shared(out / "even_kernels.c", out / "libeven.so",
                        [*CFLAGS, "-O1", "-march=native", "-mno-avx512f", "-ffp-contract=fast", "-DKKSTREAMBYTES=1"])
    lib = Library(robot.model, so, "even")
    ndof, nq = lib.model.ndof, lib.model.nq
    assert ndof * ndof % 4 == 0
    rng = np.random.default_rng(11)
    p = np.ascontiguousarray(lib.default_params())
    fn = getattr(lib.lib, f"{lib.abi.prefix}forward_dynamics_derivatives_batch")
    fn.argtypes = [ctypes.c_int] + [_D] * 7
    fn.restype = None
    for n in (64, 67):
        q = _states(rng, n, nq, 3.0)
        quat = rng.normal(size=(n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1)[:, None]
        dq, tau = _states(rng, n, ndof, 3.0), _states(rng, n, ndof, 5.0)
        outs = [_aligned(n, ndof * ndof) for _ in range(3)]
        fn(n, _ptr(q), _ptr(dq), _ptr(tau), _ptr(p), *map(_ptr, outs))
        for k in range(n):
            want = lib.forward_dynamics_derivatives(q[k], dq[k], tau[k], p)
            for j, w in enumerate(want):
                w = np.ravel(w)
                np.testing.assert_allclose(outs[j][k], w, rtol=0, atol=1e-14 * max(np.abs(w).max(), 1e-300),
                                           err_msg=f"output {j}: n={n} state {k}")

"""The kernels' own vectorized sin/cos (generated sincos_q) over the whole
range of joint angles: exact quadrant boundaries, large angles where the
range reduction is hardest, and beyond 1e5 where libm takes over. Reference:
Pinocchio, which uses libm."""
import numpy as np
import pytest

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")
from codegen.read.model import load_model  # noqa: E402
from reference.pin_reference import build_pin_model, pin_reference  # noqa: E402

MODEL = load_model(__import__("pathlib").Path(__file__).resolve().parents[1] / "models" / "krang.toml")


def _angles():
    rng = np.random.default_rng(7)
    k = np.arange(-40, 41)
    yield "multiples of pi/2", np.resize(k * np.pi / 2, (5, kk.N_DOF))
    yield "next to multiples of pi/4", np.resize(k * np.pi / 4 + 1e-9, (5, kk.N_DOF))
    for scale in (10.0, 1e3, 9.9e4, 1e5, 1.0000001e5, 1e7):
        yield f"|q| up to {scale:g}", rng.uniform(-scale, scale, (5, kk.N_DOF))


@pytest.mark.parametrize("label,qs", list(_angles()), ids=lambda v: v if isinstance(v, str) else "")
def test_kernels_match_pinocchio_over_the_angle_range(label, qs):
    p = kk.default_params()
    pm, _ = build_pin_model(MODEL, p)
    data = pm.createData()
    dq = np.linspace(-1, 1, kk.N_DOF)
    for q in qs:
        ref = pin_reference(pm, data, q, dq)
        for name, ours in (("A", kk.compute_A(q)), ("C", kk.compute_C(q, dq)), ("Q", kk.compute_Q(q)),
                           ("J_left_world", kk.jacobian(q, "left"))):
            err = np.abs(ours - ref[name]).max() / (1 + np.abs(ref[name]).max())
            assert err <= 1e-10, f"{label}: {name} off by {err:.2e} at q={q}"


# ----------------------------------------------------------------------------
# sincos_q under every optimization flag a user may choose
# ----------------------------------------------------------------------------
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

_ROOT = Path(__file__).resolve().parents[1]
_CC = shutil.which("cc") or shutil.which("gcc")
FLAG_SETS = ["-O0", "-O1", "-O2", "-O3", "-Ofast", "-O2 -ffast-math", "-O3 -ffast-math -march=native",
             "-O2 -ffp-contract=fast", "-O2 -funsafe-math-optimizations", "-O3 -march=native"]
if platform.machine() in ("x86_64", "AMD64"):
    FLAG_SETS.append("-O2 -mfpmath=387")  # x87 arithmetic: FLT_EVAL_METHOD == 2
_WRAP = '#include "mini_kernels.c"\nvoid trig(const double *q, double *s, double *c) { sincos_q(q, s, c); }\n'
# The reference (libm) lives in its own translation unit, compiled without
# the flags under test.
_DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
void trig(const double *q, double *s, double *c);
int main(int argc, char **argv)
{
    int n = argc - 1;
    double *q = malloc((n + 3) * sizeof *q), *s = malloc((n + 3) * sizeof *s), *c = malloc((n + 3) * sizeof *c);
    for (int i = 0; i < n + 3; ++i) q[i] = i < n ? strtod(argv[i + 1], 0) : 0.0;
    for (int i = 0; i < n; i += 3) trig(q + i, s + i, c + i);
    for (int i = 0; i < n; ++i) printf("%.17g %.17g %.17g %.17g\n", s[i], c[i], sin(q[i]), cos(q[i]));
    return 0;
}
"""


def _test_angles():
    rng = np.random.default_rng(11)
    k = np.arange(-64, 65)
    qs = [k * math.pi / 4, k * math.pi / 4 + 1e-12, k * math.pi / 4 - 1e-9, rng.uniform(-4, 4, 60),
          rng.uniform(-16, 16, 60), rng.uniform(-1e3, 1e3, 40), rng.uniform(-1e5, 1e5, 40),
          rng.uniform(-1e9, 1e9, 10), [0.0, -0.0, 5e-324, -1e-310, 1e300, -1e300, 16.0, -16.0, 1e5, -1e5]]
    return np.concatenate([np.asarray(a, dtype=float) for a in qs])


@pytest.fixture(scope="module")
def trig_build(tmp_path_factory):
    if _CC is None:
        pytest.skip("no C compiler")
    from codegen.pipeline import generate_from_files
    d = tmp_path_factory.mktemp("trig")
    generate_from_files(_ROOT / "tests" / "models" / "mini.toml", _ROOT / "tests" / "models" / "mini_params.toml", d)
    (d / "wrap.c").write_text(_WRAP)
    (d / "driver.c").write_text(_DRIVER)
    r = subprocess.run([_CC, "-O2", "-std=c99", "-c", "driver.c", "-o", "driver.o"], cwd=d, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize("flags", FLAG_SETS)
def test_sincos_matches_libm_under_flags(trig_build, flags):
    d = trig_build
    exe = d / ("drv" + flags.replace(" ", "").replace("=", "_"))
    r = subprocess.run([_CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *flags.split(), "-c", "wrap.c",
                        "-o", exe.name + ".o"], cwd=d, capture_output=True, text=True)
    if r.returncode != 0 and ("unrecognized" in r.stderr or "not supported" in r.stderr):
        pytest.skip(f"compiler does not support {flags}")
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([_CC, "driver.o", exe.name + ".o", "-o", exe.name, "-lm"], cwd=d, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    angles = _test_angles()
    out = subprocess.run([str(exe), *[repr(float(a)) for a in angles]], capture_output=True, text=True, check=True)
    got = np.array([[float(v) for v in line.split()] for line in out.stdout.splitlines()])
    err = np.maximum(np.abs(got[:, 0] - got[:, 2]), np.abs(got[:, 1] - got[:, 3]))
    worst = int(np.argmax(err))
    assert err[worst] <= 1e-15, f"{flags}: sin/cos off by {err[worst]:.2e} at q = {angles[worst]!r}"
    # NaN and inf give NaN, as libm
    out = subprocess.run([str(exe), "nan", "inf", "-inf"], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        assert all(math.isnan(float(v)) for v in line.split()[:2]), (flags, line)

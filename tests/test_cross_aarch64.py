"""The committed C on aarch64 (the portable build: "the same for aarch64 where it builds").

Cross-compiles generated/krang_kernels.c for aarch64 with the README's flags, warnings as
errors, runs a small driver under qemu-user and compares every output with the same driver
built for this machine. On aarch64 the baseline (armv8-a) already has NEON and fused
multiply-add, so the plain build is the portable one; target_clones stay x86-only. Skipped
without the cross compiler and emulator (Debian: gcc-aarch64-linux-gnu, qemu-user).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reference.abi_ctypes import compile_objects

ROOT = Path(__file__).resolve().parents[1]
GEN = ROOT / "generated"
CROSS = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64")
SYSROOT = Path("/usr/aarch64-linux-gnu")
pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(CROSS is None or QEMU is None or shutil.which("gcc") is None,
                       reason="needs aarch64-linux-gnu-gcc and qemu-aarch64"),
]
FLAGS = ["-std=c99", "-O2", "-ffp-contract=fast", "-Wall", "-Wextra", "-Werror", "-pedantic"]

# Deterministic states; every kernel's output as raw doubles on stdout.
DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include "krang_kernels.h"
#define N 5
#define NA (KRANG_NDOF * KRANG_NDOF)
static void put(const double *x, int n) { fwrite(x, sizeof(double), (size_t)n, stdout); }
int main(void)
{
    static double p[KRANG_NP], q[N * KRANG_NDOF], dq[N * KRANG_NDOF], A[N * NA], C[N * NA];
    double out[NA], J[6 * KRANG_NDOF], T[16], v[KRANG_NDOF], w[KRANG_NDOF];
    krang_default_params(p);
    for (int i = 0; i < N * KRANG_NDOF; i++) {
        q[i] = 3.0 * sin(1.7 * i + 0.3);
        dq[i] = 2.0 * cos(0.9 * i);
    }
    for (int s = 0; s < N; s++) {
        const double *x = q + s * KRANG_NDOF, *y = dq + s * KRANG_NDOF;
        krang_compute_A(x, p, out); put(out, NA);
        krang_compute_C(x, y, p, out); put(out, NA);
        krang_compute_Q(x, p, v); put(v, KRANG_NDOF);
        for (int e = 0; e < 2; e++)
            for (int f = 0; f < 2; f++) { krang_jacobian(x, p, e, f, J); put(J, 6 * KRANG_NDOF); }
        for (int e = 0; e < 2; e++) { krang_fk(x, p, e, T); put(T, 16); }
        krang_inverse_dynamics(x, y, y, p, v); put(v, KRANG_NDOF);
        krang_forward_dynamics(x, y, v, p, w); put(w, KRANG_NDOF);
    }
    krang_compute_A_batch(N, q, p, A); put(A, N * NA);
    krang_compute_C_batch(N, q, dq, p, C); put(C, N * NA);
    return 0;
}
"""


def _outputs(cc, tmp: Path, tag: str, run_prefix) -> np.ndarray:
    """The driver built with `cc`; the kernels as their parts, compiled concurrently
    (reference.abi_ctypes.compile_objects: the same functions as one compiler run)."""
    drv = tmp / "driver.c"
    drv.write_text(DRIVER)
    objs = compile_objects(GEN / "krang_kernels.c", tmp / tag, FLAGS, cc)
    exe = tmp / f"driver_{tag}"
    subprocess.run([cc, *FLAGS, f"-I{GEN}", str(drv), *map(str, objs), "-lm", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    r = subprocess.run([*run_prefix, str(exe)], capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return np.frombuffer(r.stdout, dtype=np.float64)


def test_aarch64_build_matches_this_machine(tmp_path):
    arm = _outputs(CROSS, tmp_path, "arm", [QEMU, "-L", str(SYSROOT)])
    host = _outputs("gcc", tmp_path, "host", [])
    assert arm.size == host.size > 0
    assert np.isfinite(host).all()
    # different instruction sets contract multiply-adds differently: rounding-level differences
    assert np.abs(arm - host).max() <= 1e-12 * (1.0 + np.abs(host).max())

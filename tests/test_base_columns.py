"""krang_kernels/base_columns.py and the generation-time evaluation feeding it.

* householder_lstsq agrees with LAPACK's least squares (np.linalg.lstsq) on
  random well- and ill-conditioned problems;
* the base set the generator prints is the same bits whatever numpy's SIMD
  dispatch and OpenBLAS's kernel choice: a subprocess with the CPU features
  AVX2/FMA3/AVX512F disabled for numpy and OpenBLAS forced to an old core
  type must compute the identical combination matrix (with np.sin/np.cos and
  np.linalg.lstsq in the path, it did not: CI's Python 3.10 regeneration
  differed in the last digits of base_params' coefficients).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from krang_kernels.base_columns import householder_lstsq

pytestmark = pytest.mark.module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "tests", "models", "mini.toml")
PARAMS = os.path.join(ROOT, "tests", "models", "mini_params.toml")

FINGERPRINT = """
import hashlib, sys, numpy as np
from codegen.read.model import load_model, load_param_values
from codegen.derive.base_parameters import base_set
m = load_model(sys.argv[1])
b = base_set(m, load_param_values(sys.argv[2], m))
print(b.columns, hashlib.sha256(np.array(b.combination).tobytes()).hexdigest())
"""


@pytest.mark.parametrize("cond", [1e0, 1e6])
def test_householder_lstsq_matches_lapack(cond):
    rng = np.random.default_rng(7)
    U, _ = np.linalg.qr(rng.normal(size=(60, 12)))
    V, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    A = U @ np.diag(np.geomspace(1.0, 1.0 / cond, 12)) @ V.T
    B = rng.normal(size=(60, 5))
    got = householder_lstsq(A, B).astype(float)
    want = np.linalg.lstsq(A, B, rcond=None)[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * cond * np.abs(want).max())


def _fingerprint(env):
    out = subprocess.run([sys.executable, "-c", FINGERPRINT, MODEL, PARAMS], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    return out.returncode, out.stdout.strip(), out.stderr


def test_base_set_bits_do_not_depend_on_simd_or_blas_kernels():
    base = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    rc, here, err = _fingerprint(base)
    assert rc == 0, err
    other = dict(base, NPY_DISABLE_CPU_FEATURES="AVX2,FMA3,AVX512F", OPENBLAS_CORETYPE="Prescott")
    rc, there, err = _fingerprint(other)
    if rc != 0 and "NPY_DISABLE_CPU_FEATURES" in err:
        pytest.skip(f"this numpy cannot disable those features here: {err.strip().splitlines()[-1]}")
    assert rc == 0, err
    assert there == here

"""The runtime needs numpy only: krang_kernels, its identification tools and the
identify command import neither the generator (codegen) nor SymPy, and importing
them changes no environment variable (codegen sets SYMPY_CACHE_SIZE when imported).

Checked in a fresh interpreter whose import system refuses codegen and sympy (a
sys.meta_path finder raising ImportError for them and their submodules), so the
proof holds whatever an earlier test imported into this process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.module

ROOT = Path(__file__).resolve().parents[1]

PROBE = r'''
import os
import sys

BLOCKED = ("codegen", "sympy")


class Refuse:
    """Any import of the generator or SymPy fails, as where they are not installed."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked: the runtime must not need it")
        return None


sys.meta_path.insert(0, Refuse)
env_before = dict(os.environ)

import numpy as np

import krang_kernels as kk
import krang_kernels.base_columns
import krang_kernels.excitation as ex
import krang_kernels.identification as ident
import krang_kernels.identify as cli

assert dict(os.environ) == env_before, sorted(set(os.environ.items()) ^ set(env_before.items()))
assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED], sorted(sys.modules)
assert kk.__version__ and kk.__version__[0].isdigit(), kk.__version__

# a couple of kernels
rng = np.random.default_rng(0)
q, dq, ddq = (rng.uniform(-1, 1, size=kk.N_DOF) for _ in range(3))
A = kk.compute_A(q)
assert A.shape == (kk.N_DOF, kk.N_DOF) and np.allclose(A, A.T)
tau = kk.inverse_dynamics(q, dq, ddq)
assert np.allclose(kk.forward_dynamics(q, dq, tau), ddq, atol=1e-8)

# identification: the generated base set, one computed here (base_columns), a fit
n = 3 * kk.N_PI // kk.N_DOF + 20
qs, dqs, ddqs = ident.random_states(kk.N_DOF, n, rng)
taus = kk.inverse_dynamics(qs, dqs, ddqs)
base, fit = ident.identify(kk, qs, dqs, ddqs, taus)
assert np.allclose(fit.beta, kk.base_params(kk.default_params()), atol=1e-8)
assert ident.base_parameters(kk, n_states=n).nbase == kk.N_BASE
(qe, _, _), _ = ex.random_excitation(kk.N_DOF, -np.ones(kk.N_DOF), np.ones(kk.N_DOF), np.linspace(0, 10, 20))
assert qe.shape == (20, kk.N_DOF)
base, fit, pi = cli.run(kk, {"q": qs, "dq": dqs, "ddq": ddqs, "tau": taus})
assert fit.beta.shape == (kk.N_BASE,)

# parameters: a numeric parameter file, the physical check, a link's parameters
p = kk.load_params("models/krang_params.toml")
assert np.array_equal(p, kk.default_params())
kk.check_params(p)
key = next(n for n in kk.PARAM_NAMES if n.startswith("m_"))[2:]
link = kk.link_params(key, 2.0, [0.1, 0.0, 0.0], np.diag([0.01, 0.02, 0.02]))
assert link[f"m_{key}"] == 2.0
bad = p.copy()
bad[list(kk.PARAM_NAMES).index(f"m_{key}")] = -1.0
try:
    kk.check_params(bad)
except ValueError as exc:
    assert key in str(exc)
else:
    raise AssertionError("a negative mass passed check_params")

assert dict(os.environ) == env_before
assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED], sorted(sys.modules)
print("ok")
'''


def _run(code):
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_runtime_imports_neither_codegen_nor_sympy_and_keeps_the_environment():
    r = _run(PROBE)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_probe_can_fail():
    """The blocking finder does refuse the generator: importing codegen in the probe fails."""
    r = _run(PROBE.replace("import krang_kernels as kk\n", "import krang_kernels as kk\nimport codegen\n", 1))
    assert r.returncode != 0 and "codegen is blocked" in r.stderr, r.stderr

"""Shared cases of the controller-kernel tests (test_rnea.py,
test_forward_dynamics.py, test_fk_jdot.py): the models, their compiled
kernels (built once per test session), parameter sets and random states.

Krang is not regenerated here (that takes tens of seconds): its committed
generated/krang_kernels.c is compiled as is; tests/test_generated.py checks
that it is what the generator writes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reference.abi_ctypes import Library, build, compile_shared, write_params
from codegen.read.model import load_model, load_param_values
from reference.reference_fk import random_physical_params, rel_err

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"  # the small models are tests/models/*.toml
MODELS = {  # name -> (model file, parameter file or None: random)
    "mini": (TESTS / "models" / "mini.toml", TESTS / "models" / "mini_params.toml"),
    "tree": (TESTS / "models" / "tree.toml", None),
    "pendulum": (TESTS / "models" / "pendulum.toml", None),
    "planar2r": (TESTS / "models" / "planar2r.toml", None),
    "pr": (TESTS / "models" / "pr.toml", None),
    "forest": (TESTS / "models" / "forest.toml", None),  # two arms on the world: block-diagonal A
    "krang": (ROOT / "models" / "krang.toml", ROOT / "models" / "krang_params.toml"),
}
SMALL = [m for m in MODELS if m != "krang"]


def cases(*names):
    """Model names (all of MODELS by default) as pytest parameters. Krang's carries the robots
    tier: its committed C takes tens of seconds to compile, so `make test` checks Krang's
    kernels through the built krang_kernels module and the full run through this C too."""
    import pytest  # the benchmarks and examples use this package without pytest

    return [pytest.param(n, marks=pytest.mark.robots) if n == "krang" else n for n in names or MODELS]
_LIBS: dict = {}


def library(name, tmp_path_factory) -> Library:
    """The compiled kernels of model `name` (cached for the session)."""
    if name not in _LIBS:
        model_path, params_path = MODELS[name]
        model = load_model(model_path)
        out = tmp_path_factory.mktemp(f"ctrl_{name}")
        if name == "krang":
            _LIBS[name] = Library(model, compile_shared(ROOT / "generated" / "krang_kernels.c",
                                                        out / "libkrang_kernels.so"),
                                    header=ROOT / "generated" / "krang_kernels.h")
        else:
            if params_path is None:
                rng = np.random.default_rng(7)
                params_path = write_params(model, random_physical_params(model, rng), out / "params.toml")
            _LIBS[name] = build(model_path, params_path, out)
    return _LIBS[name]


def param_sets(name, n_random=3, seed=0):
    """[(label, p)]: the model's default parameters (if it has a file) and
    n_random random physically valid sets."""
    model_path, params_path = MODELS[name]
    model = load_model(model_path)
    sets = []
    if params_path is not None:
        sets.append(("default", np.array(load_param_values(params_path, model))))
    rng = np.random.default_rng(seed)
    sets += [(f"random{i}", random_physical_params(model, rng)) for i in range(n_random)]
    return sets


def states(ndof, n=15, seed=1):
    """n random (q, dq, ddq), plus the zero state and one with dq = 0 (sign(0) of friction)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, size=(n, ndof))
    dq = rng.uniform(-3, 3, size=(n, ndof))
    ddq = rng.uniform(-5, 5, size=(n, ndof))
    z = np.zeros((1, ndof))
    return np.vstack([q, z, q[:1]]), np.vstack([dq, z, z]), np.vstack([ddq, z, ddq[:1]])


def check(worst, key, got, ref, tol, label):
    """Assert rel_err(got, ref) <= tol and record the worst error seen per key."""
    e = rel_err(got, ref)
    worst[key] = max(worst.get(key, 0.0), e)
    assert e <= tol, f"[{label}] {key}: rel err {e:.2e}\nours {got}\nref  {ref}"

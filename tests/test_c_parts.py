"""The parts of a generated C source (codegen/emit/abi.py ABI.parts; -DKKPART=k):
every function in exactly one part, a new kernel in a part without further
edits, and the parts compiled one by one (warnings as errors) linking into a
library that exports what the whole file does and computes the same bits."""
from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from codegen.emit.abi import (BATCH, DERIVED, FD_DERIVATIVES, ID_DERIVATIVES, INTERFACE, TEMPLATE, Arg, Function,
                              describe, nbodies)
from codegen.read.model import load_model

from reference.abi_ctypes import CFLAGS, Library

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
GOLDEN_C = HERE / "golden" / "mini_kernels.c"  # what the generator writes for mini.toml (test_golden)
MODEL = HERE / "models" / "mini.toml"


def test_every_function_in_one_part():
    abi = describe(load_model(MODEL))
    parts = abi.parts()
    names = [f.name for _, _, fs in parts for f in fs]
    assert sorted(names) == sorted(f.name for f in abi.functions)  # each once
    assert [i for i, _, _ in parts] == list(range(1, len(parts) + 1))
    part_of = abi.part_of()
    for f in abi.functions:
        if f.body == BATCH:  # beside the scalar kernel it reprints (a forwarding form's target)
            scalar = abi.function(f.batch_of)
            assert abi.part_name(f) == abi.part_name(abi.function(scalar.forward_to or scalar.name)) + " batch"
            assert part_of[f.name] != part_of[scalar.forward_to or scalar.name]
        if f.body == TEMPLATE:
            assert abi.part_name(f) == INTERFACE
    assert len(parts) > 3  # the kernels are not all in one part


def test_derivative_kernels_in_parts_of_their_own():
    """The two largest kernels compile apart from the rest, each beside the other parts (two cores),
    and their batch forms (which reprint them, and compile longer) in parts of their own."""
    abi = describe(load_model(MODEL))
    parts = {name: [f.name for f in fs] for _, name, fs in abi.parts()}
    # the forms without fext call them
    assert parts[ID_DERIVATIVES] == ["inverse_dynamics_derivatives_fext"]
    assert parts[FD_DERIVATIVES] == ["forward_dynamics_derivatives_fext"]
    assert parts[ID_DERIVATIVES + " batch"] == ["inverse_dynamics_derivatives_batch"]
    assert parts[FD_DERIVATIVES + " batch"] == ["forward_dynamics_derivatives_batch"]


def test_new_kernel_falls_into_a_part():
    """One ABI entry, nothing else: without a group a kernel is a part of its own; with one it joins it."""
    abi = describe(load_model(MODEL))
    q, p = abi.function("compute_A").args[:2]
    new = Function("dA_dq", "a kernel added later", (q, p, Arg("D", (2,), "out", "D")), DERIVED)
    joined = dataclasses.replace(new, name="dA_dq2", group=abi.function("compute_A").group)
    bigger = dataclasses.replace(abi, functions=abi.functions + (new, joined))
    parts = {name: [f.name for f in fs] for _, name, fs in bigger.parts()}
    assert parts["dA_dq"] == ["dA_dq"]
    assert "dA_dq2" in parts[abi.function("compute_A").group]
    assert len(parts) == len(abi.parts()) + 1


def _compile(tmp_path, name, sources, defines=()):
    so = tmp_path / f"lib{name}.so"
    objs = []
    for i, (src, define) in enumerate(sources):
        obj = tmp_path / f"{name}{i}.o"
        r = subprocess.run(["gcc", *CFLAGS, "-fPIC", *define, f"-I{GOLDEN_C.parent}", "-c", str(src), "-o", str(obj)],
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr.strip(), f"{src} {define}: gcc failed or warned:\n{r.stderr}"
        objs.append(str(obj))
    subprocess.run(["gcc", "-shared", "-o", str(so), *objs, "-lm"], check=True)
    return so


def _exports(so) -> set:
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if " T " in line}


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None, reason="no gcc or nm")
def test_parts_compile_alone_and_equal_the_whole(tmp_path):
    model = load_model(MODEL)
    abi = describe(model)
    # the count C builds read; at least the parts of describe(model) (the generator adds the base
    # regressor's functions, codegen/emit/abi.py nbase, each a part of its own)
    n_parts = int(re.search(r"^#define KKNPARTS (\d+)$", GOLDEN_C.read_text(), re.M).group(1))
    assert n_parts >= len(abi.parts())
    whole = _compile(tmp_path, "whole", [(GOLDEN_C, ())])
    split = _compile(tmp_path, "split", [(GOLDEN_C, (f"-DKKPART={k}",)) for k in range(1, n_parts + 1)])
    assert _exports(split) == _exports(whole)
    assert {abi.prefix + f.name for f in abi.functions} <= _exports(split)
    a, b = Library(model, whole), Library(model, split)
    rng = np.random.default_rng(7)
    p = rng.uniform(0.1, 1.0, abi.nparams)
    for _ in range(3):
        q, dq, ddq = (rng.uniform(-2, 2, abi.nq), rng.uniform(-2, 2, abi.ndof), rng.uniform(-2, 2, abi.ndof))
        for f in abi.functions:
            if f.returns != "void" or f.name in ("integrate", "neutral", "default_params", "joint_limits"):
                continue
            ins = {"q": q, "dq": dq, "ddq": ddq, "tau": ddq, "v": dq, "a": ddq, "p": p, "ee": 0, "frame": 1, "n": 1,
                   "steps": 1, "dt": 0.01, "q0": q, "v0": dq,
                   "fext": rng.uniform(-2, 2, 6 * nbodies(model)), "packed": 0, "b": dq,
                   # an interleaved block of packed identities: cholesky_batch_interleaved's A, solve's L
                   "A": np.repeat(np.eye(abi.ndof)[np.tril_indices(abi.ndof)][:, None], 8, 1)}
            ins["L"] = ins["A"]
            args = [ins[x.name] for x in f.args if x.role != "out"]
            ra, rb = getattr(a, f.name)(*args), getattr(b, f.name)(*args)
            for x, y in zip(*((r,) if isinstance(r, np.ndarray) else r for r in (ra, rb))):
                assert np.array_equal(x, y), f.name  # same code, same flags: the same bits
                assert np.isfinite(x).all(), f.name

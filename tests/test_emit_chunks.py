"""codegen/emit/chunks.py: a long kernel split into chunk functions computes what
the single function computes, compiles cleanly (-Wall -Wextra -Werror
-pedantic), and moves only values that cross a chunk through kk_x.

The thresholds are lowered so that a small model's kernels are split (the
real ones split only kernels of thousands of statements)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from codegen.emit import chunks, layout
from codegen.emit.cse import Argument, Kernel
from codegen.read.model import load_model

from reference.abi_ctypes import build, write_params
from reference.reference_fk import random_physical_params

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "forest.toml"  # two arms on the world: derivatives with pair loops and blocks


def _kernel(lines, args=("q", "out")):
    k = Kernel("f", "", [Argument(a, 4, a == "out") for a in args], {}, setup=["double sq[2], cq[2]"])
    k.body = lines
    return k


def test_small_kernels_are_left_alone():
    k = _kernel([("const double t0", "q[0]"), ("out[0]", "t0")])
    assert chunks.split_long(k, "r_f") is k and k.helpers == [] and len(k.body) == 2


def test_values_crossing_a_chunk_go_through_kk_x(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_FROM", 2)
    monkeypatch.setattr(chunks, "CHUNK", 2)
    k = _kernel([("const double t0", "q[0]*sq[1]"), ("const double t1", "t0 + 1.0"),  # chunk 0
                 ("const double t2", "2.0*t0"), ("out[0]", "t1*t2"),  # chunk 1: reads t0, t1
                 ("", "kk_routine(sq, out)"),  # a call: stays in the kernel
                 ("", "memset(out + 1, 0, 3 * sizeof out[0])"),  # chunk 2
                 ("const double t3", "cq[0]"), ("out[1]", "t3")])
    chunks.split_long(k, "r_f")
    sigs = [s for s, _ in k.helpers]
    assert sigs == ["r_f_chunk0(const double *q, double *sq, double *kk_x)",
                    "r_f_chunk1(double *out, const double *kk_x)",
                    "r_f_chunk2(double *out, double *cq, double *kk_x)",  # memset, t3 (read by chunk 3)
                    "r_f_chunk3(double *out, const double *kk_x)"]
    assert k.setup[-1] == "double kk_x[3]"
    assert [rhs for _, rhs in k.body] == ["r_f_chunk0(q, sq, kk_x)", "r_f_chunk1(out, kk_x)",
                                          "kk_routine(sq, out)", "r_f_chunk2(out, cq, kk_x)",
                                          "r_f_chunk3(out, kk_x)"]
    c0, c1, c2, _ = (h for _, h in k.helpers)
    assert c2.body[0] == ("", "memset(out + 1, 0, 3 * sizeof out[0])")
    assert ("kk_x[0]", "t0") in c0.body and ("kk_x[1]", "t1") in c0.body and c0.noinline
    assert c1.setup == ["const double t0 = kk_x[0]", "const double t1 = kk_x[1]"]


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    model = load_model(MODEL)
    out = tmp_path_factory.mktemp("chunks")
    params = write_params(model, random_physical_params(model, np.random.default_rng(3)), out / "params.toml")
    whole = build(MODEL, params, out / "whole")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunks, "CHUNK_FROM", 40)
        mp.setattr(chunks, "CHUNK", 25)
        mp.setattr(layout, "PREFETCH_MIN_OPS", 0)  # chunks of tick kernels prefetch their code like routines
        split = build(MODEL, params, out / "split")
    return model, whole, split, out


def test_split_build_computes_the_same_and_is_split(libraries):
    model, whole, split, out = libraries
    source = next((out / "split").glob("*_kernels.c")).read_text()
    assert len(re.findall(r"_chunk\d+\(", source)) > 20 and "KKNOINLINE" in source
    assert re.search(r"compute_all_chunk0\(.*, int prefetch\)", source)
    rng = np.random.default_rng(5)
    n, p = model.ndof, np.array(whole.default_params())
    for _ in range(3):
        q, v, a = rng.uniform(-2, 2, (3, n))
        for f, args in [("compute_A", (q, p)), ("compute_C", (q, v, p)), ("compute_all", (q, v, p)), ("inverse_dynamics", (q, v, a, p)),
                        ("forward_dynamics", (q, v, a, p)), ("regressor", (q, v, a, p)),
                        ("inverse_dynamics_derivatives", (q, v, a, p)),
                        ("forward_dynamics_derivatives", (q, v, a, p))]:
            got, want = getattr(split, f)(*args), getattr(whole, f)(*args)
            for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12 * (1 + np.abs(w).max()), err_msg=f)


def test_a_call_in_the_kernel_reads_chunk_values_from_kk_x(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_FROM", 1)
    k = _kernel([("const double t0", "q[0]"), ("out[0]", "t0"), ("", "kk_routine(t0, out)")])
    chunks.split_long(k, "r_f")
    assert [rhs for _, rhs in k.body] == ["r_f_chunk0(q, out, kk_x)", "kk_routine(kk_x[0], out)"]

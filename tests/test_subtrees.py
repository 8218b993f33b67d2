"""Shared routines for isomorphic subtrees (codegen/derive/subtrees.py, emit_parts.py).

tests/models/twins.toml has two alike branches on a moving trunk, placed
differently on it, with a prismatic joint and a fixed tool each. The C
generated with the shared routine is checked against Pinocchio (built from
the same frame table, reference/pin_reference.py) for A, C, Q and the
Jacobians; so is the C of the Krang model in generated/ (test_against_pinocchio)
and solo12's legs, which hang from the fixed base (test_urdf_end_to_end).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from codegen.pipeline import CodegenConfig, generate
from codegen.read.model import load_model
from codegen.derive.subtree_groups import find_groups
from reference.abi_ctypes import Library, compile_shared
from reference.pin_reference import compare
from reference.reference_fk import random_physical_params

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
TWINS = load_model(HERE / "models" / "twins.toml")
KRANG = load_model(HERE.parent / "models" / "krang.toml")
CFLAGS = ["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def test_groups_found():
    (g,) = find_groups(TWINS)
    assert g.frames == (("a1", "a2", "a3", "a4"), ("b1", "b2", "b3", "b4"))
    assert g.joint_offset == (0, TWINS.frame("b1").index - TWINS.frame("a1").index)
    names = TWINS.param_names
    assert g.param_offset == (0, names.index("m_b1") - names.index("m_a1"))
    # Krang: the arms from the shoulder down (the shoulders differ only in placement)
    (k,) = find_groups(KRANG)
    assert [f[0] for f in k.frames] == ["4l", "4r"] and len(k.frames[0]) == 7


def test_no_group_when_structure_differs():
    frames = tuple(dataclasses.replace(f, origin=(f.origin[0], f.origin[1], f.origin[2] * 2)) if f.key == "b3" else f
                   for f in TWINS.frames)
    assert find_groups(dataclasses.replace(TWINS, frames=frames)) == []


def _library(tmp_path, share):
    rng = np.random.default_rng(7)
    values = random_physical_params(TWINS, rng)
    out = tmp_path / ("shared" if share else "straight")
    generate(TWINS, values, CodegenConfig(out_dir=out, share_subtrees=("A", "C", "all") if share else ()))
    c_file = out / "twins_kernels.c"
    return Library(TWINS, compile_shared(c_file, out / "libtwins.so", CFLAGS)), c_file.read_text()


def _ours(lib):
    def ours(q, dq, p):
        out = {"A": lib.compute_A(q, p), "C": lib.compute_C(q, dq, p), "Q": lib.compute_Q(q, p)}
        for e in TWINS.ee_names:
            out[f"J_{e}_world"] = getattr(lib, f"jacobian_{e}_world")(q, p)
            out[f"J_{e}_local"] = getattr(lib, f"jacobian_{e}_local")(q, p)
        return out
    return ours


def _all(lib):
    """compute_all's A, C, Q and world Jacobians (the local ones from their kernels)."""
    def ours(q, dq, p):
        A, C, Q, *J = lib.compute_all(q, dq, p)
        out = {"A": A, "C": C, "Q": Q}
        for e, Jw in zip(TWINS.ee_names, J):
            out[f"J_{e}_world"] = Jw
            out[f"J_{e}_local"] = getattr(lib, f"jacobian_{e}_local")(q, p)
        return out
    return ours


def test_shared_routine_matches_pinocchio(tmp_path):
    lib, source = _library(tmp_path, share=True)
    for kernel in ("compute_C", "compute_A", "compute_all"):
        assert f"static void kk_{kernel}_part0(" in source
        assert source.count(f"kk_{kernel}_part0(") == 3  # defined once, called per branch
    rng = np.random.default_rng(11)
    sets = [(f"random{i}", random_physical_params(TWINS, rng)) for i in range(3)]
    compare(_ours(lib), TWINS, sets, n_states=40, seed=3)
    # compute_all: C's routine with A's block; Q from the forces it returns
    compare(_all(lib), TWINS, sets, n_states=40, seed=4)


@pytest.mark.robots  # a second build of the twins; the shared routine is checked above in the fast tier
def test_routine_order_and_writes(tmp_path):
    """The routine computes joint by joint, deepest first, and writes each
    result as soon as it is known (codegen/emit/layout.place_writes), not all at
    the end; the kernel's writes likewise follow their last dependency."""
    _, source = _library(tmp_path, share=True)
    body = source.split("static void kk_compute_C_part0(", 1)[1].split("\n}\n", 1)[0]
    lines = [ln.strip() for ln in body.splitlines()]
    writes = [k for k, ln in enumerate(lines) if ln.startswith("out[")]
    assert writes and writes[0] < len(lines) // 2, "the routine writes its first result early"
    kernel = source.split("void twins_compute_C(const double", 1)[1].split("\n}\n", 1)[0]
    klines = [ln.strip() for ln in kernel.splitlines()]
    first_write = next(k for k, ln in enumerate(klines) if ln.startswith("C[") and "0.0" not in ln)
    last_statement = max(k for k, ln in enumerate(klines) if ln.startswith("const double"))
    assert first_write < last_statement


@pytest.mark.robots  # a third build of the twins
def test_option_off_is_straight_line(tmp_path):
    _, source = _library(tmp_path, share=False)
    assert "_part0" not in source

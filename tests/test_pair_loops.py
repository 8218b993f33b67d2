"""codegen/emit/pair_loops.py: the product dddq = -Minv [dq | dv] in register blocks,
compiled alone and compared with numpy on random matrices, for trees whose Minv is one
dense block (a chain, a free-flyer) or block diagonal by root subtree (a forest), with
sizes that fill no whole group of rows or chunk of columns. The whole kernel is tested
against Pinocchio and finite differences in tests/test_dynamics_derivatives.py."""
from __future__ import annotations

import ctypes
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from codegen.emit import pair_loops
from codegen.emit.pair_loops import LANES, ROWS, _blocks, _groups, _product, half_width, product_width

pytestmark = pytest.mark.builds


def _form(parents):
    """A stand-in for the pair form: `support` pairs (r, j), j an ancestor-or-self of r."""
    support = []
    for r in range(len(parents)):
        j = r
        while j >= 0:
            support.append((r, j))
            j = parents[j]
    return SimpleNamespace(support=support)


def _block_diagonal(parents, rng):
    """A random symmetric matrix with Minv's pattern (zero between root subtrees) and a
    matrix [dq | dv] zero outside each row's root subtree, as the pair loops leave it."""
    n = len(parents)
    root = [min(j for r, j in _form(parents).support if r == i) for i in range(n)]
    same = np.array([[root[i] == root[j] for j in range(n)] for i in range(n)])
    m = rng.normal(size=(n, n))
    minv = np.where(same, m + m.T, 0.0)
    dq, dv = (np.where(same, rng.normal(size=(n, n)), 0.0) for _ in range(2))
    return minv, dq, dv


TREES = {
    "chain of 3": [-1, 0, 1],
    "chain of 9": list(range(-1, 8)),
    "free-flyer-like, 13": [-1, 0, 1, 2, 3, 4, 5, 6, 7, 5, 9, 10, 5],
    "forest 6 + 5 + 10": [-1, 0, 1, 2, 3, 4, -1, 6, 7, 8, 9, -1, 11, 12, 13, 14, 15, 16, 17, 18, 19],
    "forest of single joints": [-1, -1, -1, -1, -1],
    "chain of 8": list(range(-1, 7)),
    "forest 10 + 3": [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, -1, 10, 11],
}


@pytest.mark.parametrize("tree", TREES)
def test_groups_cover_each_block_once(tree):
    parents = TREES[tree]
    n = len(parents)
    blocks = _blocks(_form(parents), n)
    groups, starts = _groups(blocks, n)
    rows = sorted({r for g in groups for r in g[:ROWS]})
    assert rows == list(range(n))
    for g in groups:
        b0, b1 = g[ROWS], g[ROWS + 1]
        assert all(blocks[r] == (b0, b1) for r in g[:ROWS])
        chunks = set(starts[g[ROWS + 2]:g[ROWS + 3]])
        h = half_width(n)
        # each chunk inside one half: written whole to dq or to dv
        assert all(c + LANES <= h or h <= c <= 2 * h - LANES for c in chunks)
        covered = {c + k for c in chunks for k in range(LANES)}
        assert set(range(b0, b1)) | set(range(h + b0, h + b1)) <= covered


def _compile_product(parents, tmp_path):
    n = len(parents)
    body, _ = _product(_form(parents), n, "Minv", "y", "dq", "dv")
    src = tmp_path / "product.c"
    src.write_text("#include <string.h>\n"
                   "void product(const double *Minv, const double *y, double *dq, double *dv)\n{\n"
                   + "\n".join("    " + line for line in body) + "\n}\n")
    lib = tmp_path / "product.so"
    subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC",
                    str(src), "-o", str(lib)], check=True, capture_output=True, text=True)
    fn = ctypes.CDLL(str(lib)).product
    fn.argtypes = [np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")] * 4
    return fn


@pytest.mark.parametrize("tree", TREES)
def test_product_equals_numpy(tree, tmp_path):
    parents = TREES[tree]
    n = len(parents)
    fn = _compile_product(parents, tmp_path)
    rng = np.random.default_rng(len(tree))
    for _ in range(3):
        minv, dq, dv = _block_diagonal(parents, rng)
        h = half_width(n)
        y = np.zeros((n, product_width(n)))
        y[:, :n], y[:, h:h + n] = dq, dv
        out_q, out_v = np.full((n, n), np.nan), np.full((n, n), np.nan)  # every entry must be written
        fn(minv, y, out_q, out_v)
        np.testing.assert_allclose(out_q, -minv @ dq, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(out_v, -minv @ dv, rtol=1e-13, atol=1e-13)


def test_product_reads_minv_by_columns():
    """The accumulators read Minv's column kk_m (Minv is symmetric): read by rows, gcc 12
    vectorized over kk_m instead of the columns for Talos, twice the row-by-row time."""
    body, _ = _product(_form(TREES["chain of 9"]), 9, "Minv", "y", "dq", "dv")
    assert any("Minv[9 * kk_m + kk_i0]" in line for line in body)
    assert pair_loops.product_width(9) == 18 and pair_loops.product_width(4) == 16

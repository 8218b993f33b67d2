"""Base (identifiable) parameters of a regressor stacked over states: pure numpy.

Gautier (1990), "Numerical calculation of the base inertial parameters of
robots"; Khalil and Dombre (2002), sec. 12.4. The regressor W (N x NPI),
stacked over random states, is factored by QR with column pivoting: its
first r pivoted columns are independent, every other column an exact
combination of them, W_2 = W_1 K, so that

    W pi = W_1 (pi_1 + K pi_2) = W_1 beta,    beta = K_b pi.

Used at generation time (codegen/derive/base_parameters.py, over the
symbolic regressor evaluated numerically) and at run time
(krang_kernels/identification.py, over a compiled module), so that both
choose the same columns. One copy, in the runtime package: numpy only, no
SymPy and nothing of codegen (the runtime must not need the generator).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

# Singular values below RANK_RTOL * the largest count as zero: exact
# dependencies of a double-precision regressor leave ~1e-15 relative, the
# weakest identifiable direction of the robots tested stays above 1e-7.
RANK_RTOL = 1e-9


def snap(x, tol=1e-9, max_den=1000):
    """x, or the small rational within tol of it: exact grouping coefficients (1, 2, 1/2) print as such."""
    f = Fraction(x).limit_denominator(max_den)
    return float(f) if abs(float(f) - x) <= tol * max(1.0, abs(x)) else x


def numerical_rank(A, rtol=None):
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0
    return int(np.sum(s > s[0] * (RANK_RTOL if rtol is None else rtol)))


def pivoted_qr(A):
    """Householder QR with column pivoting (Businger and Golub 1965); returns R and the permutation."""
    A = np.array(A, float)
    m, n = A.shape
    perm = np.arange(n)
    norms = np.sum(A * A, axis=0)
    for k in range(min(m, n)):
        j = k + int(np.argmax(norms[k:]))
        A[:, [k, j]], perm[[k, j]], norms[[k, j]] = A[:, [j, k]], perm[[j, k]], norms[[j, k]]
        x = A[k:, k]
        alpha = -np.copysign(np.linalg.norm(x), x[0] if x[0] != 0 else 1.0)
        v = x.copy()
        v[0] -= alpha
        vn = np.linalg.norm(v)
        if vn > 0:
            v /= vn
            A[k:, k:] -= 2.0 * np.outer(v, v @ A[k:, k:])
        norms[k + 1:] = np.sum(A[k + 1:, k + 1:] ** 2, axis=0)
    return np.triu(A[:min(m, n)]), perm


# Within a link, the order in which columns are offered (base_of's `order`):
# the parameters Khalil and Dombre's grouping rules eliminate -- YY, MZ and
# m of a link, regrouped into its own XX, ZZ and into the preceding links
# (2002, sec. 12.4.2) -- come last, so the numerical base set reads like
# the textbook's (ZZ1R = ZZ_1 + Ia_1 + l1**2*m_2 ...).
KIND_ORDER = ("XX", "XY", "XZ", "YZ", "ZZ", "MX", "MY", "Ia", "YY", "MZ", "m", "Fv", "Fc")


def textbook_order(names) -> list:
    """Column indices of `names` (KIND_k) link by link, KIND_ORDER within a link."""
    links = {}
    for n in names:
        links.setdefault(n.split("_", 1)[1], len(links))
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    return sorted(range(len(names)), key=lambda i: (links[names[i].split("_", 1)[1]],
                                                    rank.get(names[i].split("_", 1)[0], len(rank)), i))


def base_of(W, order=None):
    """(columns, K_b) of a stacked regressor W (N, NPI): the independent
    columns in increasing order and the NBASE x NPI combination matrix.
    `order`: the column priority (default: pivoted QR's choice); a column is
    kept when it is independent of the columns kept before it."""
    npi = W.shape[1]
    # columns scaled to unit norm so that rank decisions see directions, not units
    scale = np.sqrt((np.asarray(W, np.longdouble) ** 2).sum(axis=0))
    # columns of round-off only (a parameter with no effect: 1e-17 from cancellations) are zero
    live = scale > 1e-10 * max(np.max(scale), 1e-300)
    Wl = np.where(live, W / np.where(live, scale, 1.0), 0.0)
    Ws = Wl.astype(float)
    r = numerical_rank(Ws)
    indep = _greedy(Ws, order, live) if order is not None else None
    if indep is None or len(indep) != r:  # a priority order that disagrees with the SVD rank: pivot instead
        indep = np.sort(pivoted_qr(Ws)[1][:r])
    indep = np.sort(np.asarray(indep, int))
    dep = np.setdiff1d(np.arange(npi), indep)
    # W_dep = W_indep K (exact in exact arithmetic), by least squares on the scaled columns
    K = householder_lstsq(Wl[:, indep], Wl[:, dep]) if len(dep) else np.zeros((r, 0), np.longdouble)
    comb = np.zeros((r, npi))
    comb[np.arange(r), indep] = 1.0
    for jj, j in enumerate(dep):
        if live[j]:
            for i in range(r):
                c = float(K[i, jj] * scale[j] / scale[indep[i]])
                comb[i, j] = snap(c) if abs(c) > 1e-11 else 0.0
    return tuple(int(i) for i in indep), comb


def householder_lstsq(A, B):
    """X minimising |A X - B| (A: m x n of full column rank), by Householder QR
    in extended precision (np.longdouble) with numpy's own loops only.

    Why not np.linalg.lstsq: LAPACK/BLAS kernels (blocking, SIMD, FMA) differ
    between CPUs and library versions, and the generator prints these numbers
    (base_params' coefficients): make generate must give the same bits on every
    machine and numpy version (CI regenerates under Python 3.10 and numpy 2.2).
    The long-double operations used here (+, *, /, sqrt, and matmul, which
    numpy runs without BLAS for this type) are IEEE-exact and in a fixed order."""
    M = np.hstack([np.asarray(A, np.longdouble), np.asarray(B, np.longdouble)])
    m, n = np.asarray(A).shape
    for k in range(n):
        x = M[k:, k]
        alpha = -np.copysign(np.sqrt(x @ x), x[0] if x[0] != 0 else 1.0)
        v = x.copy()
        v[0] -= alpha
        vn2 = v @ v
        if vn2 > 0:
            M[k:, k:] -= np.outer(v, (2.0 / vn2) * (v @ M[k:, k:]))
    R, C = M[:n, :n], M[:n, n:]
    X = np.zeros_like(C)
    for i in range(n - 1, -1, -1):  # back substitution, R X = Q^T B
        X[i] = (C[i] - R[i, i + 1:] @ X[i + 1:]) / R[i, i]
    return X


def _greedy(Ws, order, live, tol=1e-7):
    """The columns, in `order`, each independent of those kept before it
    (Gram-Schmidt twice against the kept ones: residual norm > tol)."""
    basis, kept = [], []
    for j in order:
        if not live[j]:
            continue
        x = Ws[:, j].copy()
        for _ in range(2):
            for b in basis:
                x -= (b @ x) * b
        nx = np.linalg.norm(x)
        if nx > tol:
            basis.append(x / nx)
            kept.append(j)
    return kept


def readable(row, names, monomials=None) -> str:
    """beta_i as text: `ZZ_2 + ZZ_3 + 0.09*m_3`, or with `monomials` (a
    function coefficient -> geometry text or None), `ZZ_2 + ZZ_3 + l2**2*m_3`."""
    terms = []
    for c, n in zip(row, names):
        if c == 0:
            continue
        mag = abs(c)
        word = monomials(mag) if monomials is not None and mag != 1 else None
        coef = "" if mag == 1 else f"{word}*" if word else f"{mag:.6g}*"
        terms.append((" - " if c < 0 else " + ") + coef + n)
    s = "".join(terms)
    return s[3:] if s.startswith(" + ") else "-" + s[3:]

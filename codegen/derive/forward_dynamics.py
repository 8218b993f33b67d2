"""Forward dynamics ddq = A^-1 (tau - h - friction(dq)) by the sparse LTDL
factorization of A (Featherstone 2005, "Efficient factorization of the
joint-space inertia matrix for branched kinematic trees"; Featherstone 2008,
section 6.3).

Joints are numbered parents first, so lambda(i) < i for the nearest moving
ancestor lambda(i). In a tree, A_ij = 0 unless one of i, j is an ancestor
of the other, and the factorization A = L^T D L (L unit lower triangular)
creates no fill-in: L_ij != 0 only for j an ancestor of i. Factorization
and both triangular solves therefore walk ancestor chains only, and the
emitted code is straight-line over A's and h's statements (no pivoting: A
is symmetric positive definite for physical parameters, Ia >= 0). Each
D_k is inverted once.
"""
from __future__ import annotations

import sympy as sp

from .program import Program


def parents(model) -> list:
    """lambda(i): the index of joint i's nearest moving ancestor, or -1."""
    out = []
    for f in model.joints:
        p = f.parent
        while p != "0" and not model.frame(p).moving:
            p = model.frame(p).parent
        out.append(model.frame(p).index if p != "0" else -1)
    return out


def ltdl(prog: Program, A, lam):
    """(L, Dinv): strictly lower L entries {(i, j): expr} and 1/D_k."""
    n = A.rows
    H = {(i, j): A[i, j] for i in range(n) for j in chain(lam, i)}  # j ancestor-or-self of i
    Dinv = [None] * n
    for k in reversed(range(n)):
        Dinv[k] = prog.var(1 / H[k, k])
        i = lam[k]
        while i >= 0:
            a = prog.var(H[k, i] * Dinv[k])
            j = i
            while j >= 0:
                H[i, j] = prog.var(H[i, j] - a * H[k, j])
                j = lam[j]
            H[k, i] = a
            i = lam[i]
    L = {(i, j): H[i, j] for i in range(n) for j in chain(lam, lam[i])}
    return L, Dinv


def chain(lam, i):
    """i and its ancestors."""
    out = []
    while i >= 0:
        out.append(i)
        i = lam[i]
    return out


def ltdl_solve(prog: Program, L, Dinv, lam, b):
    """x with L^T D L x = b."""
    n = len(b)
    z = list(b)
    for i in reversed(range(n)):  # L^T z = b: rows of descendants are final first
        z[i] = prog.var(z[i])
        j = lam[i]
        while j >= 0:
            z[j] = z[j] - L[i, j] * z[i]
            j = lam[j]
    y = [prog.var(z[i] * Dinv[i]) for i in range(n)]
    x = [None] * n
    for i in range(n):  # L x = y, ancestors first
        x[i] = prog.var(y[i] - sum((L[i, j] * x[j] for j in chain(lam, lam[i])), sp.S.Zero))
    return sp.Matrix(x)


def inverse(prog: Program, L, Dinv, lam):
    """A^-1 = L^-1 D^-1 L^-T from the factors, each entry of its lower
    triangle computed once. W = L^-1 keeps L's pattern (W_ik != 0 only for k
    an ancestor-or-self of i; from L W = 1: W_ik = -sum L_ij W_jk over the
    ancestors j of i at or below k), and (A^-1)_ij is the sum of
    W_ik D_k^-1 W_jk over the common ancestors-or-self k of i and j: zero for
    joints in different root subtrees. About half the work of n solves of
    unit columns, which compute both triangles and run the zeros of their
    right-hand sides through the forward substitution."""
    n = len(Dinv)
    chains = [chain(lam, i) for i in range(n)]  # i and its ancestors
    W = {}
    for i in range(n):
        W[i, i] = sp.S.One
        up = chains[i][1:]
        for k in up:
            W[i, k] = prog.var(-sum((L[i, j] * W[j, k] for j in up if j >= k), sp.S.Zero))
    V = {(j, k): prog.var(W[j, k] * Dinv[k]) for j in range(n) for k in chains[j]}
    M = sp.zeros(n, n)
    for i in range(n):
        ci = set(chains[i])
        for j in range(i + 1):
            common = [k for k in chains[j] if k in ci]
            if common:
                M[i, j] = M[j, i] = prog.var(sum((W[i, k] * V[j, k] for k in common), sp.S.Zero))
    return M


def forward_dynamics(prog: Program, model, A, h, friction, tau):
    """ddq from the inertia matrix A, the bias h = C dq + Q, friction and tau."""
    lam = parents(model)
    L, Dinv = ltdl(prog, A, lam)
    rhs = [t - hh - fr for t, hh, fr in zip(tau, h, friction)]
    return ltdl_solve(prog, L, Dinv, lam, rhs)

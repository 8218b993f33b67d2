"""The base parameters of a model, chosen at generation time.

Method (docs/identification.md): the symbolic regressor Y
(codegen/derive/regressor.py) is evaluated numerically -- its straight-line
program run over numpy arrays -- at N_STATES random states (q, dq, ddq) and
the model's default geometry and g; the stacked matrix is factored by QR with
column pivoting (krang_kernels/base_columns.py, Gautier 1990). The result is
fixed at generation time:

* `columns`: the independent columns of Y; the base regressor is Y
  restricted to them (a derived kernel: no more work than Y);
* `combination` K_b (NBASE x NPI, numbers): beta = K_b pi. Its entries are
  functions of the geometry (e.g. m_3 l2^2 in the 2R arm's grouped ZZ); they
  hold for the default geometry recorded in `geometry`: with other
  geometry values in p the base regressor stays exact but base_params does
  not (regenerate with the new geometry as defaults).

Readable names write a coefficient as a product of geometry names when one
(times a small rational) equals it uniquely at the recorded values, else as
the number.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy as sp

# numpy only, shared with the runtime's identification so that both choose the same
# columns: one copy, in the runtime package (importing it loads krang_kernels' compiled
# module, built by every install of this distribution)
from krang_kernels import base_columns

from .kinematics import Kinematics
from .program import Program
from .regressor import regressor, regressor_params
from .symbols import Symbols
from ..support.progress import stage

N_STATES = 40  # random states (N_STATES x NDOF rows); at least 3 NPI / NDOF rows of margin below
SEED = 20260127  # fixed: generation is reproducible


@dataclass(frozen=True)
class BaseSet:
    """beta = K_b pi for the geometry `geometry` ((name, value) pairs)."""
    columns: tuple  # indices into the regressor's columns (pi), increasing
    combination: tuple  # NBASE rows of NPI floats
    names: tuple  # readable, e.g. "ZZ_1 + Ia_1 + l1**2*m_2"
    geometry: tuple

    @property
    def nbase(self) -> int:
        return len(self.columns)


def _evaluate(expr, env):
    """expr (Add/Mul/Pow/sign/functions of program symbols) over numpy arrays.
    Integer powers by multiplication: IEEE-exact, so the same bits on every
    machine (see random_inputs)."""
    if expr.is_Symbol:
        return env[expr]
    if expr.is_Number:
        return float(expr)
    args = [_evaluate(a, env) for a in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if expr.is_Pow:
        n = expr.args[1]
        if n.is_Integer and 0 < abs(int(n)) <= 8:
            out = args[0]
            for _ in range(abs(int(n)) - 1):
                out = out * args[0]
            return out if n > 0 else 1.0 / out
        return args[0] ** args[1]
    return getattr(np, {"Abs": "abs"}.get(type(expr).__name__, type(expr).__name__.lower()))(*args)


def evaluate(prog: Program, outputs, env: dict) -> list:
    """The outputs (expressions over the program) at the inputs `env` (Symbol -> array)."""
    env = dict(env)
    for sym, rhs in prog.needed(outputs):
        env[sym] = _evaluate(rhs, env)
    return [_evaluate(sp.sympify(e), env) for e in outputs]


def random_inputs(syms: Symbols, values, n, rng) -> dict:
    """Every input symbol at n random states: joint angles over the whole
    circle, dq, ddq in (-3, 3), (-5, 5), a random unit quaternion and position
    for a free-flying base; p at `values`.

    Only +, *, / and sqrt, which IEEE 754 rounds exactly: the base
    parameters' coefficients are printed into the generated C, and np.sin,
    np.cos or np.random's normal draw give other last bits on other CPUs and
    numpy versions (CI's Python 3.10 regeneration). So (s, c) of an angle
    come from t = tan(angle/2) uniform in (-1, 1) -- s = 2t/(1+t^2),
    c = (1-t^2)/(1+t^2) -- times a random sign (the other half circle); a
    revolute joint enters the program through (s, c) only, a prismatic one
    through q, drawn uniform in (-pi, pi)."""
    ndof = len(syms.q)
    q, dq, ddq = (rng.uniform(-s, s, size=(ndof, n)) for s in (np.pi, 3.0, 5.0))
    t = rng.uniform(-1.0, 1.0, size=(ndof, n))
    half = np.where(rng.uniform(size=(ndof, n)) < 0.5, -1.0, 1.0)
    s, c = half * (2.0 * t / (1.0 + t * t)), half * ((1.0 - t * t) / (1.0 + t * t))
    quat = rng.uniform(-1.0, 1.0, size=(4, n))
    quat /= np.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
    base = np.vstack([rng.uniform(-1, 1, size=(3, n)), quat])
    arrays = {"q": q, "s": s, "c": c, "dq": dq, "ddq": ddq, "qb": base,
              "tau": np.zeros((ndof, n)), "fext": np.zeros((len(syms.fext), n)),
              "lam": np.zeros((len(syms.lam), n)), "p": np.asarray(values, float)[:, None] * np.ones(n)}
    return {sym: arrays[kind][index] for sym, (kind, index) in syms.tags.items()}


def stacked(model, values, d=None, n=N_STATES, seed=SEED) -> np.ndarray:
    """Y at n random states, stacked: (n NDOF) x NPI. `d`: derive()'s outputs (else derived here)."""
    if d is None:
        syms, prog = Symbols(model), Program()
        kin = Kinematics(model, syms, prog)
        vel = kin.velocities()
        Y = regressor(kin, vel, syms.ddq)
    else:
        syms, prog, Y = d.symbols, d.program, d["Y"]
    env = random_inputs(syms, values, n, np.random.default_rng(seed))
    vals = evaluate(prog, list(Y), env)
    W = np.array([np.broadcast_to(np.asarray(v, float), (n,)) for v in vals]).reshape(Y.rows, Y.cols, n)
    return W.transpose(2, 0, 1).reshape(n * Y.rows, Y.cols)


def base_set(model, values, d=None) -> BaseSet:
    """The base parameters of `model` at the geometry of `values` (the default parameters)."""
    names = regressor_params(model)
    n = max(N_STATES, 3 * len(names) // max(model.ndof, 1) + 10)
    columns, comb = base_columns.base_of(stacked(model, values, d, n), base_columns.textbook_order(names))
    geometry = tuple((g, float(values[model.param_names.index(g)])) for g in model.geometry)
    words = _monomials(geometry)
    text = tuple(base_columns.readable(row, names, words) for row in comb)
    return BaseSet(columns, tuple(tuple(float(c) for c in row) for row in comb), text, geometry)


RATIONALS = (1, 2, 3, 4, 0.5, 1 / 3, 0.25)


def _monomials(geometry):
    """coefficient -> `k*a*b` text when exactly one monomial of degree 1 or 2
    in the geometry values (times a small rational k) equals it."""
    items = [(n, v) for n, v in geometry if v != 0]
    monos = [(n, abs(v)) for n, v in items]
    for (a, va), (b, vb) in itertools.combinations_with_replacement(items, 2):
        monos.append((f"{a}**2" if a == b else f"{a}*{b}", abs(va * vb)))

    def word(c):
        hits = {(_fraction(k) + n) for n, v in monos for k in RATIONALS if abs(k * v - c) <= 1e-9 * c}
        return hits.pop() if len(hits) == 1 else None
    return word


def _fraction(k) -> str:
    return {1: "", 2: "2*", 3: "3*", 4: "4*", 0.5: "(1/2)*", 1 / 3: "(1/3)*", 0.25: "(1/4)*"}[k]


def base_outputs(model, values, d):
    """The base parameters at the default geometry (base_set), added to the
    derivation's outputs: Yb, the independent columns of Y, and beta = K_b pi
    over the parameter symbols."""
    with stage("base parameters"):
        base = base_set(model, values, d)
    Y, params = d["Y"], d.symbols.params
    d.outputs["Yb"] = Y[:, list(base.columns)]
    pi = [params[n] for n in regressor_params(model)]
    d.outputs["beta"] = sp.Matrix([sum((sp.Float(c) * x for c, x in zip(row, pi) if c != 0), sp.S.Zero)
                           for row in base.combination])
    return base

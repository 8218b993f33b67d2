"""The benchmark's inputs: the parameter vector and the pre-drawn states, and the states file."""
from __future__ import annotations

import random
import struct
from typing import TYPE_CHECKING

import numpy as np

from .env import ROOT

if TYPE_CHECKING:
    from codegen.read.model import Model


def get_params(model, args):
    """(parameter vector, how the report describes it)."""
    from codegen.read.model import load_param_values

    path = args.params
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if path.exists() and not args.random_params:
        return load_param_values(path, model), f"`{shown}`"
    return random_params(model, seed=args.seed), (
        f"random physically valid vector (seed {args.seed}; "
        + ("--random-params" if path.exists() else f"{shown} does not exist yet") + ")")


def draw_states(n, ndof, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n, ndof))
    dq = rng.uniform(-2.0, 2.0, (n, ndof))
    return q, dq


def draw_floating_states(n, nv, seed):
    """As draw_states for a free-flying base: q = [base position in [-1, 1]^3, a random unit
    quaternion (x, y, z, w), joints in [-pi, pi]] (nv + 1 entries), dq in [-2, 2]^nv."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.hstack([rng.uniform(-1.0, 1.0, (n, 3)), quat, rng.uniform(-np.pi, np.pi, (n, nv - 6))])
    dq = rng.uniform(-2.0, 2.0, (n, nv))
    return q, dq


def write_states(path, params, q, dq):
    """The states file of bench_common.h (little-endian): version 1, or version 2 (with nq)
    when q is longer than dq (a floating base)."""
    n, nq = q.shape
    ndof = dq.shape[1]
    with open(path, "wb") as f:
        head = struct.pack("<4i", 1, n, ndof, len(params)) if nq == ndof else \
            struct.pack("<5i", 2, n, ndof, len(params), nq)
        f.write(b"KRBS" + head)
        f.write(np.asarray(params, "<f8").tobytes())
        f.write(np.ascontiguousarray(q, "<f8").tobytes())
        f.write(np.ascontiguousarray(dq, "<f8").tobytes())


def random_params(model: Model, seed: int = 1) -> list:
    """A physically valid parameter vector (positive masses, inertia about the com positive
    definite and meeting the triangle inequality), for when no parameter file exists yet."""
    rng = random.Random(seed)
    values = {}
    for s in model.geometry:
        values[s] = rng.uniform(0.05, 0.5)
    values["g"] = 9.81
    for f in model.frames:
        m = rng.uniform(0.5, 10.0)
        c = np.array([rng.uniform(-0.15, 0.15) for _ in range(3)])
        a, b = rng.uniform(0.01, 0.2), rng.uniform(0.01, 0.2)
        principal = [a, b, rng.uniform(abs(a - b) + 1e-3, a + b - 1e-3)]
        qr, _ = np.linalg.qr(np.array([[rng.gauss(0, 1) for _ in range(3)] for _ in range(3)]))
        i_c = m * qr @ np.diag(principal) @ qr.T
        j_o = i_c + m * (c @ c * np.eye(3) - np.outer(c, c))
        ms = m * c
        values.update({f"m_{f.key}": m, f"MX_{f.key}": ms[0], f"MY_{f.key}": ms[1], f"MZ_{f.key}": ms[2],
                       f"XX_{f.key}": j_o[0, 0], f"XY_{f.key}": j_o[0, 1], f"XZ_{f.key}": j_o[0, 2],
                       f"YY_{f.key}": j_o[1, 1], f"YZ_{f.key}": j_o[1, 2], f"ZZ_{f.key}": j_o[2, 2]})
        if f.moving:
            values.update({f"Ia_{f.key}": rng.uniform(0.0, 0.05), f"Fv_{f.key}": rng.uniform(0.0, 1.0),
                           f"Fc_{f.key}": rng.uniform(0.0, 1.0)})
    return [values[n] for n in model.param_names]

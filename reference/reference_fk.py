"""Model-generic numpy reference for the physics tests (no Pinocchio, no C).

Everything here is computed straight from the frame table of a
`codegen.read.model.Model` and a parameter vector in `Model.param_names` order:

* forward kinematics  parentT_frame(q) = [rotation*Rot(axis, q), origin]
  (revolute) or [rotation, origin + rotation*axis*q] (prismatic);
* the potential energy  U = -sum_k g^T (m_k p_k + R_k MS_k);
* geometric Jacobians of any frame (rows [v; w], v = velocity of the frame
  origin), in the world frame 0 or in the frame itself;
* a mass matrix assembled from the per-frame spatial inertias at the frame
  origins, A = sum_k J_k^T M_k J_k + diag(Ia), and a Christoffel-symbol C
  from finite differences of that A;
* friction Fv*dq + Fc*sign(dq);
* central finite-difference helpers and random physically valid parameters.

The module is deliberately independent of the generated kernels so it can
check them, and of Pinocchio so it can also check a small model compiled via
ctypes. Its own correctness is checked against Pinocchio in
tests/test_reference.py.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]
from codegen.read.model import Model, load_model, load_param_values  # noqa: F401  (re-exported)

KRANG_MODEL = ROOT / "models" / "krang.toml"
KRANG_PARAMS = ROOT / "models" / "krang_params.toml"


# --------------------------------------------------------------------------
# small SO(3) helpers

def hat(v):
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def vee(W):
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def rot(axis, angle):
    """Rodrigues: rotation by `angle` about the unit vector `axis`."""
    K = hat(axis)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def random_rotation(rng):
    qv = rng.normal(size=4)
    w, x, y, z = qv / np.linalg.norm(qv)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


# --------------------------------------------------------------------------
# inertial parameter conversions (Khalil-Dombre <-> COM form)

def inertia_matrix(XX, XY, XZ, YY, YZ, ZZ):
    return np.array([[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]], dtype=float)


def com_form(m, MS, J):
    """(S, I_c): COM position and inertia about the COM from (m, MS, J).

    J is the inertia about the frame origin: J = I_c + m (S^T S I - S S^T),
    so I_c = J + m hat(S) hat(S). A massless frame must have MS = 0.
    """
    MS = np.asarray(MS, dtype=float)
    J = np.asarray(J, dtype=float)
    if m == 0.0:
        if np.any(MS != 0.0):
            raise ValueError("a massless frame with a nonzero first moment MS has no COM")
        return np.zeros(3), J.copy()
    S = MS / m
    return S, J + m * hat(S) @ hat(S)


def origin_form(m, S, Ic):
    """(MS, J) about the frame origin from the COM position S and inertia I_c."""
    S = np.asarray(S, dtype=float)
    return m * S, np.asarray(Ic, dtype=float) - m * hat(S) @ hat(S)


# --------------------------------------------------------------------------
# parameter vectors

def param_dict(model: Model, params) -> dict:
    names = model.param_names
    if isinstance(params, dict):
        missing = set(names) - set(params)
        if missing:
            raise KeyError(f"missing parameters {sorted(missing)}")
        return {n: float(params[n]) for n in names}
    params = np.asarray(params, dtype=float)
    if params.shape != (len(names),):
        raise ValueError(f"params must have shape ({len(names)},), got {params.shape}")
    return dict(zip(names, params.tolist()))


def param_vector(model: Model, values: dict) -> np.ndarray:
    return np.array([float(values[n]) for n in model.param_names])


def random_physical_params(model: Model, rng, base=None) -> np.ndarray:
    """A random, physically valid parameter vector (Model.param_names order).

    Masses in [0.5, 10]; COM inside a ball of radius 0.4; COM inertia
    R diag(I1, I2, I3) R^T with I1 = b + c, I2 = a + c, I3 = a + b for random
    a, b, c > 0 (so the principal moments are positive and satisfy the strict
    triangle inequality) and a random rotation R, converted to MS and J about
    the frame origin. Geometry lengths in [0.05, 1], g in [9, 10.5],
    Ia in [0, 0.5], Fv in [0, 2], Fc in [0, 2].

    With `base` (a parameter vector or dict), the geometry lengths and g are
    taken from it and only the inertial/actuator parameters are drawn.
    """
    v = {}
    for gname in model.geometry:
        v[gname] = rng.uniform(0.05, 1.0)
    v["g"] = rng.uniform(9.0, 10.5)
    if base is not None:
        b = param_dict(model, base)
        for gname in list(model.geometry) + ["g"]:
            v[gname] = b[gname]
    for f in model.frames:
        k = f.key
        m = rng.uniform(0.5, 10.0)
        d = rng.normal(size=3)
        S = d / np.linalg.norm(d) * 0.4 * rng.uniform() ** (1.0 / 3.0)
        a, b_, c = m * rng.uniform(0.001, 0.05, size=3)
        R = random_rotation(rng)
        Ic = R @ np.diag([b_ + c, a + c, a + b_]) @ R.T
        MS, J = origin_form(m, S, Ic)
        v[f"m_{k}"] = m
        v[f"MX_{k}"], v[f"MY_{k}"], v[f"MZ_{k}"] = MS
        v[f"XX_{k}"], v[f"XY_{k}"], v[f"XZ_{k}"] = J[0, 0], J[0, 1], J[0, 2]
        v[f"YY_{k}"], v[f"YZ_{k}"], v[f"ZZ_{k}"] = J[1, 1], J[1, 2], J[2, 2]
        if f.moving:
            v[f"Ia_{k}"] = rng.uniform(0.0, 0.5)
            v[f"Fv_{k}"] = rng.uniform(0.0, 2.0)
            v[f"Fc_{k}"] = rng.uniform(0.0, 2.0)
    return param_vector(model, v)


def random_states(rng, n, ndof, qmax=math.pi, dqmax=3.0):
    """n pairs (q, dq): q uniform in [-qmax, qmax], dq uniform in [-dqmax, dqmax]."""
    q = rng.uniform(-qmax, qmax, size=(n, ndof))
    dq = rng.uniform(-dqmax, dqmax, size=(n, ndof))
    return q, dq


# --------------------------------------------------------------------------
# the numeric model

class NumericFrame:
    __slots__ = ("key", "parent", "type", "index", "axis", "R0", "origin",
                 "m", "MS", "J", "Ia", "Fv", "Fc")


class NumericModel:
    """A frame table evaluated at one parameter vector."""

    def __init__(self, model: Model, params):
        self.model = model
        p = param_dict(model, params)
        self.p = p
        subs = {sp.Symbol(s, real=True): p[s] for s in model.geometry}
        self.g = p["g"]
        self.gvec = p["g"] * np.array([float(x) for x in model.gravity])
        self.ndof = model.ndof
        self.frames = []
        for f in model.frames:
            nf = NumericFrame()
            nf.key, nf.parent, nf.type, nf.index = f.key, f.parent, f.type, f.index
            nf.axis = np.array([float(a) for a in f.axis])
            nf.R0 = np.array(f.rotation.tolist(), dtype=float)
            nf.origin = np.array([float(sp.sympify(o).subs(subs)) for o in f.origin])
            k = f.key
            if f.massless:  # the first five frames of a free-flyer: no parameters
                nf.m, nf.MS, nf.J = 0.0, np.zeros(3), np.zeros((3, 3))
            else:
                nf.m = p[f"m_{k}"]
                nf.MS = np.array([p[f"MX_{k}"], p[f"MY_{k}"], p[f"MZ_{k}"]])
                nf.J = inertia_matrix(p[f"XX_{k}"], p[f"XY_{k}"], p[f"XZ_{k}"],
                                      p[f"YY_{k}"], p[f"YZ_{k}"], p[f"ZZ_{k}"])
            if f.moving and not f.base:
                nf.Ia, nf.Fv, nf.Fc = p[f"Ia_{k}"], p[f"Fv_{k}"], p[f"Fc_{k}"]
            else:
                nf.Ia = nf.Fv = nf.Fc = 0.0
            self.frames.append(nf)
        self.by_key = {nf.key: nf for nf in self.frames}
        # end effector name -> (carrying frame, frameR_ee, frameP_ee)
        self.ee = {e.name: (e.frame, np.array(e.rotation.tolist(), dtype=float),
                            np.array([float(o) for o in e.origin])) for e in model.end_effectors}

    def _resolve(self, key):
        """(frame whose chain moves it, key of its pose in fk()) of a frame key or end-effector name."""
        return (self.ee[key][0], ("ee", key)) if key in self.ee else (key, key)

    # ---- kinematics -------------------------------------------------------
    def local_transform(self, nf, q):
        if nf.type == "revolute":
            return nf.R0 @ rot(nf.axis, q[nf.index]), nf.origin
        if nf.type == "prismatic":
            return nf.R0, nf.origin + nf.R0 @ nf.axis * q[nf.index]
        return nf.R0, nf.origin

    def fk(self, q):
        """World pose {key: (R, p)} of every frame ("0" is the identity)."""
        q = np.asarray(q, dtype=float)
        poses = {"0": (np.eye(3), np.zeros(3))}
        for nf in self.frames:
            Rp, pp = poses[nf.parent]
            Rl, pl = self.local_transform(nf, q)
            poses[nf.key] = (Rp @ Rl, pp + Rp @ pl)
        for name, (key, Re, pe) in self.ee.items():
            R, p = poses[key]
            poses[("ee", name)] = (R @ Re, p + R @ pe)
        return poses

    def pose(self, q, key):
        return self.fk(q)[self._resolve(key)[1]]

    def potential_energy(self, q):
        poses = self.fk(q)
        U = 0.0
        for nf in self.frames:
            R, p = poses[nf.key]
            U -= self.gvec @ (nf.m * p + R @ nf.MS)
        return U

    def chain(self, key):
        out = []
        while key != "0":
            nf = self.by_key[key]
            out.append(nf)
            key = nf.parent
        return out[::-1]

    def frame_jacobian(self, q, key, frame="world", poses=None):
        """Geometric Jacobian (6 x ndof, rows [v; w]) of frame `key` (or of an
        end-effector name), at the frame origin, expressed in frame 0
        ("world") or in the frame itself ("local")."""
        key, pose_key = self._resolve(key)
        poses = self.fk(q) if poses is None else poses
        R, p = poses[pose_key]
        J = np.zeros((6, self.ndof))
        for nf in self.chain(key):
            if nf.type == "fixed":
                continue
            Rj, pj = poses[nf.key]
            a = Rj @ nf.axis  # the axis is the same in the frame and in its parent
            if nf.type == "revolute":
                J[:3, nf.index] = np.cross(a, p - pj)
                J[3:, nf.index] = a
            else:
                J[:3, nf.index] = a
        if frame == "local":
            J = np.vstack([R.T @ J[:3], R.T @ J[3:]])
        elif frame != "world":
            raise ValueError(frame)
        return J

    # ---- dynamics -----------------------------------------------------------
    def mass_matrix(self, q):
        """A = sum_k J_k^T M_k J_k + diag(Ia) with M_k the 6x6 spatial inertia
        of frame k about its origin, in world axes, for twists [v; w]."""
        poses = self.fk(q)
        A = np.zeros((self.ndof, self.ndof))
        for nf in self.frames:
            R, _ = poses[nf.key]
            Jk = self.frame_jacobian(q, nf.key, "world", poses)
            c = hat(R @ nf.MS)
            M = np.zeros((6, 6))
            M[:3, :3] = nf.m * np.eye(3)
            M[:3, 3:] = -c
            M[3:, :3] = c
            M[3:, 3:] = R @ nf.J @ R.T
            A += Jk.T @ M @ Jk
        for nf in self.frames:
            if nf.type != "fixed":
                A[nf.index, nf.index] += nf.Ia
        return A

    def kinetic_energy(self, q, dq):
        dq = np.asarray(dq, dtype=float)
        return 0.5 * dq @ self.mass_matrix(q) @ dq

    def christoffel_C(self, q, dq, h=1e-6):
        """C_ij = sum_k 1/2 (dA_ij/dq_k + dA_ik/dq_j - dA_jk/dq_i) dq_k with
        the partial derivatives of mass_matrix by central differences."""
        dA = partials(self.mass_matrix, q, h)  # dA[k] = dA/dq_k
        dq = np.asarray(dq, dtype=float)
        t1 = np.einsum("kij,k->ij", dA, dq)
        t2 = np.einsum("jik,k->ij", dA, dq)
        t3 = np.einsum("ijk,k->ij", dA, dq)
        return 0.5 * (t1 + t2 - t3)

    def gravity_fd(self, q, h=1e-6):
        """Q = dU/dq by central differences of potential_energy."""
        return gradient_fd(self.potential_energy, q, h)

    def friction(self, dq):
        dq = np.asarray(dq, dtype=float)
        Fv = np.zeros(self.ndof)
        Fc = np.zeros(self.ndof)
        for nf in self.frames:
            if nf.type != "fixed":
                Fv[nf.index], Fc[nf.index] = nf.Fv, nf.Fc
        return Fv * dq + Fc * np.sign(dq)

    # ---- finite-difference Jacobians ----------------------------------------
    def frame_jacobian_fd(self, q, key, h=1e-6):
        """(J_world, J_local) of frame `key` by central differences of fk:
        v columns from the origin position, w columns from vee(dR/dq R^T)."""
        key = self._resolve(key)[1]
        q = np.asarray(q, dtype=float)
        R, _ = self.fk(q)[key]
        Jw = np.zeros((6, self.ndof))
        for j in range(self.ndof):
            e = np.zeros(self.ndof)
            e[j] = h
            Rp, pp = self.fk(q + e)[key]
            Rm, pm = self.fk(q - e)[key]
            Jw[:3, j] = (pp - pm) / (2 * h)
            W = (Rp - Rm) / (2 * h) @ R.T
            Jw[3:, j] = vee(0.5 * (W - W.T))
        Jl = np.vstack([R.T @ Jw[:3], R.T @ Jw[3:]])
        return Jw, Jl


# --------------------------------------------------------------------------
# finite differences

def gradient_fd(f, x, h=1e-6):
    """Central-difference gradient of a scalar function."""
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def partials(F, x, h=1e-6):
    """Stack of central-difference partial derivatives dF/dx_k of an array function."""
    x = np.asarray(x, dtype=float)
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out.append((np.asarray(F(x + e)) - np.asarray(F(x - e))) / (2 * h))
    return np.array(out)


def time_derivative_fd(F, q, dq, h=1e-6):
    """d/dt F(q(t)) along dq: (F(q + h dq) - F(q - h dq)) / 2h."""
    q = np.asarray(q, dtype=float)
    dq = np.asarray(dq, dtype=float)
    return (np.asarray(F(q + h * dq)) - np.asarray(F(q - h * dq))) / (2 * h)


def velocity_product_fd(Afun, q, dq, h=1e-6):
    """The Lagrangian velocity-product vector c(q, dq) = Adot dq - dT/dq with
    T = 1/2 dq^T A(q) dq, both by central differences of A. For any valid
    factorization C(q, dq) dq = c(q, dq)."""
    dq = np.asarray(dq, dtype=float)
    Adot = time_derivative_fd(Afun, q, dq, h)
    dT = gradient_fd(lambda x: 0.5 * dq @ np.asarray(Afun(x)) @ dq, q, h)
    return Adot @ dq - dT


def rel_err(value, reference):
    """max |value - reference| / (1 + max |reference|)."""
    value = np.asarray(value, dtype=float)
    reference = np.asarray(reference, dtype=float)
    if value.shape != reference.shape:
        raise AssertionError(f"shape {value.shape} != reference shape {reference.shape}")
    return float(np.max(np.abs(value - reference)) / (1.0 + np.max(np.abs(reference))))


def worst_entry(value, reference):
    """(index, value, reference) of the largest absolute difference, for messages."""
    d = np.abs(np.asarray(value, dtype=float) - np.asarray(reference, dtype=float))
    idx = np.unravel_index(int(np.argmax(d)), d.shape)
    return idx, float(np.asarray(value)[idx]), float(np.asarray(reference)[idx])

"""JAX-traceable kernels of a generated robot module: XLA FFI custom calls on CPU, derivatives from the
analytical derivative kernels (docs/jax.md).

    import jax
    jax.config.update("jax_enable_x64", True)
    import krang_kernels, krang_kernels.jax as kj
    robot = kj.wrap(krang_kernels)                 # or a module from codegen.import_urdf
    ddq = jax.jit(robot.forward_dynamics)(q, v, tau)

Each function calls the robot's C kernel through one FFI handler (kernel_call.cc) that receives the
kernel's address as an attribute: no Python and no GIL in the call, a C loop over the states of a
vmap. jit, vmap, jvp, grad, jacfwd and jacrev work to first order: the JVP rules are the derivative
kernels (Carpentier and Mansard 2018: d ddq/dq, d ddq/dv, A^-1; d tau/dq, d tau/dv, A), the joint-torque
regressor for the parameters the dynamics are linear in (tau = Y p[REGRESSOR_PARAM_INDEX]) and central
differences for the other parameters (geometry, g). The derivative kernels themselves are not
differentiable again (no second derivatives). JAX is an optional dependency: `import krang_kernels`
never imports this package.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from . import _build

__all__ = ["Robot", "wrap"]

TARGET = "krang_kernel_call"
_REGISTERED: list = []
_HEADER_PREFIX = re.compile(rb"^void (\w+)_compute_A\(const double \*q, const double \*p, double \*A\);$", re.M)
# Central differences on the parameters the dynamics are not linear in: step relative to the value
# (h ~ eps^(1/3) balances truncation and rounding, ~1e-10 relative error for smooth kernels).
FD_STEP = 6e-6
# The kernels with a batch form NAME_<kernel>_batch (the SIMD batch kernels, docs/c-abi.md): a vmap of
# them is one call of it (kernel_call.cc's batch_fn) when every state shares one parameter vector.
BATCHED = ("compute_A", "bias", "forward_dynamics", "inverse_dynamics")


def _register() -> None:
    """Compile (once per user) and register the FFI handler with XLA, once per process."""
    if _REGISTERED:
        return
    import jaxlib
    lib = _build.shim(jax.ffi.include_dir(), jaxlib.__version__)
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(lib.KrangKernelCall), platform="cpu")
    _REGISTERED.append(lib)


def _sources(module) -> tuple:
    """(NAME_kernels, its C bytes, its header bytes) of a generated module or of krang_kernels."""
    name = getattr(module, "__name__", "")
    if name in ("krang_kernels", "krang_kernels._kernels"):
        import krang_kernels
        c = Path(krang_kernels.get_sources()[0])
        return "krang_kernels", _read(c), _read(c.with_suffix(".h") if c.with_suffix(".h").is_file()
                                                else Path(krang_kernels.get_include()) / "krang_kernels.h")
    file = getattr(module, "__file__", None)
    if not file:
        raise TypeError(f"krang_kernels.jax.wrap: expected a module built by codegen.import_urdf, got {module!r}")
    stem, directory = name.rsplit(".", 1)[-1], Path(file).parent
    c, h = directory / f"{stem}.c", directory / f"{stem}.h"
    if not (c.is_file() and h.is_file()):
        raise ValueError(f"krang_kernels.jax.wrap: {directory} holds no {stem}.c and {stem}.h (a module built "
                         "with cache=False keeps no sources: build it with codegen.import_urdf's cache)")
    return stem, _read(c), _read(h)


def _read(path: Path) -> bytes:
    """A source file's bytes, if it is this user's regular file that nobody else may write: its C is
    compiled and loaded into this process (the module cache's rule, codegen/build/cache.py)."""
    import os
    with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as f:
        reason = _build._distrust(os.fstat(f.fileno()), str(path), directory=False)
        if reason:
            raise PermissionError(f"krang_kernels.jax.wrap: not compiling {path}: {reason}")
        return f.read()


@dataclasses.dataclass(frozen=True)
class _Kernel:
    """One C kernel as an FFI call: its address, C signature and the shapes of one state's arguments."""
    address: int
    pattern: int  # kernel_call.cc's Invoke: 0 pointers only; 1 (P, P, int, P); 3 (P, P, int, int, P); 4-6 contacts
    slots: tuple  # kernel_call.cc's slot codes, one per C argument
    inputs: tuple  # per input: its shape for one state
    outputs: tuple  # per output: its shape for one state
    batch: int = 0  # the address of NAME_<kernel>_batch (the module's batch kernels), 0 if none

    def __call__(self, *args):
        args = [jnp.asarray(a, jnp.float64) for a in args]
        batch = None
        for a, shape in zip(args, self.inputs):  # leading dimensions beyond one state's: a batch
            extra = a.shape[:a.ndim - len(shape)]
            if a.shape[a.ndim - len(shape):] != shape:
                raise ValueError(f"expected an argument of shape {shape} (or a batch of them), got {a.shape}")
            if extra and batch is not None and extra != batch:
                raise ValueError(f"batch shapes differ: {batch} and {extra}")
            batch = extra or batch
        if batch:  # a batch given directly: a vmap over its leading axes (one C loop in the handler)
            fn = self.__call__
            for _ in batch:
                fn = jax.vmap(fn, in_axes=[0 if a.ndim > len(s) else None for a, s in zip(args, self.inputs)])
            return fn(*args)
        call = jax.ffi.ffi_call(TARGET, tuple(jax.ShapeDtypeStruct(s, jnp.float64) for s in self.outputs),
                                vmap_method="broadcast_all")
        out = call(*args, fn=np.int64(self.address), pattern=np.int64(self.pattern),
                   slots=np.asarray(self.slots, np.int64),
                   in_sizes=np.asarray([int(np.prod(s)) for s in self.inputs], np.int64),
                   out_sizes=np.asarray([int(np.prod(s)) for s in self.outputs], np.int64),
                   batch_fn=np.int64(self.batch))
        return out[0] if len(out) == 1 else tuple(out)


def _library_addresses(module) -> Callable:
    """name (compute_A, fk, ...) -> the C address of NAME_name: from the module's C_FUNCTIONS mapping
    where the module has one (the same name -> address, taken inside the module: nothing to compile),
    else from a library compiled from the module's C (_build.robot_library)."""
    table = getattr(module, "C_FUNCTIONS", None)
    if table is not None:
        def lookup(name: str) -> int:
            if name not in table:
                raise AttributeError(f"krang_kernels.jax: the module has no {name} (a kernel left out of the "
                                     "build: import_urdf(..., kernels=...))")
            return int(table[name])
        return lookup
    stem, c_text, h_text = _sources(module)
    found = _HEADER_PREFIX.search(h_text)
    if found is None:
        raise ValueError(f"krang_kernels.jax.wrap: {stem}.h declares no NAME_compute_A")
    lib, prefix = _build.robot_library(stem, c_text, h_text), found.group(1).decode("ascii")

    def lookup(name: str) -> int:
        try:
            return _address(getattr(lib, f"{prefix}_{name}"))
        except AttributeError:
            raise AttributeError(f"krang_kernels.jax: the robot's library has no {prefix}_{name} (a kernel "
                                 "left out of the build: import_urdf(..., kernels=...))") from None
    return lookup


def _address(fn) -> int:
    import ctypes
    return ctypes.cast(fn, ctypes.c_void_p).value


def _is_zero(t) -> bool:
    return isinstance(t, jax.custom_derivatives.SymbolicZero)


@dataclasses.dataclass(frozen=True, eq=False)
class Robot:
    """A robot's kernels as JAX functions (wrap()). Arrays are float64 (jax_enable_x64); q has N_Q
    entries, v, tau and accelerations N_DOF; p (params) defaults to the module's default_params().
    Every function takes one state or a batch (leading axes), and works under jit, vmap and grad."""
    module: object
    n_dof: int
    n_q: int
    n_params: int
    end_effectors: tuple
    default_params: np.ndarray
    regressor_index: np.ndarray  # the parameters tau is linear in (REGRESSOR_PARAM_INDEX)
    other_index: np.ndarray  # the others (geometry, g): differentiated by central differences
    differentiate_geometry: bool  # False: the derivatives in p[other_index] are taken as zero
    kernels: dict
    forward_dynamics: Callable = dataclasses.field(init=False)
    inverse_dynamics: Callable = dataclasses.field(init=False)
    _fk: Callable = dataclasses.field(init=False)
    bias: Callable = dataclasses.field(init=False)
    _constrained: Callable = dataclasses.field(init=False)
    _impulse: Callable = dataclasses.field(init=False)

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "forward_dynamics", self._make_dynamics("forward_dynamics"))
        set_(self, "inverse_dynamics", self._make_dynamics("inverse_dynamics"))
        set_(self, "_fk", self._make_fk())
        set_(self, "bias", self._make_bias())
        set_(self, "_constrained", self._make_constrained() or _missing(self, "constrained_dynamics"))
        set_(self, "_impulse", self._make_impulse() or _missing(self, "impulse_dynamics"))

    # ---- plain kernels (no derivative rule of their own) -------------------------------------------
    def _p(self, p):
        return jnp.asarray(self.default_params if p is None else p, jnp.float64)

    def compute_A(self, q, p=None):
        """Inertia matrix A(q), N_DOF x N_DOF."""
        return self.kernels["compute_A"](q, self._p(p))

    def regressor(self, q, v, a, p=None):
        """Joint-torque regressor Y (N_DOF x N_PI): tau = Y @ p[REGRESSOR_PARAM_INDEX]."""
        return self.kernels["regressor"](q, v, a, self._p(p))

    def forward_dynamics_derivatives(self, q, v, tau, p=None):
        """(d ddq/dq, d ddq/dv, d ddq/dtau = A^-1), N_DOF x N_DOF each (q: tangent space, N_DOF columns)."""
        return self.kernels["forward_dynamics_derivatives"](q, v, tau, self._p(p))

    def inverse_dynamics_derivatives(self, q, v, a, p=None):
        """(d tau/dq, d tau/dv), N_DOF x N_DOF each (d tau/da is compute_A; q: tangent space)."""
        return self.kernels["inverse_dynamics_derivatives"](q, v, a, self._p(p))

    def jacobian(self, q, ee, frame: str = "world", p=None):
        """End-effector Jacobian, 6 x N_DOF, linear rows first; frame "world" or "local"."""
        return self.kernels[("jacobian", self._ee(ee), {"world": 0, "local": 1}[frame])](q, self._p(p))

    def fk(self, q, ee, p=None):
        """Pose of end effector `ee` (name or index), 4 x 4 homogeneous, differentiable in q and p."""
        return self._fk(q, self._p(p), self._ee(ee))

    def _ee(self, ee) -> int:
        if isinstance(ee, str):
            if ee not in self.end_effectors:
                raise ValueError(f"unknown end effector {ee!r}; the robot's are {self.end_effectors}")
            return self.end_effectors.index(ee)
        if not 0 <= int(ee) < len(self.end_effectors):
            raise ValueError(f"end effector index {ee} out of range (0..{len(self.end_effectors) - 1})")
        return int(ee)

    # ---- contacts (docs/contact-dynamics.md; a model built with contacts=[...]) ------------------------
    def _contact(self, name: str):
        if name not in self.kernels:
            raise AttributeError(f"krang_kernels.jax: {name} needs a module built with contacts (import_urdf(..., "
                                 "contacts=[...])) and the contact kernels")
        return self.kernels[name]

    def contact_flags(self, mask):
        """The active contacts as N_CONTACTS flags (float64, 0 or 1), from an int (bit k: CONTACT_NAMES[k]),
        contact names, N_CONTACTS bools, or an array of flags (traced or not: e.g. a gait schedule in a
        lax.scan; its entries must be 0 or 1, checked in the call)."""
        names = tuple(self.module.CONTACT_NAMES)
        nc = len(names)
        if isinstance(mask, (bool, np.bool_)) or isinstance(mask, (str, bytes)):
            raise TypeError(f"mask: an int, N_CONTACTS flags or contact names, not {type(mask).__name__}")
        if isinstance(mask, (int, np.integer)):
            if not 0 <= mask < (1 << nc):
                raise ValueError(f"mask {mask!r}: bits 0..{nc - 1} only (N_CONTACTS = {nc})")
            return jnp.asarray([float((int(mask) >> j) & 1) for j in range(nc)], jnp.float64)
        if isinstance(mask, (list, tuple)) and mask and all(isinstance(x, str) for x in mask):
            unknown = [x for x in mask if x not in names]
            if unknown:
                raise ValueError(f"mask: {unknown[0]!r} is not a contact (CONTACT_NAMES: {', '.join(names)})")
            return jnp.asarray([float(x in mask) for x in names], jnp.float64)
        flags = jnp.asarray(mask, jnp.float64)
        if flags.shape[-1:] != (nc,):
            raise ValueError(f"mask: {nc} flags (one per contact), an int or contact names, got shape {flags.shape}")
        if not isinstance(flags, jax.core.Tracer) and not np.isin(np.asarray(flags), (0.0, 1.0)).all():
            raise ValueError("mask: flags must be 0 or 1")
        return flags

    def _ref(self, ref):
        """The reference placements (N_REF), default the world's origin and axes; a concrete 6d pose's R
        is checked to be a rotation (as the module does)."""
        if ref is None:
            ident = [1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0]
            return jnp.asarray([x for r in self.module.CONTACT_ROWS for x in ([0.0] * 3 if r == 3 else ident)],
                               jnp.float64)
        ref = jnp.asarray(ref, jnp.float64)
        if ref.shape[-1:] != (int(self.module.N_REF),):
            raise ValueError(f"ref: expected {self.module.N_REF} entries (N_REF), got shape {ref.shape}")
        if not isinstance(ref, jax.core.Tracer):
            at = 0
            for name, rows in zip(self.module.CONTACT_NAMES, self.module.CONTACT_ROWS):
                if rows == 6:
                    R = np.asarray(ref)[..., at:at + 12].reshape(ref.shape[:-1] + (3, 4))[..., :3]
                    if not (np.allclose(R @ np.swapaxes(R, -1, -2), np.eye(3), atol=1e-9)
                            and np.allclose(np.linalg.det(R), 1.0, atol=1e-9)):
                        raise ValueError(f"ref: the rotation of contact {name!r} is not a rotation matrix (to 1e-9)")
                at += 3 if rows == 3 else 12
        return ref

    @staticmethod
    def _scalars(**values):
        """Gains, damping, restitution as one float64 vector; concrete ones checked (>= 0, finite), traced
        ones in the call (the handler refuses a negative or non-finite value)."""
        for name, x in values.items():
            if not isinstance(x, jax.core.Tracer) and not (np.all(np.asarray(x) >= 0) and np.all(np.isfinite(x))):
                raise ValueError(f"{name} must be finite and >= 0, got {x!r}")
        return jnp.stack([jnp.asarray(x, jnp.float64) for x in values.values()], axis=-1)

    def contact_jacobian(self, q, mask, p=None):
        """Jc of the active contacts, N_CROWS x N_DOF, the active rows first (values only)."""
        return self._contact("contact_jacobian")(q, self._p(p), self.contact_flags(mask))

    def contact_drift(self, q, v, mask, p=None):
        """gamma = dJc/dt v of the active contacts, N_CROWS, the active rows first (values only)."""
        return self._contact("contact_drift")(q, v, self._p(p), self.contact_flags(mask))

    def constrained_dynamics(self, q, v, tau, mask, kp=0.0, kd=0.0, mu=0.0, ref=None, p=None):
        """(ddq, lambda_c): forward dynamics with the active contacts held (the module's
        constrained_dynamics). Differentiable (jvp/grad) in q, v and tau by constrained_dynamics_derivatives,
        in p by the regressor through d/dtau (the other parameters, g and any geometry, by central
        differences, as forward_dynamics); the mask is piecewise constant (its derivative is zero); kp,
        kd, mu and ref are not differentiable: a derivative through them raises. A batch on q, v, tau
        (leading axes) is a vmap."""
        return self._constrained(jnp.asarray(q, jnp.float64), jnp.asarray(v, jnp.float64),
                                 jnp.asarray(tau, jnp.float64), self._p(p), self.contact_flags(mask),
                                 self._scalars(kp=kp, kd=kd, mu=mu), self._ref(ref))

    def constrained_dynamics_derivatives(self, q, v, tau, mask, kp=0.0, kd=0.0, mu=0.0, ref=None, p=None):
        """(d ddq/dq, d ddq/dv, d ddq/dtau, d lambda/dq, d lambda/dv, d lambda/dtau), q on the tangent space."""
        return self._contact("constrained_dynamics_derivatives")(
            q, v, tau, self._p(p), self.contact_flags(mask), self._scalars(kp=kp, kd=kd, mu=mu), self._ref(ref))

    def impulse_dynamics(self, q, v, mask, restitution=0.0, mu=0.0, p=None):
        """(v_plus, impulse) after an impact of the active contacts (the module's impulse_dynamics).
        Differentiable in q and v by impulse_dynamics_derivatives; the mask's derivative is zero; a
        derivative in restitution, mu or p raises."""
        return self._impulse(jnp.asarray(q, jnp.float64), jnp.asarray(v, jnp.float64), self._p(p),
                             self.contact_flags(mask), self._impact_scalars(restitution, mu))

    def impulse_dynamics_derivatives(self, q, v, mask, restitution=0.0, mu=0.0, p=None):
        """(d v_plus/dq, d v_plus/dv, d impulse/dq, d impulse/dv), q on the tangent space (values only)."""
        return self._contact("impulse_dynamics_derivatives")(
            q, v, self._p(p), self.contact_flags(mask), self._impact_scalars(restitution, mu))

    def _impact_scalars(self, restitution, mu):
        if not isinstance(restitution, jax.core.Tracer) and not np.all(np.asarray(restitution) <= 1.0):
            raise ValueError(f"restitution must be in [0, 1], got {restitution!r}")
        return self._scalars(restitution=restitution, mu=mu)

    def _make_constrained(self):
        if "constrained_dynamics" not in self.kernels:
            return None
        value, deriv = self.kernels["constrained_dynamics"], self.kernels.get("constrained_dynamics_derivatives")
        regressor = self.kernels["regressor"]

        @jax.custom_jvp
        def f(q, v, u, p, flags, gains, ref):
            return value(q, v, u, p, flags, gains, ref)

        def jvp(primals, tangents):
            q, v, u, p, flags, gains, ref = primals
            qt, vt, ut, pt, _, gt, rt = tangents  # the flags' tangent: piecewise constant, zero
            _refuse(("kp, kd, mu", gt), ("ref", rt))
            y = value(*primals)
            if deriv is None:
                raise NotImplementedError("constrained_dynamics: the module has no constrained_dynamics_derivatives")
            D = deriv(*primals)
            t_ddq, t_lam = jnp.zeros_like(y[0]), jnp.zeros_like(y[1])
            for t, a, b in ((None if _is_zero(qt) else self.to_tangent(q, qt), D[0], D[3]),
                            (None if _is_zero(vt) else vt, D[1], D[4]), (None if _is_zero(ut) else ut, D[2], D[5])):
                if t is not None:
                    t_ddq, t_lam = t_ddq + a @ t, t_lam + b @ t
            if not _is_zero(pt):
                # A ddq + b - Jc^T lambda = tau with ID linear in the inertial and actuator parameters
                # (the regressor at the solution): raising ID by Y dp is lowering tau by it
                dp = regressor(q, v, y[0], p) @ pt[self.regressor_index]
                t_ddq, t_lam = t_ddq - D[2] @ dp, t_lam - D[5] @ dp
                if len(self.other_index) and self.differentiate_geometry:
                    cols = self._other_columns(
                        lambda q_, p_: jnp.concatenate(value(q_, v, u, p_, flags, gains, ref)), q, p)
                    t_o = cols @ pt[self.other_index]
                    t_ddq, t_lam = t_ddq + t_o[:self.n_dof], t_lam + t_o[self.n_dof:]
            return y, (t_ddq, t_lam)

        f.defjvp(jvp, symbolic_zeros=True)
        return _batched_n(f, 3)

    def _make_impulse(self):
        if "impulse_dynamics" not in self.kernels:
            return None
        value, deriv = self.kernels["impulse_dynamics"], self.kernels["impulse_dynamics_derivatives"]

        @jax.custom_jvp
        def f(q, v, p, flags, scalars):
            return value(q, v, p, flags, scalars)

        def jvp(primals, tangents):
            q, v, p, flags, scalars = primals
            qt, vt, pt, _, st = tangents  # the flags' tangent: piecewise constant, zero
            _refuse(("p", pt), ("restitution, mu", st))
            y = value(*primals)
            t_v, t_imp = jnp.zeros_like(y[0]), jnp.zeros_like(y[1])
            if _is_zero(qt) and _is_zero(vt):
                return y, (t_v, t_imp)
            D = deriv(*primals)
            for t, a, b in ((None if _is_zero(qt) else self.to_tangent(q, qt), D[0], D[2]),
                            (None if _is_zero(vt) else vt, D[1], D[3])):
                if t is not None:
                    t_v, t_imp = t_v + a @ t, t_imp + b @ t
            return y, (t_v, t_imp)

        f.defjvp(jvp, symbolic_zeros=True)
        return _batched_n(f, 2)

    # ---- derivative rules ----------------------------------------------------------------------------
    def to_tangent(self, q, qdot):
        """A change of q (N_Q) as a tangent vector (N_DOF), the derivative kernels' q-coordinates.
        Fixed base: itself. Free-flying base (q = position, quaternion x y z w, joints): the linear part in
        base axes (R^T pdot) and the angular velocity 2 vec(conj(u) * qdot_quat) / |quat| with
        u = quat / |quat| (Pinocchio's integrate, q (+) delta); the part of qdot_quat along the quaternion
        (its norm, which no kernel reads: a quaternion acts as its normalized self) maps to zero."""
        if self.n_q == self.n_dof:
            return qdot
        quat = q[..., 3:7]
        s = jnp.linalg.norm(quat, axis=-1, keepdims=True)
        u = quat / s
        x, y, z, w = (u[..., i] for i in range(4))
        R = jnp.stack([jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                       jnp.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                       jnp.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)
        lin = jnp.einsum("...ji,...j->...i", R, qdot[..., 0:3])
        b = qdot[..., 3:7]
        ang = 2 * (w[..., None] * b[..., :3] - b[..., 3:4] * u[..., :3] - jnp.cross(u[..., :3], b[..., :3])) / s
        return jnp.concatenate([lin, ang, qdot[..., 7:]], axis=-1)

    def _other_columns(self, f, q, p):
        """d f / d p[other_index] by central differences: a batch of 2 x len(other_index) calls, one FFI call."""
        idx = self.other_index
        h = FD_STEP * jnp.maximum(1.0, jnp.abs(p[idx]))
        steps = jnp.zeros((len(idx), self.n_params)).at[jnp.arange(len(idx)), idx].set(h)
        plus, minus = jax.vmap(lambda d: f(q, p + d))(steps), jax.vmap(lambda d: f(q, p - d))(steps)
        cols = (plus - minus) / (2 * h.reshape((-1,) + (1,) * (plus.ndim - 1)))
        return jnp.moveaxis(cols, 0, -1)  # (..., len(idx))

    def _make_dynamics(self, which: str):
        forward = which == "forward_dynamics"
        value, deriv, regressor = self.kernels[which], self.kernels[f"{which}_derivatives"], self.kernels["regressor"]
        A = self.kernels["compute_A"]

        @jax.custom_jvp
        def f(q, v, u, p):
            return value(q, v, u, p)

        def jvp(primals, tangents):
            q, v, u, p = primals
            qt, vt, ut, pt = tangents
            y = value(q, v, u, p)
            # only the kernels a nonzero tangent needs (a constant argument's is a symbolic zero): in a
            # rollout, gravity compensation inverse_dynamics(q, 0, 0, p) needs neither A nor d/dv's work
            if forward:
                d_q, d_v, d_u = deriv(q, v, u, p)  # one kernel gives all three (d_u = A^-1 also for p)
            else:
                d_q, d_v = deriv(q, v, u, p) if not (_is_zero(qt) and _is_zero(vt)) else (None, None)
                d_u = A(q, p) if not _is_zero(ut) else None
            t = jnp.zeros_like(y)
            if not _is_zero(qt):
                t = t + d_q @ self.to_tangent(q, qt)
            if not _is_zero(vt):
                t = t + d_v @ vt
            if not _is_zero(ut):
                t = t + d_u @ ut
            if not _is_zero(pt):
                # tau is linear in p[regressor_index]: d tau/dp = Y(q, v, a); forward dynamics
                # A ddq = tau - h(q, v; p) gives d ddq/dp = -A^-1 Y(q, v, ddq)
                Y = regressor(q, v, y if forward else u, p)
                dp = Y @ pt[self.regressor_index]
                t = t + (-(d_u @ dp) if forward else dp)
                if len(self.other_index) and self.differentiate_geometry:
                    t = t + self._other_columns(lambda q_, p_: value(q_, v, u, p_), q, p) @ pt[self.other_index]
            return y, t

        f.defjvp(jvp, symbolic_zeros=True)

        def call(q, v, u, p=None):
            return f(jnp.asarray(q, jnp.float64), jnp.asarray(v, jnp.float64), jnp.asarray(u, jnp.float64),
                     self._p(p))
        call.__name__ = which
        call.__doc__ = (("Forward dynamics ddq(q, v, tau, p)" if forward else "Inverse dynamics tau(q, v, a, p)")
                        + f": the module's {which}, differentiable (jvp/grad) in every argument.")
        return _batched(call, self)

    def _make_bias(self):
        """bias(q, v, p) = C v + Q + friction = inverse_dynamics(q, v, 0, p), its own kernel (and batch
        kernel) for the value, the inverse dynamics' rule at a = 0 for the derivatives."""
        value, deriv, regressor = self.kernels["bias"], self.kernels["inverse_dynamics_derivatives"], \
            self.kernels["regressor"]

        @jax.custom_jvp
        def f(q, v, p):
            return value(q, v, p)

        def jvp(primals, tangents):
            (q, v, p), (qt, vt, pt) = primals, tangents
            y, zero = value(q, v, p), jnp.zeros(self.n_dof)
            t = jnp.zeros_like(y)
            if not (_is_zero(qt) and _is_zero(vt)):
                d_q, d_v = deriv(q, v, zero, p)
                t = t + (0 if _is_zero(qt) else d_q @ self.to_tangent(q, qt)) + (0 if _is_zero(vt) else d_v @ vt)
            if not _is_zero(pt):
                t = t + regressor(q, v, zero, p) @ pt[self.regressor_index]
                if len(self.other_index) and self.differentiate_geometry:
                    t = t + self._other_columns(lambda q_, p_: value(q_, v, p_), q, p) @ pt[self.other_index]
            return y, t

        f.defjvp(jvp, symbolic_zeros=True)

        def bias(q, v, p=None):
            """Bias forces h(q, v, p) = C v + Q + friction (inverse dynamics at a = 0), differentiable."""
            q, v = jnp.asarray(q, jnp.float64), jnp.asarray(v, jnp.float64)
            if q.ndim > 1 or v.ndim > 1:
                return jax.vmap(lambda a, b: bias(a, b, p), in_axes=[0 if x.ndim > 1 else None for x in (q, v)])(q, v)
            return f(q, v, self._p(p))
        return bias

    def _make_fk(self):
        fks = {i: self.kernels[("fk", i)] for i in range(len(self.end_effectors))}
        jacs = {i: self.kernels[("jacobian", i, 0)] for i in range(len(self.end_effectors))}

        @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
        def f(ee, q, p):
            return fks[ee](q, p)

        def jvp(ee, primals, tangents):
            (q, p), (qt, pt) = primals, tangents
            T = fks[ee](q, p)
            t = jnp.zeros_like(T)
            if not _is_zero(qt):
                # the world Jacobian: d origin = J_lin delta, d R = [J_ang delta]x R
                d = jacs[ee](q, p) @ self.to_tangent(q, qt)
                lin, w = d[:3], d[3:]
                zero = jnp.zeros_like(w[0])
                W = jnp.array([[zero, -w[2], w[1]], [w[2], zero, -w[0]], [-w[1], w[0], zero]])
                t = t.at[:3, :3].add(W @ T[:3, :3]).at[:3, 3].add(lin)
            if not _is_zero(pt) and self.differentiate_geometry:  # the pose reads the geometry only
                t = t + self._other_columns(lambda q_, p_: fks[ee](q_, p_), q, p) @ pt[self.other_index]
            return T, t

        f.defjvp(jvp, symbolic_zeros=True)

        def fk(q, p, ee):
            q = jnp.asarray(q, jnp.float64)
            if q.ndim > 1:  # a batch: vmap over its leading axes
                return jax.vmap(lambda qq: fk(qq, p, ee))(q)
            return f(ee, q, p)
        return fk


def _batched(call, robot: Robot):
    """call(q, v, u, p) for one state, extended to leading batch axes on the state arguments (vmap)."""
    def g(q, v, u, p=None):
        q, v, u = (jnp.asarray(a, jnp.float64) for a in (q, v, u))
        if q.ndim > 1 or v.ndim > 1 or u.ndim > 1:
            axes = [0 if a.ndim > 1 else None for a in (q, v, u)]
            return jax.vmap(lambda a, b, c: g(a, b, c, p), in_axes=axes)(q, v, u)
        return call(q, v, u, p)
    g.__name__, g.__doc__ = call.__name__, call.__doc__
    return g


def _missing(robot, name: str) -> Callable:
    def call(*args):
        return robot._contact(name)
    return call


def _optional(address: Callable, name: str) -> int:
    """The address of an optional kernel (a batch form: modules generated before them have none), or 0."""
    try:
        return address(name)
    except AttributeError:
        return 0


def _refuse(*named_tangents) -> None:
    """A derivative through an argument without a derivative rule is an error, never a silent zero."""
    for name, t in named_tangents:
        if not _is_zero(t):
            raise NotImplementedError(f"krang_kernels.jax: no derivative with respect to {name} (docs/jax.md); "
                                      "pass it as a constant (outside the differentiated arguments)")


def _batched_n(f, n_state: int):
    """f(*args) with leading batch axes on its first n_state arguments (the state) mapped by vmap; the
    others (parameters, flags, gains, ref) shared unless they carry the same batch axis."""
    def g(*args):
        lead = [a.ndim - 1 for a in args[:n_state]]
        if max(lead) > 0:
            # every argument of one state is a vector: a second axis is a batch
            return jax.vmap(g, in_axes=[0 if a.ndim > 1 else None for a in args])(*args)
        return f(*args)
    return g


def _kernels(address: Callable, module) -> dict:
    n, nq, np_, ne = int(module.N_DOF), int(module.N_Q), len(module.PARAM_NAMES), len(module.END_EFFECTORS)
    npi = len(module.REGRESSOR_PARAM_INDEX)

    def k(c_name, inputs, outputs, pattern=0, ints=()):
        slots = list(range(len(inputs)))
        if pattern == 0:
            slots += [100 + j for j in range(len(outputs))]
        else:  # the ints sit between the inputs and the one output (kernel_call.cc's patterns 1 and 3)
            slots += [200 + i for i in ints] + [100]
        batch = _optional(address, f"{c_name}_batch") if c_name in BATCHED else 0
        return _Kernel(address(c_name), pattern, tuple(slots), tuple(inputs), tuple(outputs), batch)

    q, v, p = (nq,), (n,), (np_,)
    out = {
        "compute_A": k("compute_A", [q, p], [(n, n)]),
        "regressor": k("regressor", [q, v, v, p], [(n, npi)]),
        "forward_dynamics": k("forward_dynamics", [q, v, v, p], [v]),
        "inverse_dynamics": k("inverse_dynamics", [q, v, v, p], [v]),
        "bias": k("bias", [q, v, p], [v]),
        "forward_dynamics_derivatives": k("forward_dynamics_derivatives", [q, v, v, p], [(n, n)] * 3),
        "inverse_dynamics_derivatives": k("inverse_dynamics_derivatives", [q, v, v, p], [(n, n)] * 2),
    }
    for e in range(ne):
        out[("fk", e)] = k("fk", [q, p], [(4, 4)], pattern=1, ints=(e,))
        for frame in (0, 1):
            out[("jacobian", e, frame)] = k("jacobian", [q, p], [(6, n)], pattern=3, ints=(e, frame))
    if int(getattr(module, "N_CONTACTS", 0)) and "constrained_dynamics" in getattr(module, "C_FUNCTIONS", ()):
        out.update(_contact_kernels(address, module))
    return out


def _contact_kernels(address: Callable, module) -> dict:
    """The contact kernels (docs/contact-dynamics.md) as FFI calls: the mask is an input of N_CONTACTS
    flags (slot 3000 + k: the handler turns input k's flags into the C bit mask, refusing anything but
    0 and 1), the gains an input of doubles (slots 1000 + 100 k + j: element j of input k)."""
    n, nq, np_ = int(module.N_DOF), int(module.N_Q), len(module.PARAM_NAMES)
    nc, m, nref = int(module.N_CONTACTS), sum(module.CONTACT_ROWS), int(module.N_REF)
    q, v, p, flags, ref = (nq,), (n,), (np_,), (nc,), (nref,)

    def k(c_name, inputs, slots, outputs, pattern):
        return _Kernel(address(c_name), pattern, tuple(slots), tuple(inputs), tuple(outputs))
    gains = [1500, 1501, 1502]  # kp, kd, mu: input 5
    return {
        "contact_jacobian": k("contact_jacobian", [q, p, flags], [0, 1, 3002, 100], [(m, n)], 1),
        "contact_drift": k("contact_drift", [q, v, p, flags], [0, 1, 2, 3003, 100], [(m,)], 2),
        "constrained_dynamics": k("constrained_dynamics", [q, v, v, p, flags, (3,), ref],
                                  [0, 1, 2, 3, 3004, *gains, 6, 100, 101], [v, (m,)], 4),
        "constrained_dynamics_derivatives": k(
            "constrained_dynamics_derivatives", [q, v, v, p, flags, (3,), ref],
            [0, 1, 2, 3, 3004, *gains, 6, *range(100, 106)], [(n, n)] * 3 + [(m, n)] * 3, 5),
        "impulse_dynamics": k("impulse_dynamics", [q, v, p, flags, (2,)], [0, 1, 2, 3003, 1400, 1401, 100, 101],
                              [v, (m,)], 6),
        "impulse_dynamics_derivatives": k(
            "impulse_dynamics_derivatives", [q, v, p, flags, (2,)], [0, 1, 2, 3003, 1400, 1401, *range(100, 104)],
            [(n, n)] * 2 + [(m, n)] * 2, 7),
    }


def wrap(module, *, differentiate_geometry: bool = True) -> Robot:
    """The kernels of a generated robot module (codegen.import_urdf's, or krang_kernels) as JAX functions.

    Compiles, once per user and cached, the FFI handler and (unless the module maps its kernels' names
    to their addresses in C_FUNCTIONS) the module's C into a shared library (a C++ and a C compiler are
    needed the first time), and registers the handler with XLA. Needs
    jax_enable_x64 (float64): raises RuntimeError otherwise. The module must have the derivative
    kernels (import_urdf's default kernels=None builds them).

    differentiate_geometry=False: the derivatives with respect to the parameters the dynamics are not
    linear in (lengths, g: not in REGRESSOR_PARAM_INDEX) are taken as zero instead of computed by
    central differences. JAX cannot tell which entries of a parameter vector a gradient flows
    through, so with the default a derivative in p costs 2 x (their number) extra kernel calls
    (batched in one FFI call) per call; a fit of inertial parameters alone does not need them."""
    if not jax.config.jax_enable_x64:
        raise RuntimeError("krang_kernels.jax needs float64: jax.config.update('jax_enable_x64', True) first")
    _register()
    address = _library_addresses(module)
    index = np.asarray(module.REGRESSOR_PARAM_INDEX, np.int64)
    other = np.setdiff1d(np.arange(len(module.PARAM_NAMES)), index)
    return Robot(module=module, n_dof=int(module.N_DOF), n_q=int(module.N_Q), n_params=len(module.PARAM_NAMES),
                 end_effectors=tuple(module.END_EFFECTORS), default_params=np.asarray(module.default_params()),
                 regressor_index=index, other_index=other, differentiate_geometry=bool(differentiate_geometry),
                 kernels=_kernels(address, module))

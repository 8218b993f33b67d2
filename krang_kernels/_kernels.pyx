# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin Cython layer over the generated C ABI (generated/krang_kernels.h):
it checks, casts and calls. Every argument is checked (type, dtype, shape,
contiguity, finiteness) before the C kernel runs; conveniences live in
krang_kernels/__init__.py.
"""
cimport numpy as cnp
from libc.math cimport isfinite

import numpy as np

cnp.import_array()

cdef extern from "krang_kernels.h":
    enum:
        KRANG_NDOF
        KRANG_NP
        KRANG_LEFT
        KRANG_RIGHT
        KRANG_WORLD
        KRANG_LOCAL
    void krang_compute_A(const double *q, const double *p, double *A) nogil
    void krang_compute_C(const double *q, const double *dq, const double *p, double *C) nogil
    void krang_compute_Q(const double *q, const double *p, double *Q) nogil
    void krang_jacobian(const double *q, const double *p, int arm, int frame, double *J) nogil
    void krang_friction(const double *dq, const double *p, double *tau_f) nogil
    void krang_compute_all(const double *q, const double *dq, const double *p, double *A, double *C,
                           double *Q, double *J_left, double *J_right) nogil
    void krang_default_params(double *p) nogil
    const char *krang_param_name(int i) nogil
    const char *krang_joint_name(int i) nogil

N_DOF = KRANG_NDOF
N_PARAMS = KRANG_NP
JOINT_NAMES = tuple(krang_joint_name(i).decode() for i in range(KRANG_NDOF))
PARAM_NAMES = tuple(krang_param_name(i).decode() for i in range(KRANG_NP))
ARMS = {"left": KRANG_LEFT, "right": KRANG_RIGHT}
FRAMES = {"world": KRANG_WORLD, "local": KRANG_LOCAL}

cdef cnp.ndarray _DEFAULT = np.empty(KRANG_NP)
krang_default_params(<double *>cnp.PyArray_DATA(_DEFAULT))
_DEFAULT.flags.writeable = False


def default_params():
    """The default parameter vector (a new float64 array, PARAM_NAMES order)."""
    return _DEFAULT.copy()


cdef object _coerce(object x, str name, Py_ssize_t n):
    """Slow path: anything array-like of n real numbers -> contiguous float64."""
    try:
        a = np.asarray(x)
    except Exception as exc:
        raise TypeError(f"{name} must be an array of {n} real numbers: {exc}") from None
    if a.dtype.kind not in "iuf" or a.dtype == np.bool_:
        raise TypeError(f"{name} must hold real numbers (float64), got dtype {a.dtype}")
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


cdef inline bint _ready(object x, Py_ssize_t n):
    """Already a contiguous float64 vector of length n (the fast path)?"""
    return (type(x) is np.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1 and cnp.PyArray_DIM(<cnp.ndarray>x, 0) == n
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x))


cdef object _input(object x, str name, Py_ssize_t n):
    """x itself when it is already a contiguous float64 vector, else a converted copy;
    either way checked for finiteness."""
    cdef Py_ssize_t i
    cdef const double *d
    a = x if _ready(x, n) else _coerce(x, name, n)
    d = <const double *>cnp.PyArray_DATA(<cnp.ndarray>a)
    for i in range(n):
        if not isfinite(d[i]):
            raise ValueError(f"{name}[{i}] is {d[i]}: inputs must be finite")
    return a


cdef inline object _params(object params):
    if params is None:
        return _DEFAULT
    return _input(params, "params", KRANG_NP)


cdef object _out(object out, str name, Py_ssize_t rows, Py_ssize_t cols):
    cdef cnp.npy_intp dims[2]
    cdef int nd = 1 if cols == 0 else 2
    cdef cnp.ndarray a
    dims[0] = rows
    dims[1] = cols
    if out is None:
        return cnp.PyArray_EMPTY(nd, dims, cnp.NPY_DOUBLE, 0)
    if type(out) is np.ndarray:
        a = <cnp.ndarray>out
        if (cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(a) == nd
                and cnp.PyArray_DIM(a, 0) == rows and (nd == 1 or cnp.PyArray_DIM(a, 1) == cols)
                and cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_ISWRITEABLE(a)):
            return out
    if nd == 1:
        _bad_out(out, name, (rows,))
    _bad_out(out, name, (rows, cols))


cdef _bad_out(object out, str name, tuple shape):
    """Raise the error that says what is wrong with `out`."""
    if type(out) is not np.ndarray:
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(out).__name__}")
    if out.dtype != np.float64:
        raise TypeError(f"{name} must have dtype float64, got {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    raise ValueError(f"{name} must be a writeable C-contiguous array")


cdef inline double *_data(object a):
    return <double *>cnp.PyArray_DATA(<cnp.ndarray>a)


def compute_A(q, params=None, out=None):
    """Inertia matrix A(q) (N_DOF x N_DOF, rotor inertia included)."""
    q = _input(q, "q", KRANG_NDOF)
    params = _params(params)
    out = _out(out, "out", KRANG_NDOF, KRANG_NDOF)
    krang_compute_A(_data(q), _data(params), _data(out))
    return out


def compute_C(q, dq, params=None, out=None):
    """Christoffel Coriolis matrix C(q, dq) (N_DOF x N_DOF): C dq are the Coriolis torques."""
    q = _input(q, "q", KRANG_NDOF)
    dq = _input(dq, "dq", KRANG_NDOF)
    params = _params(params)
    out = _out(out, "out", KRANG_NDOF, KRANG_NDOF)
    krang_compute_C(_data(q), _data(dq), _data(params), _data(out))
    return out


def compute_Q(q, params=None, out=None):
    """Gravity torques Q(q) = dU/dq (N_DOF,)."""
    q = _input(q, "q", KRANG_NDOF)
    params = _params(params)
    out = _out(out, "out", KRANG_NDOF, 0)
    krang_compute_Q(_data(q), _data(params), _data(out))
    return out


def jacobian(q, arm, frame="world", params=None, out=None):
    """Jacobian (6 x N_DOF, linear rows first) of the `arm` ("left"/"right")
    end effector, in frame "world" (frame 0) or "local" (the end-effector frame)."""
    cdef int a, f
    try:
        a = ARMS[arm]
    except (KeyError, TypeError):
        raise ValueError(f"arm must be one of {sorted(ARMS)}, got {arm!r}") from None
    try:
        f = FRAMES[frame]
    except (KeyError, TypeError):
        raise ValueError(f"frame must be one of {sorted(FRAMES)}, got {frame!r}") from None
    q = _input(q, "q", KRANG_NDOF)
    params = _params(params)
    out = _out(out, "out", 6, KRANG_NDOF)
    krang_jacobian(_data(q), _data(params), a, f, _data(out))
    return out


def friction(dq, params=None, out=None):
    """Friction torques Fv * dq + Fc * sign(dq) (N_DOF,)."""
    dq = _input(dq, "dq", KRANG_NDOF)
    params = _params(params)
    out = _out(out, "out", KRANG_NDOF, 0)
    krang_friction(_data(dq), _data(params), _data(out))
    return out


def compute_all(q, dq, params=None):
    """A, C, Q and both world-frame Jacobians in one call (shared subexpressions).
    Returns a dict with keys "A", "C", "Q", "J_left", "J_right"."""
    cdef double *ptr[8]
    cdef int i
    q = _input(q, "q", KRANG_NDOF)
    dq = _input(dq, "dq", KRANG_NDOF)
    params = _params(params)
    A = _out(None, "A", KRANG_NDOF, KRANG_NDOF)
    C = _out(None, "C", KRANG_NDOF, KRANG_NDOF)
    Q = _out(None, "Q", KRANG_NDOF, 0)
    JL = _out(None, "J_left", 6, KRANG_NDOF)
    JR = _out(None, "J_right", 6, KRANG_NDOF)
    for i, a in enumerate((q, dq, params, A, C, Q, JL, JR)):
        ptr[i] = _data(a)
    with nogil:
        krang_compute_all(ptr[0], ptr[1], ptr[2], ptr[3], ptr[4], ptr[5], ptr[6], ptr[7])
    return {"A": A, "C": C, "Q": Q, "J_left": JL, "J_right": JR}

# Shared argument checks of every generated robot module, written once and
# rendered verbatim into each module by templates/module.pyx.j2 (so that a
# generated .pyx compiles on its own, without this repository). The module
# defines _NP, PARAM_NAMES, _PARAM_INDEX, END_EFFECTORS, _FRAMES and _DEFAULT before
# this text.
#
# Inputs: the fast path takes the caller's array itself only when the C code
# can read it as it is: exactly numpy.ndarray, float64 in native byte order,
# aligned, C-contiguous, of the right shape (a big-endian or misaligned
# float64 array has the same dtype number as a native one, so the flags are
# checked, not only the type number). Anything else array-like of real
# numbers is copied into such an array; other types are a TypeError, wrong
# shapes a ValueError. Every input must be finite (NaN/inf raise ValueError).
# Outputs (`out=`) are never converted: the C writes into them directly, so
# anything but a writeable, aligned, native-order, C-contiguous float64
# numpy.ndarray of the right shape is rejected with an error naming it.

cdef inline bint _behaved(cnp.ndarray a):
    """float64 the C code can read and write as it is."""
    return (cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE and cnp.PyArray_ISNOTSWAPPED(a)
            and cnp.PyArray_ISALIGNED(a) and cnp.PyArray_IS_C_CONTIGUOUS(a))


cdef inline bint _ready(object x, Py_ssize_t n):
    """Already a behaved float64 vector of length n (the fast path)?"""
    return (type(x) is np.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1
            and cnp.PyArray_DIM(<cnp.ndarray>x, 0) == n and _behaved(<cnp.ndarray>x))


cdef object _coerce(object x, str name, Py_ssize_t n):
    """Slow path: anything array-like of n real numbers -> a new behaved float64 vector."""
    try:
        a = np.asarray(x)
    except Exception as exc:
        raise TypeError(f"{name} must be an array of {n} real numbers: {exc}") from None
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (float64), got dtype {a.dtype}")
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    # a copy, always: np.asarray would hand back a misaligned array unchanged
    return np.array(a, dtype=np.float64, order="C", copy=True)


cdef object _input(object x, str name, Py_ssize_t n):
    """x itself when the C code can read it as it is, else a converted copy;
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
    return _input(params, "params", _NP)


cdef object _out(object out, str name, tuple shape):
    """`out` itself when the C code can write into it, a new array when it is None."""
    cdef cnp.ndarray a
    cdef Py_ssize_t k
    if out is None:
        return np.empty(shape, dtype=np.float64)
    if type(out) is np.ndarray:
        a = <cnp.ndarray>out
        if cnp.PyArray_NDIM(a) == len(shape) and _behaved(a) and cnp.PyArray_ISWRITEABLE(a):
            for k in range(len(shape)):
                if cnp.PyArray_DIM(a, k) != shape[k]:
                    break
            else:
                return out
    _bad_out(out, name, shape)


cdef _bad_out(object out, str name, tuple shape):
    """Raise the error that says what is wrong with `out`."""
    if type(out) is not np.ndarray:
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(out).__name__}")
    if out.dtype.kind != "f" or out.dtype.itemsize != 8:
        raise TypeError(f"{name} must have dtype float64, got {out.dtype}")
    if not out.dtype.isnative:
        raise TypeError(f"{name} must have dtype float64 in native byte order, got {out.dtype.str}")
    if out.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {out.shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writeable (it is read-only)")
    if not out.flags.aligned:
        raise ValueError(f"{name} must be aligned to 8 bytes (it is not)")
    raise ValueError(f"{name} must be a C-contiguous array")


cdef inline double *_data(object a):
    return <double *>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef int _ee_index(object ee) except -1:
    """End effector `ee` (a name in END_EFFECTORS or an index) -> its index."""
    cdef Py_ssize_t i
    if isinstance(ee, str):
        for i in range(len(END_EFFECTORS)):
            if END_EFFECTORS[i] == ee:
                return i
    elif not isinstance(ee, (bool, np.bool_)):
        try:
            i = operator.index(ee)
        except TypeError:
            pass
        else:
            if 0 <= i < len(END_EFFECTORS):
                return i
    raise ValueError(f"ee must be one of {list(END_EFFECTORS)} or an index 0..{len(END_EFFECTORS) - 1}, "
                     f"got {ee!r}")


cdef int _frame_index(object frame) except -1:
    if isinstance(frame, str):
        for i, name in enumerate(_FRAMES):
            if name == frame:
                return i
    raise ValueError(f"frame must be one of {list(_FRAMES)}, got {frame!r}")


def default_params():
    """The default parameter vector (a new float64 array, PARAM_NAMES order)."""
    return _DEFAULT.copy()


def params_from_dict(values, base=None):
    """A parameter vector with `values` (name -> real number) set on top of
    `base` (default: default_params()). Values must be int, float or numpy
    integer/floating scalars (not bool, str, complex, arrays) and finite. An
    unknown name raises KeyError naming it."""
    p = default_params() if base is None else np.array(_input(base, "base", _NP), copy=True)
    try:
        values = dict(values)
    except (TypeError, ValueError):
        raise TypeError(f"values must be a mapping name -> number, got {type(values).__name__}") from None
    for name, value in values.items():
        if not isinstance(name, str) or name not in _PARAM_INDEX:
            raise KeyError(f"unknown parameter {name!r} (see PARAM_NAMES)")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"parameter {name} must be a real number, got {type(value).__name__} {value!r}")
        try:
            v = float(value)
        except OverflowError:  # an int beyond the float range
            v = float("inf")
        if not isfinite(v):
            raise ValueError(f"parameter {name} = {v} is not finite")
        p[_PARAM_INDEX[name]] = v
    return p


def check_params(p):
    """Raise ValueError naming the link if the parameter vector `p` is not
    physically consistent (negative mass, inertia not positive definite,
    negative rotor inertia, ...: codegen.physical). Needs the generator
    package `codegen` importable."""
    p = _input(p, "p", _NP)
    try:
        from codegen.physical import check_params as physical_check
    except ImportError as exc:
        raise ImportError(f"check_params needs the generator (codegen.physical): {exc}") from None
    physical_check(PARAM_NAMES, p)

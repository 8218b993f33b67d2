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
#
# Batches: a kernel's first state argument (q, or dq for friction) of shape
# (N, n) makes the call a batch of N states; its other state arguments must
# then have shape (N, n) too (no broadcasting), the parameter vector is
# shared by the whole batch (shape (NP,)), outputs get a leading N axis, and
# the C kernel runs once per row with the GIL released. The rows are checked
# by the same rules (_rows): native byte order, aligned, C-contiguous float64
# or a converted copy, finite.
#
# Finiteness is an integer test on the IEEE-754 bits (NaN and inf: exponent
# bits all ones), which no compiler flag can fold away: under -ffast-math or
# -ffinite-math-only isfinite(x) and x != x are constants. One branch-free
# pass (vectorizable) over the array; the offending index is looked for only
# when there is one.
#
# A free-flying base (N_Q = N_DOF + 1): q[3:7] is its quaternion x, y, z, w.
# Every kernel reads it normalized (q / |q|), so any finite quaternion whose
# squared norm is a normal double is accepted; a zero one (NaN from every
# kernel), one whose squared norm underflows (zero, subnormal: 2/|q|^2
# overflows) or comes within a factor 2 of overflowing is refused
# (_quaternion, _quaternion_rows; the module calls them only on a free-flying
# base).

cdef inline bint _finite(const double *d, Py_ssize_t n) noexcept nogil:
    """1 if none of the n doubles at d is NaN or inf."""
    cdef uint64_t bits, acc = 0
    cdef Py_ssize_t i
    for i in range(n):
        memcpy(&bits, &d[i], sizeof(bits))
        # exponent field + 1 in its lowest bit: carries into bit 63 only when it is all ones
        acc |= (bits & <uint64_t>0x7FF0000000000000) + <uint64_t>0x0010000000000000
    return (acc >> 63) == 0


cdef Py_ssize_t _not_finite_at(const double *d, Py_ssize_t n) noexcept nogil:
    """The index of the first NaN or inf among the n doubles at d (-1: none)."""
    cdef uint64_t bits
    cdef Py_ssize_t i
    for i in range(n):
        memcpy(&bits, &d[i], sizeof(bits))
        if (bits & <uint64_t>0x7FF0000000000000) == <uint64_t>0x7FF0000000000000:
            return i
    return -1


cdef int _quaternion_at(const double *q, str where) except -1:
    """q[3:7] of one state (`where`: how the error names it) can be normalized."""
    cdef double n = q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]
    cdef uint64_t bits
    memcpy(&bits, &n, sizeof(bits))
    bits = (bits >> 52) & 0x7FF  # the biased exponent of |q|^2: 0 zero or subnormal, 0x7FE from 2^1023, 0x7FF inf
    if bits == 0 or bits >= 0x7FE:
        raise ValueError(f"{where} = ({q[3]!r}, {q[4]!r}, {q[5]!r}, {q[6]!r}) is not a usable quaternion "
                         f"(x, y, z, w) of the base: its squared norm {n!r} is zero, subnormal or too large "
                         "to normalize it")
    return 0


cdef inline int _quaternion(object q) except -1:
    return _quaternion_at(<const double *>cnp.PyArray_DATA(<cnp.ndarray>q), "q[3:7]")


cdef inline int _quaternion_rows(object q, Py_ssize_t nb, Py_ssize_t nq) except -1:
    cdef const double *d = <const double *>cnp.PyArray_DATA(<cnp.ndarray>q)
    cdef Py_ssize_t i
    for i in range(nb):
        _quaternion_at(d + i * nq, f"q[{i}, 3:7]")
    return 0


cdef inline bint _behaved(cnp.ndarray a):
    """float64 the C code can read and write as it is."""
    return (cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE and cnp.PyArray_ISNOTSWAPPED(a)
            and cnp.PyArray_ISALIGNED(a) and cnp.PyArray_IS_C_CONTIGUOUS(a))


cdef inline bint _ready(object x, Py_ssize_t n):
    """Already a behaved float64 vector of length n (the fast path)?"""
    return (type(x) is cnp.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1
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
    if not _finite(d, n):
        i = _not_finite_at(d, n)
        raise ValueError(f"{name}[{i}] is {d[i]}: inputs must be finite")
    return a


cdef inline Py_ssize_t _batch(object x) except -2:
    """-1 for one state, N for a batch of N states (x has two dimensions)."""
    if type(x) is cnp.ndarray:  # the fast path: two field reads
        if cnp.PyArray_NDIM(<cnp.ndarray>x) == 2:
            return cnp.PyArray_DIM(<cnp.ndarray>x, 0)
        return -1
    return _batch_other(x)


cdef Py_ssize_t _batch_other(object x) except -2:
    if x is None or isinstance(x, (str, bytes, int, float)):
        return -1  # _input names the fault
    try:
        s = np.shape(x)
    except Exception:
        return -1
    return s[0] if len(s) == 2 else -1


cdef object _rows(object x, str name, Py_ssize_t nb, Py_ssize_t n):
    """A batch input: x itself when the C code can read it as it is (a
    behaved float64 array of shape (nb, n)), else a converted copy; finite."""
    cdef Py_ssize_t i
    cdef const double *d
    if not (type(x) is cnp.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>x) == 2
            and cnp.PyArray_DIM(<cnp.ndarray>x, 0) == nb and cnp.PyArray_DIM(<cnp.ndarray>x, 1) == n
            and _behaved(<cnp.ndarray>x)):
        try:
            a = np.asarray(x)
        except Exception as exc:
            raise TypeError(f"{name} must be an array of {nb} x {n} real numbers: {exc}") from None
        if a.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold real numbers (float64), got dtype {a.dtype}")
        if a.shape != (nb, n):
            raise ValueError(f"{name} must have shape ({nb}, {n}) (a batch of {nb} states), got {a.shape}")
        x = np.array(a, dtype=np.float64, order="C", copy=True)
    d = <const double *>cnp.PyArray_DATA(<cnp.ndarray>x)
    if not _finite(d, nb * n):
        i = _not_finite_at(d, nb * n)
        raise ValueError(f"{name}[{i // n}, {i % n}] is {d[i]}: inputs must be finite")
    return x


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
    if type(out) is cnp.ndarray:
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


cdef tuple _out_tuple(object out, tuple shapes):
    """A kernel with several outputs: `out` None or a tuple (or list) of one
    array per output, each checked as any `out=`, no two sharing memory."""
    cdef Py_ssize_t k, j
    if out is None:
        return tuple(np.empty(s, dtype=np.float64) for s in shapes)
    if not isinstance(out, (tuple, list)) or len(out) != len(shapes):
        raise TypeError(f"out must be a tuple of {len(shapes)} arrays, got {type(out).__name__}"
                        + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    res = tuple(_out(out[k], f"out[{k}]", shapes[k]) for k in range(len(shapes)))
    for k in range(len(res)):
        for j in range(k):
            if np.may_share_memory(res[k], res[j]):
                raise ValueError(f"out[{j}] and out[{k}] overlap")
    return res


cdef tuple _unalias(object out, tuple ins):
    """The inputs of a batch, each copied if it may overlap `out`: one C call
    reads all its inputs before writing (the ABI's contract), but row i's
    output could overwrite row j's input or the shared parameter vector."""
    return tuple(np.array(a, copy=True) if np.may_share_memory(out, a) else a for a in ins)


cdef dict _out_dict(object out, dict shapes):
    """compute_all's `out`: None or a dict holding some of the output keys,
    each checked as any `out=`; new arrays for the keys it lacks."""
    if out is None:
        return {k: np.empty(s) for k, s in shapes.items()}
    if not isinstance(out, dict):
        raise TypeError(f"out must be a dict of arrays keyed by {list(shapes)}, got {type(out).__name__}")
    for k in out:
        if k not in shapes:
            raise ValueError(f"out has an unknown key {k!r} (compute_all's outputs: {list(shapes)})")
    return {k: _out(out[k], f"out[{k!r}]", s) if k in out else np.empty(s, dtype=np.float64)
            for k, s in shapes.items()}


cdef double _real(object x, str name) except? -1.0:
    """A finite real number passed by value (integrate's dt): int, float or a
    numpy integer/floating scalar, as params_from_dict takes (not bool, str,
    complex, arrays)."""
    cdef double d
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    try:
        d = float(x)
    except OverflowError:  # an int beyond the float range
        d = float("inf")
    if not _finite(&d, 1):
        raise ValueError(f"{name} is {x!r}: inputs must be finite")
    return d


cdef inline double *_data(object a):
    return <double *>cnp.PyArray_DATA(<cnp.ndarray>a)


# Lane-interleaved batches (the C ABI's *_batch_interleaved, docs/c-abi.md): arrays of shape
# (ceil(n / INTERLEAVE), K, INTERLEAVE), element k of state INTERLEAVE b + l at [b, k, l].


cdef object _aligned_empty(tuple shape):
    """A new C-contiguous float64 array whose data starts on a 64-byte boundary (a cache line:
    the interleaved kernels write large outputs with non-temporal stores only when so aligned)."""
    cdef Py_ssize_t size = 8
    for n in shape:
        size *= n
    buf = np.empty(size + 64, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64
    return buf[start:start + size].view(np.float64).reshape(shape)


cdef object _aligned_out(object out, str name, tuple shape):
    """An interleaved result's array: `out` checked as any `out=`, or a new 64-byte aligned one."""
    return _aligned_empty(shape) if out is None else _out(out, name, shape)


cdef object _interleaved_out(object out, Py_ssize_t nb, Py_ssize_t k):
    """An interleaved result's array for nb states of k elements (_aligned_out)."""
    return _aligned_out(out, "out", ((nb + INTERLEAVE - 1) // INTERLEAVE, k, INTERLEAVE))


cdef int _layout(object layout, object packed, bint packable, Py_ssize_t nb) except -1:
    """layout= and packed= of a kernel with an interleaved batch form: 1 interleaved, 0 row-major."""
    if not isinstance(packed, (bool, np.bool_)):
        raise TypeError(f"packed must be a bool, got {type(packed).__name__} {packed!r}")
    if not isinstance(layout, str) or layout not in ("row-major", "interleaved"):
        raise ValueError(f"layout must be 'row-major' or 'interleaved', got {layout!r}")
    if packed and not packable:
        raise ValueError("packed: this kernel has no packed form (only the symmetric A has)")
    if layout == "row-major":
        if packed:
            raise ValueError("packed=True needs layout='interleaved' (a row-major result is never packed)")
        return 0
    if nb < 0:
        raise ValueError("layout='interleaved' needs a batch of states (a first argument of shape (N, ...))")
    return 1


cdef Py_ssize_t _count(object n, str name) except -1:
    """A number of states: an int >= 0 (not bool)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{name} must be an int >= 0 (a number of states), got {n!r}")
    return n


cdef Py_ssize_t _batch_rows(object x, str name) except -1:
    """The rows of a batch input (shape (N, n)); other shapes are a ValueError."""
    cdef Py_ssize_t nb = _batch(x)
    if nb < 0:
        raise ValueError(f"{name} must have shape (N, ...) (a batch of N states), got {np.shape(x)}")
    return nb


cdef object _blocks(object x, str name, Py_ssize_t nblk, Py_ssize_t k):
    """An interleaved input (nblk, k, INTERLEAVE): x itself when the C code can read it as it is,
    else a converted copy; finite."""
    cdef Py_ssize_t i, n = nblk * k * INTERLEAVE
    cdef const double *d
    cdef tuple shape = (nblk, k, INTERLEAVE)
    if not (type(x) is cnp.ndarray and x.shape == shape and _behaved(<cnp.ndarray>x)):
        try:
            a = np.asarray(x)
        except Exception as exc:
            raise TypeError(f"{name} must be an array of shape {shape}: {exc}") from None
        if a.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold real numbers (float64), got dtype {a.dtype}")
        if a.shape != shape:
            raise ValueError(f"{name} must have shape {shape} ({INTERLEAVE} states a block), got {a.shape}")
        x = np.array(a, dtype=np.float64, order="C", copy=True)
    d = <const double *>cnp.PyArray_DATA(<cnp.ndarray>x)
    if not _finite(d, n):
        i = _not_finite_at(d, n)
        raise ValueError(f"{name}[{i // (k * INTERLEAVE)}, {(i // INTERLEAVE) % k}, {i % INTERLEAVE}] is {d[i]}: "
                         "inputs must be finite")
    return x


cdef int _ee_index(object ee) except -1:
    """End effector `ee` (a name in END_EFFECTORS or an index) -> its index.
    The index is compared as a Python int: 2**63 or -2**70 is out of range
    (ValueError), not an OverflowError of a C conversion."""
    cdef Py_ssize_t i
    if not END_EFFECTORS:
        raise ValueError("this module has no end effectors (it was generated without --end-effector LINK "
                         "or end_effectors=[...]): jacobian, fk and every per-end-effector kernel are unavailable")
    if isinstance(ee, str):
        for i in range(len(END_EFFECTORS)):
            if END_EFFECTORS[i] == ee:
                return i
    elif not isinstance(ee, (bool, np.bool_)):
        try:
            index = operator.index(ee)
        except TypeError:
            pass
        else:
            if 0 <= index < len(END_EFFECTORS):
                return index
    raise ValueError(f"ee must be one of {list(END_EFFECTORS)} or an index 0..{len(END_EFFECTORS) - 1}, "
                     f"got {ee!r}")


cdef int _frame_index(object frame) except -1:
    if isinstance(frame, str):
        for i, name in enumerate(_FRAMES):
            if name == frame:
                return i
    raise ValueError(f"frame must be one of {list(_FRAMES)}, got {frame!r}")


def default_params():
    """The default parameter vector: a new float64 array of shape (N_PARAMS,), PARAM_NAMES order,
    SI units (m, kg, kg m, kg m^2 about each link frame's origin, N m s/rad, N m)."""
    return _DEFAULT.copy()


def params_from_dict(values, base=None):
    """A parameter vector (float64, shape (N_PARAMS,)) with `values` (name -> real number, SI
    units) set on top of `base` (shape (N_PARAMS,); default: default_params()). Values must be int, float or numpy
    integer/floating scalars (not bool, str, complex, arrays) and finite. An
    unknown name raises KeyError naming it.

    Each value is set alone: a link's 10 standard parameters are its mass m,
    its first moments MX, MY, MZ = m c and its inertia about the frame origin,
    so changing only m_<link> moves its centre of mass (c = MS / m) and keeps
    an inertia that no longer matches. To change a body, set all ten:
    params_from_dict(link_params(key, mass, com, inertia_at_com))."""
    cdef double v
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
        if not _finite(&v, 1):
            raise ValueError(f"parameter {name} = {v} is not finite")
        p[_PARAM_INDEX[name]] = v
    return p


def check_params(p):
    """Raise ValueError naming the link if the parameter vector `p` (shape (N_PARAMS,)) is not
    physically consistent (negative mass, inertia not positive definite,
    negative rotor inertia, ...: krang_kernels.physical, NumPy only), or names the joint
    if a joint moves no mass or inertia (A singular)."""
    p = _input(p, "p", _NP)
    from krang_kernels.physical import check_params as physical_check
    physical_check(PARAM_NAMES, p)
    # What no single link shows: a joint whose subtree has no mass, or no inertia about
    # its axis, and no rotor inertia leaves A's diagonal entry 0 (A singular, forward
    # dynamics NaN); A_ii is that subtree's inertia about the joint (Featherstone 2008,
    # sec. 6.2), here at the neutral configuration, as the generator checks model files.
    diag = np.diagonal(compute_A(neutral(), p))
    bad = np.flatnonzero(diag <= 1e-12 * max(float(np.max(np.abs(diag))), 1e-300))
    if bad.size:
        i = int(bad[0])
        name = JOINT_NAMES[i] if len(JOINT_NAMES) == N_DOF else f"velocity coordinate {i}"
        raise ValueError(f"joint {name!r} moves no mass or inertia (and has no rotor inertia): the mass "
                         f"matrix A is singular (A[{i}, {i}] = {diag[i]:.3g}); give its subtree a mass and "
                         f"an inertia, or a rotor inertia")


def load_params(path):
    """The parameter vector (float64, shape (N_PARAMS,)) of a TOML parameter file (a [values]
    table name -> number in SI units, the format of the generator's parameter files, e.g.
    models/krang_params.toml): a path that is not a regular file, unknown names,
    non-numbers and physically impossible values raise ValueError naming them; Ia, Fv
    and Fc default to 0, every other parameter must be given. NumPy only
    (krang_kernels.input_files, the rules the generator reads parameter files by)."""
    from krang_kernels.input_files import load_param_values
    from krang_kernels.physical import check_params as physical_check
    values = np.array(load_param_values(path, PARAM_NAMES), dtype=np.float64)
    try:
        physical_check(PARAM_NAMES, values)
    except ValueError as exc:
        raise ValueError(f"{os.fsdecode(path)}: physically impossible parameters: {exc}") from None
    return values


def unpack_interleaved(arr, n, nv, packed=False):
    """The n matrices of an interleaved result (compute_A or compute_C with layout='interleaved',
    cholesky_batch_interleaved), shape (ceil(n / INTERLEAVE), K, INTERLEAVE), as a new float64
    array of shape (n, nv, nv), row-major: K = nv * nv, or nv (nv + 1) / 2 when `packed` (the lower
    triangle row by row), then the full symmetric matrix (a packed Cholesky factor: pass its
    triangle to numpy.tril). NumPy only; the padding lanes of the last block are dropped."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if isinstance(nv, (bool, np.bool_)) or not isinstance(nv, (int, np.integer)) or nv < 1:
        raise ValueError(f"nv must be an int >= 1, got {nv!r}")
    a = np.asarray(arr)
    k = nv * (nv + 1) // 2 if packed else nv * nv
    shape = ((n + INTERLEAVE - 1) // INTERLEAVE, k, INTERLEAVE)
    if a.shape != shape:
        raise ValueError(f"arr must have shape {shape} (n = {n}, nv = {nv}, packed = {bool(packed)}), got {a.shape}")
    rows = a.transpose(0, 2, 1).reshape(-1, k)[:n]  # state-major: row 8 b + l is block b's lane l
    if not packed:
        return np.array(rows.reshape(n, nv, nv), dtype=np.float64, order="C")
    full = np.empty((n, nv, nv))
    i, j = np.tril_indices(nv)  # row by row: k = i (i + 1) / 2 + j
    full[:, i, j] = rows
    full[:, j, i] = rows
    return full


def link_params(key, mass, com, inertia_at_com):
    """The 10 standard parameters of link `key` (m, MX, MY, MZ, XX, XY, XZ,
    YY, YZ, ZZ about the link frame's origin, in the link frame's axes) from
    its mass (kg), centre of mass `com` (shape (3,), m, link frame) and inertia about the
    centre of mass `inertia_at_com` (shape (3, 3), kg m^2, symmetric, link frame axes), as a
    dict name -> value for params_from_dict: MS = m c and
    J = I_c + m (c.c 1 - c c^T). Changing only m_<key> keeps MS and J, i.e.
    moves the centre of mass and changes the inertia; set all ten with this.
    Raises KeyError for an unknown link, ValueError for an impossible body."""
    from krang_kernels.physical import INERTIAL, check_link, standard_params
    names = [f"{n}_{key}" for n in INERTIAL]
    missing = [n for n in names if n not in _PARAM_INDEX]
    if missing:
        raise KeyError(f"unknown link {key!r}: no parameter {missing[0]!r} (see PARAM_NAMES)")
    values = standard_params(mass, com, inertia_at_com)
    ms = np.array(values[1:4])
    J = np.array([[values[4], values[5], values[6]], [values[5], values[7], values[8]],
                  [values[6], values[8], values[9]]])
    check_link(key, values[0], ms, J)
    return dict(zip(names, values))

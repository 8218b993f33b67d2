"""Property tests (Hypothesis) of the Python API's argument handling
(krang_kernels, whose checks every generated module shares:
templates/python/checks.pxi).

The rule under test: every call either returns exactly (bit for bit) what the
same call returns on clean float64 copies of its inputs, or raises a
TypeError/ValueError naming the offending argument, and never writes into an
`out=` it rejects. Inputs vary in dtype (float64/32/16, long double, ints,
bool, complex, object, str), byte order ('<f8', '>f8', ...), strides,
alignment (np.frombuffer at an odd offset of a bytearray), shape, container
(list, tuple) and NaN/inf entries; `out=` in dtype, byte order, alignment,
contiguity, writeability, shape and aliasing with the inputs.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.module

kk = pytest.importorskip("krang_kernels")

N, NP = kk.N_DOF, kk.N_PARAMS
BAD = (TypeError, ValueError)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DEFAULT = kk.default_params()

# name -> (call(args, out), the inputs it reads, its output shape or None)
CALLS = {
    "compute_A": (lambda a, out=None: kk.compute_A(a["q"], a["params"], out=out), ("q", "params"), (N, N)),
    "compute_C": (lambda a, out=None: kk.compute_C(a["q"], a["dq"], a["params"], out=out), ("q", "dq", "params"),
                  (N, N)),
    "compute_Q": (lambda a, out=None: kk.compute_Q(a["q"], a["params"], out=out), ("q", "params"), (N,)),
    "jacobian_left_local": (lambda a, out=None: kk.jacobian(a["q"], "left", "local", a["params"], out=out),
                            ("q", "params"), (6, N)),
    "jacobian_1_world": (lambda a, out=None: kk.jacobian(a["q"], 1, "world", params=a["params"], out=out),
                         ("q", "params"), (6, N)),
    "friction": (lambda a, out=None: kk.friction(a["dq"], params=a["params"], out=out), ("dq", "params"), (N,)),
    "compute_all": (lambda a, out=None: kk.compute_all(a["q"], a["dq"], a["params"]), ("q", "dq", "params"), None),
    "inverse_dynamics": (lambda a, out=None: kk.inverse_dynamics(a["q"], a["dq"], a["ddq"], a["params"], out=out),
                         ("q", "dq", "ddq", "params"), (N,)),
    "bias": (lambda a, out=None: kk.bias(a["q"], a["dq"], params=a["params"], out=out), ("q", "dq", "params"), (N,)),
    "forward_dynamics": (lambda a, out=None: kk.forward_dynamics(a["q"], a["dq"], a["tau"], a["params"], out=out),
                         ("q", "dq", "tau", "params"), (N,)),
    "fk_right": (lambda a, out=None: kk.fk(a["q"], "right", a["params"], out=out), ("q", "params"), (4, 4)),
    "jdot_qdot_0": (lambda a, out=None: kk.jdot_qdot(a["q"], a["dq"], 0, a["params"], out=out),
                    ("q", "dq", "params"), (6,)),
    "com": (lambda a, out=None: kk.com(a["q"], a["params"], out=out), ("q", "params"), (3,)),
    "com_jacobian": (lambda a, out=None: kk.com_jacobian(a["q"], params=a["params"], out=out), ("q", "params"),
                     (3, N)),
    "centroidal_map": (lambda a, out=None: kk.centroidal_map(a["q"], a["params"], out=out), ("q", "params"),
                       (6, N)),
    "integrate": (lambda a, out=None: kk.integrate(a["q"], a["v"], 0.01, out=out), ("q", "v"), (N,)),
}
WITH_OUT = sorted(k for k, v in CALLS.items() if v[2] is not None)

REAL = ["<f8", ">f8", "<f4", ">f4", "<f2", "longdouble", "<i8", ">i4", "i1", "<u2"]
NOT_REAL = ["?", "<c16", ">c8", "O", "U8", "M8[s]"]
LAYOUTS = ["contiguous", "strided", "reversed", "misaligned", "list", "tuple",
           "short", "long", "row", "column", "scalar"]
BAD_SHAPE = {"short", "long", "row", "column", "scalar"}


def _clean(args):
    return {k: np.array(v, dtype=np.float64) for k, v in args.items()}


def _same(got, ref):
    """Bit-for-bit equality of arrays or dicts of arrays."""
    if isinstance(ref, dict):
        assert sorted(got) == sorted(ref)
        for k in ref:
            _same(got[k], ref[k])
        return
    assert type(got) is np.ndarray and got.dtype == np.float64 and got.shape == ref.shape
    assert got.tobytes() == ref.tobytes()


def _typed(values, dtype):
    """float64 `values` as an array of `dtype` (integers rounded, unsigned made non-negative)."""
    dt = np.dtype(dtype)
    v = np.asarray(values, dtype=np.float64)
    if dt.kind in "iu":
        v = np.round(np.abs(v) if dt.kind == "u" else v)
        info = np.iinfo(dt)
        v = np.clip(v, info.min, info.max)
    if dt.kind == "M":
        return np.arange(len(v)).astype(dt)
    if dt.kind == "U":
        return np.array([repr(x) for x in v], dtype=dt)
    if dt.kind == "O":
        return np.array(list(v), dtype=object)
    return v.astype(dt)


def _layout(a, layout, rng):
    """Array `a` (1-D) presented in `layout`."""
    n = len(a)
    if layout == "contiguous":
        return a
    if layout == "strided":
        k = int(rng.integers(2, 4))
        big = np.zeros(k * n, dtype=a.dtype)
        big[::k] = a
        return big[::k]
    if layout == "reversed":
        return a[::-1].copy()[::-1]
    if layout == "misaligned":
        if a.dtype.hasobject:
            return a
        off = int(rng.integers(1, a.dtype.itemsize)) if a.dtype.itemsize > 1 else 0
        buf = bytearray(a.nbytes + off)
        m = np.frombuffer(buf, dtype=a.dtype, count=n, offset=off)
        m[...] = a
        return m
    if layout == "list":
        return a.tolist()
    if layout == "tuple":
        return tuple(a.tolist())
    if layout == "short":
        return a[:-1]
    if layout == "long":
        return np.concatenate([a, a[:1]])
    if layout == "row":  # (1, n) would be a batch of one state (tests/test_batches.py)
        return a.reshape(1, 1, n)
    if layout == "column":
        return a.reshape(n, 1)
    if layout == "scalar":
        return a[0]
    raise AssertionError(layout)


@st.composite
def states(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    args = {"q": rng.uniform(-3.5, 3.5, N), "dq": rng.uniform(-3, 3, N), "ddq": rng.uniform(-5, 5, N),
            "tau": rng.uniform(-20, 20, N), "params": DEFAULT * rng.uniform(0.8, 1.2, NP),
            "v": rng.uniform(-3, 3, N)}
    return args, rng


@st.composite
def presented(draw, dtype, layout):
    """(call name, argument name, args with that argument as `dtype` in
    `layout`, expected error or None)."""
    args, rng = draw(states())
    name = draw(st.sampled_from(sorted(CALLS)))
    arg = draw(st.sampled_from(CALLS[name][1]))
    poison = draw(st.sampled_from([None, None, np.nan, np.inf, -np.inf]))
    values = args[arg].copy()
    if poison is not None and np.dtype(dtype).kind == "f":
        values[int(rng.integers(N))] = poison
    x = _layout(_typed(values, dtype), layout, rng)
    # the value's own numpy reading decides (an object array presented as a
    # list of floats is a list of floats); a dtype error comes before a shape error
    if np.asarray(x).dtype.kind not in "iuf":
        expect = TypeError
    elif layout in BAD_SHAPE:
        expect = ValueError
    elif not np.isfinite(np.array(x, dtype=np.float64)).all():
        expect = ValueError
    else:
        expect = None
    return name, arg, dict(args, **{arg: x}), expect


# every dtype in every layout (a case drawn at random from 176 would be
# missed too often), Hypothesis over the call, the argument and the values
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", REAL + NOT_REAL)
@settings(SETTINGS, max_examples=8)
@given(data=st.data())
def test_inputs_converted_or_rejected(dtype, layout, data):
    name, arg, args, expect = data.draw(presented(dtype, layout))
    call = CALLS[name][0]
    before = {k: np.array(v, dtype=object if isinstance(v, (list, tuple)) else None, copy=True)
              for k, v in args.items()}
    try:
        got = call(args)
    except BAD as exc:
        assert expect is not None, f"{name}: {arg} rejected but valid: {exc}"
        assert isinstance(exc, expect), (type(exc), exc)
        assert arg in str(exc), f"{name}: the error does not name {arg}: {exc}"
    else:
        assert expect is None, f"{name}: {arg} should have raised {expect.__name__}"
        _same(got, call(_clean(args)))
    for k, v in args.items():  # inputs are never written
        if isinstance(v, np.ndarray):
            assert v.tobytes() == before[k].tobytes()


OUT_VARIANTS = ["good", ">f8", "f4", "i8", "c16", "bool", "misaligned", "strided", "fortran", "readonly",
                "transposed", "flat", "extra_axis", "list", "subclass", "bytearray"]


class _Sub(np.ndarray):
    """An ndarray subclass: not accepted as out= (its methods may not be numpy's)."""


def _bad_out(shape, variant):
    if variant == ">f8":
        return np.zeros(shape, dtype=">f8")
    if variant in ("f4", "i8", "c16", "bool"):
        return np.zeros(shape, dtype={"bool": "?"}.get(variant, variant))
    if variant == "misaligned":
        size = int(np.prod(shape))
        m = np.frombuffer(bytearray(8 * size + 4), dtype=np.float64, count=size, offset=4).reshape(shape)
        assert m.flags.writeable and not m.flags.aligned
        return m
    if variant == "strided":
        return np.zeros(tuple(2 * s for s in shape))[tuple(slice(None, None, 2) for _ in shape)]
    if variant == "fortran":
        return np.asfortranarray(np.zeros(shape)) if len(shape) == 2 else np.zeros(2 * shape[0])[1::2]
    if variant == "readonly":
        a = np.zeros(shape)
        a.flags.writeable = False
        return a
    if variant == "transposed":
        return np.zeros(shape[::-1] if len(shape) == 2 and shape[0] != shape[1] else (shape[0] + 1,) + shape[1:])
    if variant == "flat":
        return np.zeros(int(np.prod(shape)) + (1 if len(shape) == 1 else 0))
    if variant == "extra_axis":
        return np.zeros(shape + (1,))
    if variant == "list":
        return np.zeros(shape).tolist()
    if variant == "subclass":
        return np.zeros(shape).view(_Sub)
    if variant == "bytearray":
        return bytearray(8 * int(np.prod(shape)))
    raise AssertionError(variant)


@SETTINGS
@given(states(), st.sampled_from(WITH_OUT), st.sampled_from(OUT_VARIANTS))
def test_out_written_or_rejected(state, name, variant):
    args, rng = state
    call, _, shape = CALLS[name]
    ref = call(args)
    if variant == "good":
        out = rng.standard_normal(shape)  # the prefill does not matter
        res = call(args, out)
        assert res is out
        _same(out, ref)
        return
    out = _bad_out(shape, variant)
    before = bytes(out) if isinstance(out, bytearray) else np.array(out, copy=True)
    with pytest.raises(BAD, match=r"\bout\b"):
        call(args, out)
    if isinstance(out, bytearray):
        assert bytes(out) == before
    else:
        assert np.array_equal(np.asarray(out), before), "a rejected out= was written"


@SETTINGS
@given(states(), st.integers(0, 2 * N))
def test_out_aliasing_inputs(state, shift):
    """out= may overlap any input, fully or in part: every input is read
    before the first output is written (the C ABI's contract)."""
    args, _ = state
    ref_q = kk.compute_Q(args["q"], args["params"])
    ref_f = kk.friction(args["dq"], args["params"])
    ref_j = kk.jacobian(args["q"], "right", "local", args["params"])
    # out over a shifted window of the same buffer as q (shift 0: out is q)
    buf = np.zeros(3 * N)
    buf[N:2 * N] = args["q"]
    q, out = buf[N:2 * N], buf[shift:shift + N]
    _same(kk.compute_Q(q, args["params"], out=out), ref_q)
    buf = np.zeros(3 * N)
    buf[N:2 * N] = args["dq"]
    _same(kk.friction(buf[N:2 * N], args["params"], out=buf[shift:shift + N]), ref_f)
    # out over the parameter vector
    p = np.array(args["params"])
    _same(kk.jacobian(args["q"], "right", "local", p, out=p[shift:shift + 6 * N].reshape(6, N)), ref_j)
    p = np.array(args["params"])
    _same(kk.compute_Q(p[shift:shift + N], p, out=p[:N]), kk.compute_Q(args["params"][shift:shift + N],
                                                                       args["params"]))
    # integrate over q or v, shifted (its C kernel writes after reading all of q and v)
    ref_i = kk.integrate(args["q"], args["dq"], 0.25)
    for inputs in ("q", "dq"):
        buf = np.zeros(3 * N)
        buf[N:2 * N] = args[inputs]
        a = {"q": args["q"], "dq": args["dq"], inputs: buf[N:2 * N]}
        _same(kk.integrate(a["q"], a["dq"], 0.25, out=buf[shift:shift + N]), ref_i)


@SETTINGS
@given(st.one_of(st.text(max_size=6), st.integers(-3, 3), st.integers(), st.none(), st.booleans(), st.floats(), st.binary(max_size=4),
                 st.sampled_from(["left", "right", np.int64(1), np.int32(0), np.bool_(True), np.float64(0.0)])),
       st.one_of(st.sampled_from(["world", "local", "World", "", 0, 1, None, b"world"]), st.text(max_size=6)))
def test_ee_and_frame(ee, frame):
    q = np.linspace(-1, 1, N)
    names = kk.END_EFFECTORS
    valid_ee = (isinstance(ee, str) and ee in names) or (
        isinstance(ee, (int, np.integer)) and not isinstance(ee, (bool, np.bool_)) and 0 <= ee < len(names))
    valid_frame = isinstance(frame, str) and frame in ("world", "local")
    try:
        J = kk.jacobian(q, ee, frame)
    except ValueError as exc:
        assert not (valid_ee and valid_frame)
        assert ("ee" if not valid_ee else "frame") in str(exc)
    else:
        assert valid_ee and valid_frame
        index = names.index(ee) if isinstance(ee, str) else int(ee)
        _same(J, kk.jacobian(q, names[index], frame))


@pytest.mark.parametrize("ee", [2**63, -2**63 - 1, -2**70, 2**70, 2**31, -2**31 - 1, 2**64 + 1,
                                np.uint64(2**63), -1, 2])
@pytest.mark.parametrize("kernel", ["jacobian", "fk", "jdot_qdot"])
def test_huge_or_negative_ee_index_is_a_value_error(kernel, ee):
    """An index beyond a C integer is out of range like any other: the
    documented ValueError naming `ee`, not an OverflowError."""
    q = np.linspace(-1, 1, N)
    args = (q, ee) if kernel != "jdot_qdot" else (q, q, ee)
    with pytest.raises(ValueError, match="ee must be one of") as info:
        getattr(kk, kernel)(*args)
    assert not isinstance(info.value, OverflowError)


ACCEPTED = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**6, 10**6),
                     st.floats(-1e3, 1e3).map(np.float32), st.integers(-100, 100).map(np.int16))
REJECTED = st.one_of(st.booleans(), st.text(max_size=3), st.none(), st.binary(max_size=2),
                     st.complex_numbers(max_magnitude=10), st.just(np.bool_(True)), st.just([1.0]),
                     st.just(np.array(1.0)), st.just(np.float64("nan")), st.just(float("inf")),
                     st.just(10**400), st.just(-np.inf))


@SETTINGS
@given(st.dictionaries(st.sampled_from(kk.PARAM_NAMES[:20] + ("g",)),
                       st.one_of(ACCEPTED, REJECTED), max_size=4))
def test_params_from_dict_strict(values):
    def ok(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            return False
        try:
            return bool(np.isfinite(float(v)))
        except OverflowError:
            return False

    bad = [k for k, v in values.items() if not ok(v)]
    try:
        p = kk.params_from_dict(values)
    except BAD as exc:
        assert bad, exc
        assert any(k in str(exc) for k in bad), exc
    else:
        assert not bad
        want = DEFAULT.copy()
        for k, v in values.items():
            want[kk.PARAM_NAMES.index(k)] = float(v)
        _same(p, want)


@SETTINGS
@given(st.one_of(ACCEPTED, REJECTED))
def test_integrate_dt_strict(dt):
    """dt follows params_from_dict's rule for a number."""
    q, v = np.linspace(-1, 1, N), np.linspace(2, -3, N)
    ok = not isinstance(dt, (bool, np.bool_)) and isinstance(dt, (int, float, np.integer, np.floating))
    if ok:
        try:
            ok = bool(np.isfinite(float(dt)))
        except OverflowError:
            ok = False
    try:
        got = kk.integrate(q, v, dt)
    except BAD as exc:
        assert not ok and "dt" in str(exc), exc
    else:
        assert ok
        with np.errstate(over="ignore"):
            want = q + v * float(dt)
        if not np.isfinite(want).all():  # v dt overflows: the same infinities (a fused multiply-add's too)
            assert np.array_equal(got, want), (got, want)
        else:  # to rounding: the C may fuse the multiply-add
            np.testing.assert_allclose(got, want, rtol=5e-16, atol=5e-16 * np.abs(v * float(dt)).max())


def test_params_from_dict_base_and_names():
    base = (DEFAULT * 1.5).astype(">f8")
    p = kk.params_from_dict({"g": 3}, base=base)
    want = DEFAULT * 1.5
    want[kk.PARAM_NAMES.index("g")] = 3.0
    _same(p, want)
    assert base[kk.PARAM_NAMES.index("g")] != 3.0  # base is not modified
    with pytest.raises(ValueError, match=r"\bbase\b"):
        kk.params_from_dict({}, base=DEFAULT[:-1])
    with pytest.raises(TypeError, match=r"\bbase\b"):
        kk.params_from_dict({}, base=DEFAULT.astype(complex))
    with pytest.raises(KeyError, match="nope"):
        kk.params_from_dict({"nope": 1.0})
    with pytest.raises(KeyError):
        kk.params_from_dict({1: 1.0})
    with pytest.raises(TypeError, match="values"):
        kk.params_from_dict(3.0)
    _same(kk.params_from_dict([("g", 2.0)]), kk.params_from_dict({"g": 2.0}))


def test_default_params_and_limits_are_not_shared_state():
    p = kk.default_params()
    p[:] = 0.0
    _same(kk.default_params(), DEFAULT)
    for arr in kk.JOINT_LIMITS.values():
        assert arr.shape == (N,) and not arr.flags.writeable


def test_check_params_inputs():
    # the argument checks run first, with or without codegen.read.physical
    with pytest.raises(TypeError, match=r"\bp\b"):
        kk.check_params(["x"] * NP)
    with pytest.raises(ValueError, match=r"\bp\b"):
        kk.check_params(DEFAULT[:3])


def test_check_params_physical():
    pytest.importorskip("codegen.read.physical")
    kk.check_params(DEFAULT)
    kk.check_params(DEFAULT.astype(">f8"))
    bad = kk.params_from_dict({"m_3": -1.0})
    with pytest.raises(ValueError, match="3"):
        kk.check_params(bad)

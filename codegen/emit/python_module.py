"""The Python module of a generated robot: Cython source and type stubs
rendered from the ABI description (codegen/emit/abi.py); compiled by
codegen/build/module.py.

    write_python_module(abi, model, values, out_dir, module_name)
        -> out_dir/MODULE.pyx, out_dir/MODULE.pyi

Every robot, Krang included, gets the same module from
templates/python/module.pyx.j2 and .pyi.j2; the argument checks are written once,
in templates/python/checks.pxi, and rendered into each module so that a
generated .pyx compiles without this repository.

    python -m codegen MODEL.toml PARAMS.toml --out generated --module-source krang_kernels --module _kernels

also renders (does not compile) the module's source: `make generate` does so
for the krang_kernels package.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .. import __version__
from .abi import DERIVED, FRAMES, IN, INDEX, INTERLEAVE, INTERLEAVED, OUT, REAL, ROLLOUT_CHUNK, TEMPLATE, nbodies
from .pytext import docstring, py_string, py_tuple
from ..support.templates import template_dir
from .docstrings import (DT_DOC, EE_DOC, FRAME_DOC, compute_all_doc, interleaved_keywords, interleaved_note, kernel_doc,
                         rollout_doc)

TEMPLATES = template_dir("python")
CHECKS = TEMPLATES / "checks.pxi"  # the argument checks every module shares, rendered into it
# The ABI's Python-level metadata functions (not wrapped as kernels).
METADATA = ("default_params", "joint_limits", "param_name", "joint_name", "regressor_param_index", "base_param_name",
            "base_regressor_column")
# The ABI's functions of no input, wrapped as name(out=None).
CONSTANTS = ("neutral",)
SHARED = ("default_params", "params_from_dict", "check_params", "load_params", "link_params", "unpack_interleaved")


@dataclass(frozen=True)
class PyInput:
    var: str  # Python argument name
    check: str  # expression that checks/converts it (one state)
    bcheck: str  # the same for a batch of nb states


@dataclass(frozen=True)
class PyKernel:
    name: str
    cname: str  # the Cython alias of the C function
    doc: str  # rendered docstring literal
    signature: str
    prelude: tuple  # lines run first (index arguments -> C ints)
    lead: str  # the state argument whose shape decides one state or a batch
    inputs: tuple
    shape: str  # repr of the output shape of one state
    call: str  # C call arguments, one state
    ptrs: tuple  # (pointer variable, array) of the batch loop
    bcall: str  # C call arguments of row i of a batch
    bsignature: str  # of the cdef function of a batch
    bargs: str  # its call
    invars: str  # the input variables, comma-separated
    stub: str  # stub signature (without the return type)
    batch: str = ""  # the SIMD batch C function (abi.batch_form), if any: called with a count, then bcall
    multi: bool = False  # several outputs: `shape` is a tuple of shapes, the result a tuple of arrays
    ret: str = "NDArray[np.float64]"  # the stub's return type
    interleaved: dict | None = None  # the batch's lane-interleaved C form (_interleaved), if any


@dataclass(frozen=True)
class PyBlocked:
    """A Python function of a C function with `blocked` arguments (abi.interleaved_functions'
    consumers): blocked arrays (ceil(n / INTERLEAVE), K, INTERLEAVE), batched ones (n, size)."""
    name: str
    cname: str
    doc: str
    signature: str
    stub: str
    count: str  # the expression of n: an argument, or the rows of a batched input
    inputs: tuple  # (var, check expression)
    outputs: tuple  # (var, shape expression, blocked)
    ptrs: tuple  # (pointer variable, array)
    call: str  # C call arguments for states i .. i + m - 1
    invars: str


# States per call of a batch C kernel (its count is an int).
BATCH_BLOCK = 1 << 20


def _py_name(arg) -> str:
    name = "params" if arg.name == "p" else arg.name
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"ABI argument {arg.name!r} is not a Python identifier")
    return name


# Inputs shared by every state of a batch, after the others with a default: var -> its check.
SHARED_INPUTS = {"params": "_params(params)", "ref": "_contact_ref(ref)"}


def _check(arg) -> PyInput:
    var = _py_name(arg)
    if var in SHARED_INPUTS:
        return PyInput(var, SHARED_INPUTS[var], SHARED_INPUTS[var])
    return PyInput(var, f'_input({var}, "{var}", {arg.size})', f'_rows({var}, "{var}", nb, {arg.size})')


def _extern(abi, f) -> str:
    types = {IN: "const double *", OUT: "double *", INDEX: "int", REAL: "double"}
    args = ", ".join(types[a.role] for a in f.args) or "void"
    space = "" if f.returns.endswith("*") else " "
    cname = f"{abi.prefix}{f.name}"
    if not cname.isidentifier() or not cname.isascii():
        raise ValueError(f"C function name {cname!r} is not an identifier")
    return f'{f.returns}{space}_c_{f.name} "{cname}"({args}) nogil'


class _Extra(str):
    """A Python argument that is not an ABI input (ee, frame), with its stub
    and the line that turns it into the C int."""

    def __new__(cls, text, stub, prelude):
        s = super().__new__(cls, text)
        s.stub, s.prelude = stub, prelude
        return s


def _interleaved(f, il) -> dict:
    """The Python side of il, the lane-interleaved form of f's batch kernel (layout="interleaved"):
    its C arguments for states i .. i + m - 1 (i a multiple of INTERLEAVE), the output's elements
    per state K (kp when packed; `k` at run time)."""
    ins = {a.name for a in f.inputs}
    (out,) = il.outputs
    call, ptrs = [], []
    for a in il.args:
        if a.name == "n":
            call.append("<int>m")
        elif a.name == "packed":
            call.append("<int>packed")
        elif a.role == IN and a.name in ins:
            var = _py_name(a)
            ptrs.append((f"d_{var}", var))
            call.append(f"d_{var}" if var in SHARED_INPUTS else f"d_{var} + i * {a.size}")
        elif a.role == OUT and a.blocked:
            ptrs.append(("d_out", "out"))
            call.append(f"d_out + (i // {INTERLEAVE}) * k * {INTERLEAVE}")
        else:
            raise ValueError(f"{il.name}: argument {a.name!r} has no Python counterpart")
    packable = any(a.name == "packed" for a in il.args)
    nv = f.outputs[0].shape[0]
    return dict(cname=f"_c_{il.name}", K=out.shape[0], kp=nv * (nv + 1) // 2 if packable else out.shape[0],
                packable=packable, call=", ".join(call), ptrs=tuple(ptrs))


def _blocked(f) -> PyBlocked:
    """The Python function of C function f, whose arrays are per block of states (Arg.blocked)
    or per state (Arg.batched): n is the rows of its first batched input, else an argument."""
    batched = [a for a in f.inputs if a.batched]
    count = f"_batch_rows({_py_name(batched[0])}, {_py_name(batched[0])!r})" if batched else '_count(n, "n")'
    inputs, call, ptrs, docs = [], [], [], []
    for a in f.args:
        if a.role == INDEX:
            call.append("<int>m")
            continue
        var = "out" if a.role == OUT else _py_name(a)
        ptrs.append((f"d_{var}", var))
        call.append(f"d_{var} + (i // {INTERLEAVE}) * {a.size}" if a.blocked else f"d_{var} + i * {a.size}")
        if a.role == IN:
            inputs.append((var, f'_blocks({var}, "{var}", nblk, {a.shape[0]})' if a.blocked
                           else f'_rows({var}, "{var}", ns, {a.size})'))
            docs.append(f"{var} : array_like, shape " + (f"(ceil(n / {INTERLEAVE}), {a.shape[0]}, {INTERLEAVE})"
                                                         if a.blocked else f"(n, {a.size})") + f"\n    {a.doc}.")
    (out,) = f.outputs
    shape = f"(nblk, {out.shape[0]}, {INTERLEAVE})" if out.blocked else f"(ns, {out.size})"
    shown = (f"(ceil(n / {INTERLEAVE}), {out.shape[0]}, {INTERLEAVE})" if out.blocked else f"(n, {out.size})")
    names = [v for v, _ in inputs] + ([] if batched else ["n"])
    doc = "\n".join([f.doc, "", "Parameters", "----------", *docs]
                     + ([] if batched else ["n : int\n    the number of states (the blocks hold ceil(n / "
                                            f"{INTERLEAVE}) x {INTERLEAVE} lanes)."])
                     + [f"out : ndarray, optional\n    an array to write the result into and return, shape {shown}, "
                        "writeable, aligned, C-contiguous float64 in native byte order (it may be an input: in place).",
                        "", "Returns", "-------", f"ndarray, shape {shown}\n    {out.doc} (float64)"
                        + ("; a new one is 64-byte aligned." if out.blocked else "."), "", "Notes", "-----",
                        "The GIL is released. Inputs must be finite (ValueError otherwise): the NaN lanes of a "
                        "failed factorization are refused by solve_batch_interleaved."])
    return PyBlocked(f.name, f"_c_{f.name}", docstring(doc), ", ".join(names + ["out=None"]),
                     ", ".join([f"{v}: ArrayLike" for v, _ in inputs] + ([] if batched else ["n: int"])
                               + ["out: NDArray[np.float64] | None = None"]),
                     count, tuple(inputs), (("out", shape, out.blocked),), tuple(ptrs), ", ".join(call),
                     ", ".join(v for v, _ in inputs))


def _kernel(f, extra_args=(), index_vars=None, doc="", batch=None, il=None) -> PyKernel:
    """The Python function of C function f; batch: f's SIMD batch form (abi.batch_form), if any,
    il: that batch's lane-interleaved form (layout="interleaved"), if any.
    A kernel with several outputs returns a tuple of arrays (`out`: a tuple of as many)."""
    ins = [_check(a) for a in f.inputs]
    names = [i.var for i in ins if i.var not in SHARED_INPUTS]
    outs = f.outputs
    multi = len(outs) > 1
    call, bcall, ptrs = [], [], []
    for a in f.args:
        if a.role in (INDEX, REAL):
            call.append(index_vars[a.name])
            bcall.append(index_vars[a.name])
            continue
        if a.role == OUT and multi:
            k = outs.index(a)
            var, ptr = f"out[{k}]", f"d_out{k}"
        else:
            var = "out" if a.role == OUT else _py_name(a)
            ptr = f"d_{var}"
        ptrs.append((ptr, var))
        call.append(f"_data({var})")
        bcall.append(ptr if var in SHARED_INPUTS else f"{ptr} + i * {a.size}")
    lead = ", ".join(names + list(extra_args) + (["ref=None"] if any(i.var == "ref" for i in ins) else []))
    has_params = any(i.var == "params" for i in ins)
    sig = f"{lead}, params=None, out=None" if has_params else f"{lead}, out=None"
    arr = "NDArray[np.float64]"
    stub_lead = ", ".join([f"{n}: ArrayLike" for n in names] + [e.stub for e in extra_args]
                          + (["ref: ArrayLike | None = None"] if any(i.var == "ref" for i in ins) else []))
    if multi:
        tup = f"tuple[{', '.join([arr] * len(outs))}]"
        out_stub = tup
        shape = "(" + ", ".join(repr(tuple(a.shape)) for a in outs) + ",)"
    else:
        out_stub = arr
        shape = repr(tuple(outs[0].shape))
    stub = f"{stub_lead}, params: ArrayLike | None = None, out: {out_stub} | None = None" if has_params else \
        f"{stub_lead}, out: {out_stub} | None = None"
    extra_docs = {"ee": ("str or int", EE_DOC), "frame": ("{'world', 'local'}, optional", FRAME_DOC),
                  "dt": ("float", DT_DOC), **CONTACT_DOCS}
    extras = [(e.split("=")[0], *extra_docs[e.split("=")[0]]) for e in extra_args]
    inter = _interleaved(f, il) if il is not None else None
    keywords = interleaved_keywords(inter["packable"]) if inter else ()
    doc = kernel_doc(doc or f.doc, [(_py_name(a), a) for a in f.inputs], extras, outs, batch is not None, keywords,
                     interleaved_note(f.name, INTERLEAVE) if inter else "")
    if inter:
        sig += ', *, layout="row-major"' + (", packed=False" if inter["packable"] else "")
        stub += ', *, layout: Literal["row-major", "interleaved"] = "row-major"' + (
            ", packed: bool = False" if inter["packable"] else "")
    # the batch function takes `n` and then f's arguments: bcall (rows i.. of every array) serves both
    if batch is not None and [a.name for a in batch.args] != ["n"] + [a.name for a in f.args]:
        raise ValueError(f"{batch.name}: arguments are not n + those of {f.name}")
    ctype = {INDEX: "int", REAL: "double"}
    bnames = [i.var for i in ins] + [index_vars[a.name] for a in f.args if a.role in ctype]
    bsig = ", ".join([f"object {i.var}" for i in ins] + [f"{ctype[a.role]} {index_vars[a.name]}" for a in f.args
                                                         if a.role in ctype] + ["object out", "Py_ssize_t nb"])
    return PyKernel(f.name, f"_c_{f.name}", docstring(doc), sig, tuple(e.prelude for e in extra_args), names[0],
                    tuple(ins), shape, ", ".join(call), tuple(ptrs), ", ".join(bcall), bsig,
                    ", ".join(bnames + ["out", "nb"]), ", ".join(i.var for i in ins), stub,
                    batch.name if batch is not None else "", multi, tup if multi else arr, inter)


def _constant(f) -> dict:
    """A function of no input (neutral): the Python function fills `out`."""
    (out,) = f.outputs
    shape = repr(tuple(out.shape))
    doc = f"{f.doc}\n\nReturns a float64 array of shape {shape}; `out`: an array written in place and returned."
    return dict(name=f.name, cname=f"_c_{f.name}", shape=shape, doc=docstring(doc))


def _dispatcher_doc(abi, f) -> str:
    """The C dispatcher's documentation, its C-only sentence made Python's."""
    doc = re.sub(r"\(its position in the end-effector list\)", "(a name in END_EFFECTORS or its index)", f.doc)
    doc = re.sub(r"\s*An unknown ee( or frame)? fills \w+ with NaN\.", "", doc)
    return doc + " An unknown `ee` raises ValueError."


# The contact kernels' arguments that are not arrays (docs/contact-dynamics.md).
CONTACT_DOCS = {
    "mask": ("int, sequence of bool or of str", "the active contacts: a bit mask (bit k: CONTACT_NAMES[k]), "
             "N_CONTACTS flags, or contact names"),
    "kp": ("float, optional", "Baumgarte position gain (1/s^2, >= 0; with `ref`, the reference placements)"),
    "kd": ("float, optional", "Baumgarte velocity gain (1/s, >= 0)"),
    "mu": ("float, optional", "proximal damping (>= 0): 0 an exact solve (the active contacts' rows independent), "
           "> 0 redundant contacts allowed"),
    "restitution": ("float, optional", "coefficient of restitution, 0 (plastic) to 1 (elastic)"),
}


def _contact_kernels(abi) -> list:
    """The contact kernels laid out by the source template: the mask and gains as Python arguments."""
    extras = {
        "mask": _Extra("mask", "mask: int | Sequence[bool] | Sequence[str]", "cdef int mask_i = _contact_mask(mask)"),
        "kp": _Extra("kp=0.0", "kp: float = 0.0", 'cdef double kp_c = _gain(kp, "kp", 0.0)'),
        "kd": _Extra("kd=0.0", "kd: float = 0.0", 'cdef double kd_c = _gain(kd, "kd", 0.0)'),
        "mu": _Extra("mu=0.0", "mu: float = 0.0", 'cdef double mu_c = _gain(mu, "mu", 0.0)'),
        "restitution": _Extra("restitution=0.0", "restitution: float = 0.0",
                              'cdef double restitution_c = _gain(restitution, "restitution", 1.0)'),
    }
    index_vars = {"mask": "mask_i", "kp": "kp_c", "kd": "kd_c", "mu": "mu_c", "restitution": "restitution_c"}
    out = []
    for name in ("contact_jacobian", "contact_drift", "constrained_dynamics", "impulse_dynamics",
                 "constrained_dynamics_derivatives", "impulse_dynamics_derivatives"):
        if abi.has(name):
            f = abi.function(name)
            extra = tuple(extras[a.name] for a in f.args if a.role in (INDEX, REAL))
            out.append(_kernel(f, extra, index_vars))
    return out


def _compute_all(abi) -> dict:
    """compute_all plus friction: one pass over the states, one state or a batch."""
    f, fr = abi.function("compute_all"), abi.function("friction")
    ins = [_check(a) for a in f.inputs]
    names = [i.var for i in ins if i.var != "params"]
    outputs, ptrs, index, documented = [], [], {}, []
    for a in f.args:
        if a.role == IN:
            var = _py_name(a)
            index[var] = len(ptrs)
            ptrs.append((var, 0 if var == "params" else a.size))
            continue
        # world-frame Jacobians are keyed by end-effector name: J_<name>
        src = a.source
        key = f"J_{src[2:-len('_world')]}" if src.startswith("J_") and src.endswith("_world") else a.name
        outputs.append((key, repr(tuple(a.shape))))
        documented.append((key, a))
        ptrs.append((f"res[{py_string(key)}]", a.size))
    (fout,) = fr.outputs
    outputs.append(("friction", repr(tuple(fout.shape))))
    documented.append(("friction", fout))
    ptrs.append(("res['friction']", fout.size))

    def c_args(fn, outs):
        args = []
        for a in fn.args:
            j = index[_py_name(a)] if a.role == IN else outs.pop(0)
            stride = ptrs[j][1]
            args.append(f"ptr[{j}]" + (f" + i * {stride}" if stride else ""))
        return ", ".join(args)

    n_in = len(index)
    calls = [(f"_c_{f.name}", c_args(f, list(range(n_in, n_in + len(f.outputs))))),
             (f"_c_{fr.name}", c_args(fr, [len(ptrs) - 1]))]
    doc = compute_all_doc(f"{f.doc} Also the friction torques (the `friction` kernel).",
                          [(_py_name(a), a) for a in f.inputs], documented)
    return dict(signature=", ".join(names) + ", params=None, out=None", doc=docstring(doc), inputs=ins,
                invars=", ".join(i.var for i in ins),
                lead=names[0], outputs=outputs, ptrs=[e for e, _ in ptrs], calls=calls,
                stub=", ".join(f"{n}: ArrayLike" for n in names)
                + ", params: ArrayLike | None = None, out: Mapping[str, NDArray[np.float64]] | None = None")


def shared_docs(checks: str) -> dict:
    """{name: docstring literal} of the shared functions of checks.pxi (SHARED): the stubs
    repeat the runtime's docstrings, written once there."""
    docs = {m.group(1): m.group(2) for m in re.finditer(r'^def (\w+)\(.*?\):\n    ("""[\s\S]*?""")', checks, re.M)}
    missing = set(SHARED) - set(docs)
    if missing:
        raise ValueError(f"checks.pxi: no docstring for {sorted(missing)}")
    return docs


def context(abi, model, values, module_name: str, header: str) -> dict:
    """Everything the module templates need, from the ABI description."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", header):
        raise ValueError(f"header name {header!r}")
    # per-end-effector kernels (a family) are reached through their dispatcher
    interleaved = {f.batch_of: f for f in abi.functions if f.body == INTERLEAVED}  # batch kernel -> its form
    kernels = [_kernel(f, batch=abi.batch_form(f.name),
                       il=interleaved.get(getattr(abi.batch_form(f.name), "name", None))) for f in abi.functions
               if (f.body == DERIVED or f.forward_to)
               and not f.name.startswith(("jacobian_", "frame_jacobian_time_variation_")) and f.name != "compute_all"
               and not f.family and f.name != "base_params"]  # base_params(params): no state, in the template
    ee = _Extra("ee", "ee: str | int", "cdef int ee_i = _ee_index(ee)")
    frame = _Extra(f"frame={FRAMES[0]!r}", "frame: Literal[" + ", ".join(map(ascii, FRAMES)) + f"] = {FRAMES[0]!r}",
                   "cdef int frame_i = _frame_index(frame)")
    index_vars = {"ee": "ee_i", "frame": "frame_i"}
    kernels.append(_kernel(
        abi.function("jacobian"), (ee, frame), index_vars,
        "Jacobian (6 x N_DOF, linear rows first) of end effector `ee` (a name in END_EFFECTORS or "
        f"its index) in frame {FRAMES[0]!r} (the world axes) or {FRAMES[1]!r} (the end effector's "
        "own axes); the linear rows are the velocity of the end-effector origin."))
    kernels.append(_kernel(
        abi.function("frame_jacobian_time_variation"), (ee, frame), index_vars,
        "dJ/dt (6 x N_DOF, linear rows first) of end effector `ee` (a name in END_EFFECTORS or its "
        f"index) at (q, dq), in frame {FRAMES[0]!r} (world axes, Pinocchio's LOCAL_WORLD_ALIGNED) or "
        f"{FRAMES[1]!r} (its own axes, LOCAL): the time derivative of jacobian(q, ee, frame) along the "
        "motion; dJ dq is the end effector's acceleration at ddq = 0."))
    families = sorted({f.family for f in abi.functions if f.family})
    for name in families:
        f = abi.function(name)
        extra = tuple(ee if a.name == "ee" else frame for a in f.args if a.role == INDEX)
        kernels.append(_kernel(f, extra, index_vars, _dispatcher_doc(abi, f)))
    kernels += _contact_kernels(abi)
    # integrate: dt a float shared by a batch, like params
    dt = _Extra("dt", "dt: float", 'cdef double dt_c = _real(dt, "dt")')
    kernels.append(_kernel(abi.function("integrate"), (dt,), {"dt": "dt_c"}))
    constants = [_constant(abi.function(name)) for name in CONSTANTS]
    blocked = [_blocked(f) for f in abi.functions if f.body == TEMPLATE and any(a.blocked for a in f.args)]
    all_ = _compute_all(abi)
    # every function of the ABI: the wrappers call some, C_FUNCTIONS gives every one's address
    externs = [_extern(abi, f) for f in abi.functions]
    contacts = [c for c in model.contacts] if abi.has("constrained_dynamics") else []
    limits = abi.function("joint_limits")
    names = {f.name for f in abi.functions}
    nbase = abi.function("base_params").outputs[0].shape[0] if "base_params" in names else None
    public = ["N_DOF", "N_Q", "N_BODIES", "BODY_NAMES", "N_PARAMS", "N_PI", "JOINT_NAMES", "PARAM_NAMES", "REGRESSOR_PARAMS",
              "REGRESSOR_PARAM_INDEX", *(["N_BASE", "BASE_PARAM_NAMES", "BASE_COLUMNS", "base_params"] if nbase else []),
              "END_EFFECTORS", "JOINT_LIMITS", "C_FUNCTIONS",
              *(["N_CONTACTS", "CONTACT_NAMES", "CONTACT_ROWS", "N_REF"] if contacts else []),
              *[k.name for k in kernels], *CONSTANTS, *[b.name for b in blocked], "INTERLEAVE", "compute_all", "rollout",
              *SHARED]
    doc = (f"{module_name}: compiled dynamics of robot {abi.name} ({abi.ndof} DOF, {abi.nparams} parameters).\n\n"
           "    Gamma = A(q) ddq + C(q, dq) dq + Q(q) + friction(dq)\n\n"
           "Every kernel reads the robot's parameters at run time from a float64 vector in\n"
           "PARAM_NAMES order (default: default_params()). Inputs are converted to float64\n"
           "(any real dtype, byte order, strides, lists); NaN or inf inputs raise ValueError.\n"
           "`out=` must be a writeable, aligned, C-contiguous float64 array in native byte\n"
           "order of the output's shape, else TypeError/ValueError naming it.\n"
           "Every kernel also takes a batch of N states (q of shape (N, N_DOF)): outputs\n"
           "(N, ...), computed in C with the GIL released, params shared by the batch.\n"
           "End effectors (`ee`): the names in END_EFFECTORS, in index order.")
    return dict(
        version=__version__, header=header, docstring=docstring(doc, ""), externs=externs,
        c_functions=[f.name for f in abi.functions],
        ndof=abi.ndof, nq=abi.nq, nbodies=nbodies(model), nparams=abi.nparams, npi=abi.function("regressor").outputs[0].shape[1],
        nbase=nbase,
        end_effectors=py_tuple(abi.end_effectors),
        contact_names=py_tuple(tuple(c.name for c in contacts)), contact_rows=tuple(c.rows for c in contacts),
        contact_ref_size=sum(c.ref_size for c in contacts),
        contact_ref_offsets=tuple(sum(c.ref_size for c in contacts[:k]) for k in range(len(contacts))),
        ncrows=sum(c.rows for c in contacts),
        frames=py_tuple(FRAMES), frame_names=FRAMES, limit_names=[a.name for a in limits.outputs],
        checks=CHECKS.read_text(), shared_docs=shared_docs(CHECKS.read_text()),
        kernels=kernels, constants=constants, blocked=blocked, all=all_, public=public,
        batch_block=BATCH_BLOCK, interleave=INTERLEAVE,
        rollout=dict(doc=docstring(rollout_doc(abi.function("rollout"), abi.function("rollout_rk4"), ROLLOUT_CHUNK)), chunk=ROLLOUT_CHUNK),
    )


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["py"] = py_string
    return env


def render_python_module(abi, model, values, module_name: str, header: str | None = None) -> dict:
    """{MODULE.pyx: text, MODULE.pyi: text} for the ABI `abi` (the C header
    `header`, default NAME_kernels.h). `model` and `values` are accepted for
    symmetry with the C renderer; the module reads names, defaults and limits
    from the compiled C itself."""
    if not (module_name.isidentifier() and module_name.isascii()):
        raise ValueError(f"module name {module_name!r} is not a Python identifier")
    ctx = context(abi, model, values, module_name, header or f"{abi.name}_kernels.h")
    env = _env()
    return {f"{module_name}{suffix}": env.get_template(template).render(filename=f"{module_name}{suffix}", **ctx)
            for template, suffix in (("module.pyx.j2", ".pyx"), ("module.pyi.j2", ".pyi"))}


def write_python_module(abi, model, values, out_dir, module_name: str, header: str | None = None) -> list:
    """Render out_dir/MODULE.pyx and out_dir/MODULE.pyi (render_python_module);
    returns the two paths. The module build's own scratch directory uses it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_python_module(abi, model, values, module_name, header).items():
        (out_dir / name).write_text(text, encoding="utf-8")
        written.append(out_dir / name)
    return written

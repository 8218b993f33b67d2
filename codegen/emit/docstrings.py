"""The Python docstrings of a generated module, from the ABI description.

Each kernel's docstring is NumPy style (summary, Parameters, Returns, Notes), so that the API
reference (MkDocs + mkdocstrings, `make docs`) renders the generated stubs (.pyi) with shapes,
units and frames. The words come from codegen/emit/abi.py: a Function's `doc` is the summary,
each Arg's `doc` what it holds; this module only lays them out, once for every robot.
"""
from __future__ import annotations

BATCH_NOTE = ("Batches: a first argument of shape (N, N_DOF) (every other state argument likewise, no "
              "broadcasting) gives an output of shape (N, ...), row i the result of state i, computed in C "
              "with the GIL released; `params` (N_PARAMS,) is shared by the batch.")
SIMD_NOTE = ("This kernel evaluates a batch with the SIMD batch kernel (4 or 8 states per instruction): "
             "each row equals the single-state call to rounding (multiply-adds may be fused in other "
             "places; within 1e-14 relative), not bit for bit.")
SCALAR_NOTE = "Row i equals the single-state call bit for bit (the same C kernel, once per row)."
EE_DOC = "the end effector: a name in END_EFFECTORS or its index; another value raises ValueError"
FRAME_DOC = "'world': frame 0 (world) axes; 'local': the end effector's own axes"
DT_DOC = "the time step, s (a finite real number; shared by a batch)"
OUT_DOC = ("an array to write the result into and return: writeable, aligned, C-contiguous float64 in "
           "native byte order, of the result's shape (TypeError or ValueError naming it otherwise)")
PARAMS_NOTE = "default: default_params()"


def _shape(shape: tuple, batch: bool) -> str:
    one = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return f"shape {one} or (N, {', '.join(map(str, shape))}) for a batch" if batch else f"shape {one}"


def parameters(inputs, extras=()) -> list[str]:
    """The Parameters section: (Python name, ABI Arg) inputs, then (name, type, doc) extras
    (ee, frame), then params and out."""
    lines = ["Parameters", "----------"]
    for name, arg in inputs:
        if name == "params":
            continue
        lines += [f"{name} : array_like, {_shape(arg.shape, True)}", f"    {arg.doc or name}."]
    for name, typ, doc in extras:
        lines += [f"{name} : {typ}", f"    {doc}."]
    p = next((a for n, a in inputs if n == "params"), None)
    if p is not None:
        lines += [f"params : array_like, shape ({p.shape[0]},), optional",
                  f"    {p.doc or 'the parameter vector'}; {PARAMS_NOTE}."]
    return lines


def kernel_doc(summary: str, inputs, extras, out_args, simd: bool, keywords=(), notes="") -> str:
    """One kernel's docstring: summary, Parameters (with `out`, then the keyword-only
    (name, type, doc) `keywords`), Returns, Notes on batches (then `notes`).
    out_args: the output Args; several are returned as a tuple (`out`: a tuple of as many)."""
    lines = [summary, ""] + parameters(inputs, extras)
    batch_note = BATCH_NOTE if any(n == "params" for n, _ in inputs) else \
        BATCH_NOTE.replace("; `params` (N_PARAMS,) is shared by the batch", "")
    if len(out_args) == 1:
        lines += ["out : ndarray, optional", f"    {OUT_DOC}.", "", "Returns", "-------"]
    else:
        lines += [f"out : tuple of {len(out_args)} ndarray, optional",
                  f"    one array per result, distinct, each {OUT_DOC[3:]}.", "", "Returns", "-------"]
    if keywords:  # keyword-only, after out: insert them before Returns
        lines[-3:-3] = [x for name, typ, doc in keywords for x in (f"{name} : {typ}", f"    {doc}.")]
    for a in out_args:  # one result unnamed, several by name (a tuple)
        head = f"{a.name} : ndarray" if len(out_args) > 1 else "ndarray"
        lines += [f"{head}, {_shape(a.shape, True)}", f"    {a.doc or 'the result'} (float64)."]
    lines += ["", "Notes", "-----", f"{batch_note} {SIMD_NOTE if simd else SCALAR_NOTE}"] + (["", notes] if notes else [])
    return "\n".join(lines)


def interleaved_keywords(packable: bool) -> list:
    """The (name, type, doc) keyword-only arguments of a kernel with an interleaved batch form."""
    kw = [("layout", "{'row-major', 'interleaved'}, optional",
           "'row-major' (default): shape (N, ...) as above; 'interleaved': a batch's results by blocks of "
           "INTERLEAVE states, shape (ceil(N / INTERLEAVE), K, INTERLEAVE) (Notes); needs a batch")]
    if packable:
        kw.append(("packed", "bool, optional", "with layout='interleaved': the lower triangle only, row by row "
                   "(K = N_DOF (N_DOF + 1) / 2, entry (i, j), j <= i, at k = i (i + 1) / 2 + j), what "
                   "cholesky_batch_interleaved reads"))
    return kw


def interleaved_note(name: str, interleave: int) -> str:
    """The Notes paragraph of a kernel with an interleaved batch form (C: NAME_<name>_batch_interleaved)."""
    return (f"layout='interleaved' calls the C kernel {name}_batch_interleaved (docs/c-abi.md): element k "
            f"of state {interleave} b + l at out[b, k, l], K = N_DOF * N_DOF row-major (or packed); the last "
            "block's padding lanes repeat the last state's result. A new result is 64-byte aligned. Row-major "
            f"is faster below one block ({interleave} states); unpack_interleaved turns the result into "
            "(N, N_DOF, N_DOF) row-major matrices.")


def compute_all_doc(summary: str, inputs, outputs) -> str:
    """compute_all's docstring: outputs is [(key, Arg)] of the returned dict. The end effectors'
    Jacobians (keys J_<name>) are described once, by END_EFFECTORS: a docstring names no model
    string (codegen.emit.pytext)."""
    lines = [summary, ""] + parameters(inputs)
    lines += ["out : dict of str to ndarray, optional",
              "    some of the result's keys, each an array written in place (the rules of every `out=`); "
              "the keys it lacks get new arrays, and the result holds the given arrays themselves.", "",
              "Returns", "-------", "dict of str to ndarray", "    float64 arrays:", ""]
    jac = [a for k, a in outputs if k.startswith("J_")]
    for k, a in outputs:
        if not k.startswith("J_"):
            lines.append(f"    - `{k}`: {_shape(a.shape, False)}, {a.doc or k}.")
        elif a is jac[0]:
            lines.append(f"    - `'J_' + name` for each name in END_EFFECTORS: {_shape(a.shape, False)}, "
                         f"{a.doc or 'its Jacobian'}.")
    lines += ["", "Notes", "-----", BATCH_NOTE + " Every array of the result then has a leading axis N."]
    return "\n".join(lines)


def rollout_doc(f, rk4, chunk: int) -> str:
    """The Python rollout's docstring, from the C functions' ABI entries `f` (Euler) and `rk4`
    (codegen/emit/abi.py)."""
    arg = {a.name: a for a in f.args}
    lines = ["Rolls n independent states forward by semi-implicit Euler (MuJoCo's Euler integrator without "
             "damping): v' = v + dt forward_dynamics(q, v, tau_k), q' = integrate(q, v', dt), or by RK4 "
             "(`method`), in C (forward_dynamics' SIMD batch kernel) with the GIL released.", "",
             "Parameters", "----------",
             "q0 : array_like, shape (n, N_Q), or (N_Q,) for one state", f"    {arg['q0'].doc}.",
             "v0 : array_like, shape (n, N_DOF), or (N_DOF,)", f"    {arg['v0'].doc}.",
             "tau_sequence : array_like, shape (n, steps, N_DOF), or (steps, N_DOF) for one state",
             f"    {arg['tau'].doc}; steps >= 1.",
             "dt : float", "    the time step, s: finite and > 0.",
             "params : array_like, shape (N_PARAMS,), optional", f"    the parameter vector; {PARAMS_NOTE}.",
             "threads : int, optional",
             f"    threads to split the states between (>= 1; default 1), in ranges of whole chunks of {chunk} "
             "states: the result is the same, bit for bit, whatever the number of threads.",
             "method : {'euler', 'rk4'}, optional",
             "    'euler' (default): semi-implicit Euler, NAME_rollout; 'rk4': " + rk4.doc.split(" Same arguments")[0]
             .replace("rollout with the classical", "the classical") + " (NAME_rollout_rk4).", "",
             "Returns", "-------",
             "q : ndarray, shape (n, steps, N_Q), or (steps, N_Q) for one state",
             "    the configuration after each step (float64; the initial one is not repeated).",
             "v : ndarray, shape (n, steps, N_DOF), or (steps, N_DOF)", "    the velocity after each step (float64).",
             "", "Notes", "-----",
             "State-major arrays, as MuJoCo's rollout has them: q[i, k] is state i after k + 1 steps. "
             "Each state's trajectory equals a loop of forward_dynamics and integrate to rounding (the batch "
             "kernel may fuse multiply-adds in other places than the single-state call), not bit for bit. The "
             "C function: NAME_rollout (docs/c-abi.md)."]
    return "\n".join(lines)

"""The pipeline: model records -> derivation -> kernels -> files from templates.

`generate(model, values, config)` works from records (any front end);
`generate_from_files(model.toml, params.toml, config)` loads them first. The
command line is codegen.cli. Output is byte-for-byte reproducible (no
timestamps, no absolute paths, stable ordering) and atomic: every file is
written under a staging directory inside the output directory and committed
all together or not at all, across crashes too (codegen/commit.py: a journal
the next run completes).
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import sympy as sp
from sympy.core.cache import clear_cache

from . import __version__
from .commit import write_atomically
from .emit.abi import OPTIONAL, OUT, TEMPLATE, describe, regressor_columns
from .emit.cnames import c_string, cnames, comment_line, comment_text, doc_lines
from .derive.base_parameters import base_set
from .derive.outputs import derive
from .derive.regressor import regressor_params
from .emit.batch import batch
from .emit.chunks import split_long
from .emit.cprint import c_double
from .emit.cse import Argument, Kernel, emit
from .emit.layout import add_code_prefetch, guard_inputs, place_writes
from .emit.pair_loops import emit_pairs, pair_form_key
from .emit.routines import emit_split
from .read.expr_value import check_origins
from .read.model import ModelError, load_model, load_param_values
from .parallel_emit import Emission, text_only
from .progress import stage
from .source_digest import source_digest  # noqa: F401 - banner(); re-exported for existing callers

# The directory holding the codegen package: the repository, or site-packages
# once installed. The templates ship inside the package (package data).
ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "codegen" / "emit" / "templates"


@dataclass(frozen=True)
class CodegenConfig:
    """What to generate and where; passed through every stage."""
    out_dir: Path = Path("generated")
    name: str | None = None  # C prefix (default: the model name), sanitized by codegen.emit.cnames
    end_effectors: tuple = ()  # URDF input: links to expose as end effectors
    snap: bool = True  # URDF input: rotation entries within 1e-9 of 0, +-1 become exact
    python: bool = False  # also build an importable Python module (codegen.emit.module_build)
    emit_model: bool = False  # URDF input: also write the derived model and parameter TOML
    inputs: tuple = field(default=())  # (label, SHA-256) of every input file, for the banner
    # the kernels ("A", "C", "all": compute_all) computed with one static
    # routine per group of isomorphic subtrees (codegen/derive/subtrees.py): less
    # machine code per tick. Not A by default: measured, sharing cut C's code
    # by a third for +2 % of its hot time, but A's by 4 KB for +7-12 %
    # (Krang, Baxter); compute_all with it is faster than without.
    share_subtrees: tuple = ("C", "all")
    # the optional kernels (codegen/emit/abi.py OPTIONAL: the dynamics
    # derivatives) this build contains; None: all of them
    kernels: tuple | None = None
    # with python: compile the module for this machine's CPU (-march=native,
    # one copy of each kernel) instead of portably (target_clones, three)
    native: bool = False


def kernel_spec(f, d) -> Kernel:
    """A derived function of the ABI with the derivation outputs it writes."""
    return Kernel(f.name, f.doc, [Argument(a.name, a.size, a.role == OUT) for a in f.args],
                  {a.name: d[a.source] for a in f.outputs}, {a.name: a.source for a in f.outputs},
                  arrays={a.source: a.name for a in f.inputs if a.source})


def kernel_specs(abi, d):
    """The derived functions of the ABI, each with the derivation outputs it writes."""
    return [kernel_spec(f, d) for f in abi.derived]


def ready_specs(abi, d):
    """The derived functions of the ABI whose outputs the derivation `d` (so far) has."""
    return [kernel_spec(f, d) for f in abi.derived if all(a.source in d for a in f.outputs)]


def emit_kernel(kernel, d, prefix, batched=()):
    """A kernel whose outputs the derivation also gave in the form with shared
    subtree routines (derive's `share`, codegen/derive/subtrees.py: "A", "C" or
    "all" for compute_all) is emitted in that form; the rest straight.
    `batched`: names of the kernels the batch kernels reprint (they need the
    straight form too)."""
    if pair_form_key(kernel) is not None:  # the dynamics derivatives
        kernel = emit_pairs(kernel, d)
        guard_inputs(kernel, prefix + kernel.name)
        return split_long(kernel, prefix + kernel.name)  # no code prefetch: called in loops (MPC), hot, where it cost more than it saves
    for key in ("A", "C", "all"):
        split = d.get(f"{key}_split")
        if split is not None and set(kernel.sources.values()) == set(split.outputs):
            kernel = emit_split(kernel, d, split, kernel.name in batched)
            break
    else:
        kernel = emit(kernel, d)
        place_writes(kernel)
    guard_inputs(kernel, prefix + kernel.name)
    if kernel.name not in batched:  # a batch kernel reprints the body, statement by statement
        split_long(kernel, prefix + kernel.name)
    add_code_prefetch(kernel)
    return kernel


def doc_comment(text: str, indent: str = " * ", width: int = 78) -> list:
    """Free text (it may quote model names) wrapped into comment lines, each
    escaped after the wrap (codegen.emit.cnames.doc_lines)."""
    return doc_lines(text, width - len(indent))


def banner(filename, config, kernels, prefix) -> str:
    lines = [
        f"/* {filename}: generated by krang-kernels codegen {__version__}. DO NOT EDIT.",
        " * Regenerate with `make generate` (or python -m codegen); edit the model file or the",
        " * generator instead.",
    ]
    lines += [f" * {comment_line(label).ljust(16)} {comment_line(digest)}" for label, digest in config.inputs]
    lines += [f" * {'generator'.ljust(16)} {source_digest()}",
              " * operations per function (SymPy count_ops after CSE):"]
    width = max(len(prefix + k.name) for k in kernels)
    lines += [f" *   {(prefix + k.name).ljust(width)} {k.ops:>7}" for k in kernels]
    return "\n".join(lines) + "\n */"


def _check_values(model, values) -> tuple:
    values = tuple(values)
    if len(values) != len(model.param_names):
        raise ModelError(f"{len(values)} parameter values for {len(model.param_names)} parameters")
    for n, v in zip(model.param_names, values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ModelError(f"parameter {n!r} = {v!r} is not a finite number")
    values = tuple(float(v) for v in values)
    check_origins(model, values, "default parameters")  # what the readers check, for callers of generate()
    return values


def base_outputs(model, values, d):
    """The base parameters at the default geometry (codegen/derive/base_parameters.py),
    added to the derivation's outputs: Yb, the independent columns of Y, and
    beta = K_b pi over the parameter symbols."""
    with stage("base parameters"):
        base = base_set(model, values, d)
    Y, params = d["Y"], d["symbols"].params
    d["Yb"] = Y[:, list(base.columns)]
    pi = [params[n] for n in regressor_params(model)]
    d["beta"] = sp.Matrix([sum((sp.Float(c) * x for c, x in zip(row, pi) if c != 0), sp.S.Zero)
                           for row in base.combination])
    return base


def render(abi, names, model, values, kernels, config, base=None) -> dict:
    """File name -> text of the header and the source."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["doc"] = doc_comment
    env.filters["comment"] = comment_line
    P, prefix = names.macro, abi.prefix
    header, source = f"{names.prefix}_kernels.h", f"{names.prefix}_kernels.c"
    ee_macros = [(f"{P}_{e.upper()}", i) for i, e in enumerate(names.ees)]
    part_of = abi.part_of()
    if len({part_of[f.name] for f in abi.functions if f.body == TEMPLATE}) != 1:
        raise ValueError("the template-laid-out functions must share one part (abi.INTERFACE)")
    batches = [batch(next(k.straight or k for k in kernels if k.name == f.batch_of), f.name,
                     simd=not model.floating_base)
               for f in abi.batched]

    def parts_of(names_) -> str:
        """KKIN(a) || KKIN(b): the parts holding these functions (a static helper's guard)."""
        return " || ".join(f"KKIN({i})" for i in sorted({part_of[n] for n in names_})) or "0"

    ctx = dict(
        P=P, prefix=prefix, abi=abi, ndof=model.ndof, nq=model.nq, np=len(model.param_names), header=header,
        npi=len(regressor_columns(model)), regressor_first=len(model.geometry) + 1,
        base_names=[c_string(n) for n in base.names] if base else [], base_columns=base.columns if base else (),
        base_lines=[comment_line(f"{i:3d}  {n}") for i, n in enumerate(base.names)] if base else [],
        base_geometry=", ".join(f"{g} = {c_double(v)}" for g, v in base.geometry) if base else "",
        guard=f"{P}_KERNELS_H", kernels=kernels, ee_macros=ee_macros,
        batches=batches,
        frame_macros=[(f"{P}_WORLD", 0), (f"{P}_LOCAL", 1)],
        # each part of the source (abi.parts) has the static helpers its kernels call, no
        # other (-Wunused-function): a robot without revolute joints calls no sincos_q
        parts=[(i, name, doc_comment(", ".join(f.name for f in fs), indent=" *     "))
               for i, name, fs in abi.parts()],
        part_of=part_of,
        part_names={i: comment_line(name) for i, name, _ in abi.parts()},
        sincos_parts=parts_of(k.name for k in kernels if any(st.startswith("sincos_q(") for st in k.setup)),
        simd_parts=parts_of(b.name for b in batches if b.simd),
        lanes_sincos_parts=parts_of(b.name for b in batches if b.simd and b.sincos),
        joint_lines=[f"{i:3d}  {comment_text(n)}" for i, n in enumerate(model.joint_names)],
        param_lines=[f"{i:3d}  {comment_text(n)}" for i, n in enumerate(model.param_names)],
        jacobian_cases=[(m, f"{P}_{frame.upper()}", f"jacobian_{e}_{frame}")
                        for (m, _), e in zip(ee_macros, names.ees) for frame in ("world", "local")],
        limits=[tuple("NAN" if getattr(f.limits, k, None) is None else c_double(getattr(f.limits, k))
                      for k in ("lower", "upper", "velocity", "effort")) for f in model.joints],
        defaults=[(f"p[{i}]", c_double(v), comment_text(n))
                  for i, (n, v) in enumerate(zip(model.param_names, values))],
        param_names=[c_string(n) for n in model.param_names],
        joint_names=[c_string(n) for n in model.joint_names],
    )
    return {filename: env.get_template(template).render(
                banner=banner(filename, config, kernels, prefix), **ctx)
            for template, filename in (("kernels.h.j2", header), ("kernels.c.j2", source))}


def _python_builder(abi, model, values, config, kernels=()):
    try:
        from .emit.module_build import build_python_module
    except ImportError as exc:
        if exc.name not in ("codegen.emit.module_build", __package__ + ".emit.module_build"):
            raise
        raise ModelError("--python is not available yet (codegen.emit.module_build is missing)") from None
    # the module is NAME_kernels with NAME the C prefix (a valid identifier),
    # built in the staging directory next to the C, renamed with it
    config = dataclasses.replace(config, name=abi.name)
    # the parts' operation counts: the module build starts the largest first. A batch kernel
    # reprints its scalar kernel's statements: counted as that kernel's operations once more
    part_of, weights, ops = abi.part_of(), {}, {k.name: k.ops for k in kernels}
    for f in abi.functions:
        n = ops.get(f.name, 0) + (ops.get(f.batch_of, 0) if f.batch_of else 0)
        weights[part_of[f.name]] = weights.get(part_of[f.name], 0) + n
    return lambda stage: build_python_module(abi, model, values, stage, config, weights)


def generate(model, values, config, extra_files=None) -> list:
    """Generate the C (and optionally Python) for `model` (a Model record)
    with default parameters `values` into config.out_dir; returns the
    written paths. generate(model_path, params_path, out_dir) is the older
    file form, kept for existing callers: generate_from_files."""
    if isinstance(model, (str, os.PathLike)):
        return generate_from_files(model, values, config)
    if not isinstance(config, CodegenConfig):
        config = CodegenConfig(out_dir=Path(config))
    values = _check_values(model, values)
    names = cnames(model, config.name)
    wanted = OPTIONAL if config.kernels is None else config.kernels
    unknown = [k for k in wanted if k not in OPTIONAL]
    if unknown:
        raise ModelError(f"kernels: {', '.join(map(repr, unknown))} cannot be left in or out; "
                         f"the optional kernels are {', '.join(OPTIONAL)}")
    # every kernel but the base parameters' (their sizes come last): emitted by
    # child processes as soon as the derivation has their outputs (codegen/parallel_emit.py)
    early = describe(model, names=names, kernels=config.kernels)
    batched = {f.batch_of for f in early.batched}
    with Emission(lambda k, d: emit_kernel(k, d, early.prefix, batched)) as emission:
        d = derive(model, config.share_subtrees,
                   tuple(k for k, f in (("inverse", "inverse_dynamics_derivatives"),
                                        ("forward", "forward_dynamics_derivatives")) if f in wanted),
                   ready=lambda d: emission.offer(ready_specs(early, d), d))
        # every CPU emits while this process finds the base parameters (the last derivation
        # outputs: the forward dynamics' derivatives, the largest kernel, start now)
        emission.offer(ready_specs(early, d), d, parent_busy=False)
        base = base_outputs(model, values, d)
        abi = describe(model, names=names, nbase=base.nbase, kernels=config.kernels)
        kernels = emission.finish(kernel_specs(abi, d), d)
    files = render(abi, names, model, values, kernels, config, base)
    files.update(extra_files or {})
    build = None
    if config.python:
        # the compilers run next to this process: free the derivation's SymPy graphs and
        # SymPy's cache first (TIAGo: this process held ~560 MB through its module build)
        del d, emission
        kernels = [text_only(k) for k in kernels]
        clear_cache()
        gc.collect()
        build = _python_builder(abi, model, values, config, kernels)
    return write_atomically(Path(config.out_dir), files, build, stale_stem=f"{names.prefix}_kernels")


def _sha256(path, what) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise ModelError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def generate_from_files(model_path, params_path, config) -> list:
    """The TOML path: model file + parameter file -> generate(). `config` may
    be a CodegenConfig or just the output directory."""
    if not isinstance(config, CodegenConfig):
        config = CodegenConfig(out_dir=Path(config))
    model = load_model(model_path)
    values = load_param_values(params_path, model)
    inputs = (("model file", _sha256(model_path, "model file")),
              ("parameter file", _sha256(params_path, "parameter file")))
    return generate(model, values, dataclasses.replace(config, inputs=inputs))

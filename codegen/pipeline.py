"""The pipeline: model records -> derivation -> kernels -> files from templates.

`generate(model, values, config)` works from records (any front end);
`generate_from_files(model.toml, params.toml, config)` loads them first. `generate_urdf(path, options, out_dir)` reads a URDF first
(the names: NAME_ and NAME_kernels with NAME the `name` option, else the URDF
file's name, not its <robot name>, often a package name a user never typed). The
command line is codegen.cli. Output is byte-for-byte reproducible (no
timestamps, no absolute paths, stable ordering) and atomic: every file is
written under a staging directory inside the output directory and committed
all together or not at all, across crashes too (codegen/build/commit.py: a journal
the next run completes).
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

from sympy.core.cache import clear_cache

from .build.commit import write_atomically
from .build.export import cmake_files
from .build.module import build_python_module
from .derive.base_parameters import base_outputs
from .derive.outputs import derive
from .emit.abi import INTERLEAVED, OPTIONAL, describe
from .emit.cnames import cnames, fragment
from .emit.kernels import emit_kernel, kernel_specs, ready_specs
from .emit.parallel import Emission, text_only
from .emit.python_module import render_python_module
from .emit.render_c import render
from .read.expr_value import check_origins
from .read.model import ModelError, load_model, load_param_values
from .read.urdf_parse import read_bytes
from .read.urdf_summary import snap_report, summary_line, without_friction
from .support.options import GenerateOptions, UrdfOptions, contact_pairs


@dataclass(frozen=True)
class CodegenConfig(GenerateOptions):
    """One generation run: the options (GenerateOptions, defaults there), where the
    files go, and the digests of the inputs for the banner."""
    out_dir: Path = Path("generated")
    inputs: tuple = field(default=())  # (label, SHA-256) of every input file, for the banner
    # also render the Python module's source (.pyx, .pyi) into this directory, uncompiled
    # (the built-in krang_kernels package), as `module` (default NAME_kernels)
    module_source: Path | None = None
    module: str | None = None
    # also write the C library's CMake project (CMakeLists.txt, the package's and the
    # pkg-config file's templates: codegen/emit/cmake_project.py) beside the C
    cmake: bool = False


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


def part_weights(abi, kernels) -> dict:
    """part -> the operation count of its kernels (a module build starts the largest
    first). A batch kernel reprints the statements of its scalar kernel (or of the
    kernel that one forwards to) over vectors: counted as twice those operations, as
    its compile time is 2-3 times the scalar kernel's (Krang's derivatives, gcc 12). An
    interleaved kernel reprints its row-major batch kernel's statements: weighed as that one."""
    part_of, weights, ops = abi.part_of(), {}, {k.name: k.ops for k in kernels}
    for f in abi.functions:
        batch = abi.function(f.batch_of) if f.body == INTERLEAVED else f  # the BATCH function it reprints
        n = ops.get(f.name, 0) + (2 * ops.get(abi.batch_source(batch), 0) if f.batch_of else 0)
        weights[part_of[f.name]] = weights.get(part_of[f.name], 0) + n
    return weights


def parts_file(abi, kernels, c_source: str) -> str:
    """The parts of the C source as data for a build that is not this generator's
    (setup.py: Krang's extension): JSON, the heaviest part first."""
    weights = part_weights(abi, kernels)
    order = sorted(weights, key=lambda k: (-weights[k], k))
    return json.dumps({"c_source": c_source, "parts": [[k, weights[k]] for k in order]}) + "\n"


def _python_builder(abi, model, values, config, kernels=()):
    # the module is NAME_kernels with NAME the C prefix (a valid identifier),
    # built in the staging directory next to the C, renamed with it
    config = dataclasses.replace(config, name=abi.name)
    weights = part_weights(abi, kernels)
    return lambda stage: build_python_module(abi, model, values, stage, config, weights)


def generate(model, values, config, extra_files=None) -> list:
    """Generate the C (and optionally Python) for `model` (a Model record)
    with default parameters `values` into config.out_dir; returns the
    written paths. From a model file and a parameter file: generate_from_files."""
    if not isinstance(config, CodegenConfig):  # an output directory: the default options
        config = CodegenConfig(out_dir=Path(config))
    values = _check_values(model, values)
    names = cnames(model, config.name)
    wanted = OPTIONAL if config.kernels is None else config.kernels
    unknown = [k for k in wanted if k not in OPTIONAL]
    if unknown:
        raise ModelError(f"kernels: {', '.join(map(repr, unknown))} cannot be left in or out; "
                         f"the optional kernels are {', '.join(OPTIONAL)}")
    if "constrained_dynamics_derivatives" in wanted:
        lacking = [k for k in ("inverse_dynamics_derivatives", "contact_dynamics") if k not in wanted]
        if lacking:
            raise ModelError(f"kernels: constrained_dynamics_derivatives needs {' and '.join(lacking)}")
    # every kernel but the base parameters' (their sizes come last): emitted by
    # child processes as soon as the derivation has their outputs (codegen/emit/parallel.py)
    early = describe(model, names=names, kernels=config.kernels)
    batched = {early.batch_source(f) for f in early.batched}
    with Emission(lambda k, d: emit_kernel(k, d, early.prefix, batched)) as emission:
        d = derive(model, config.share_subtrees,
                   tuple(k for k, f in (("inverse", "inverse_dynamics_derivatives"),
                                        ("forward", "forward_dynamics_derivatives"),
                                        ("contact", "constrained_dynamics_derivatives")) if f in wanted),
                   ready=lambda d: emission.offer(ready_specs(early, d), d))
        # every CPU emits while this process finds the base parameters (the last derivation
        # outputs: the forward dynamics' derivatives, the largest kernel, start now)
        emission.offer(ready_specs(early, d), d, parent_busy=False)
        base = base_outputs(model, values, d)
        abi = describe(model, names=names, nbase=base.nbase, kernels=config.kernels)
        kernels = emission.finish(kernel_specs(abi, d), d)
    files = render(abi, names, model, values, kernels, config, base)
    if config.cmake:
        files.update(cmake_files(f"{names.prefix}_kernels"))
    files.update(extra_files or {})
    build = None
    if config.python:
        # the compilers run next to this process: free the derivation's SymPy graphs and
        # SymPy's cache first (measured: docs/design-notes.md#memory-before-the-compilers)
        del d, emission
        kernels = [text_only(k) for k in kernels]
        clear_cache()
        gc.collect()
        build = _python_builder(abi, model, values, config, kernels)
    written = write_atomically(Path(config.out_dir), files, build, stale_stem=f"{names.prefix}_kernels")
    if config.module_source is not None:  # after the C, which it declares
        module = config.module or f"{abi.name}_kernels"
        sources = render_python_module(abi, model, values, module, f"{names.prefix}_kernels.h")
        sources[f"{module}_parts.json"] = parts_file(abi, kernels, f"{names.prefix}_kernels.c")
        written += write_atomically(Path(config.module_source), sources)  # its compiled module stays
    return written


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


def default_name(path) -> str:
    """NAME from the URDF file name: its stem made a C identifier (codegen.read.urdf's rule)."""
    from .read.urdf import _model_name  # the reader's rule, imported at call time

    return _model_name(None, Path(path).name.split(".")[0])


def _no_end_effector_warning(model) -> str:
    parents = {f.parent for f in model.frames}
    leaves = [f.key for f in model.frames if f.key not in parents][:4]
    return ("no end effector given: the module's jacobian, fk and other per-end-effector kernels will raise; "
            f"pass --end-effector LINK (end_effectors=[...]), e.g. a leaf link: {', '.join(leaves)}")


def generate_urdf(path, options: UrdfOptions, out_dir, cmake: bool = False) -> tuple:
    """Generate into out_dir (committed atomically by codegen.pipeline); cmake: with the
    C library's CMake project (CodegenConfig.cmake).
    Returns (written paths, summary line, warnings, module name)."""
    from .read.urdf import load_urdf  # through sys.modules at call time (tests replace the reader)

    data = read_bytes(path)  # regular files only, capped: the digest of what the reader reads
    name = options.name or default_name(path)
    read = dict(name=name, end_effectors=tuple(options.end_effectors))
    if options.floating_base:  # codegen.read.urdf: the root link on a free-flying joint
        read["floating_base"] = True
    if options.mimic != "refuse":  # codegen.read.urdf: mimic joints as independent coordinates
        read["mimic"] = options.mimic
    if options.contacts:  # codegen.read.records.Contact
        read["contacts"] = contact_pairs(options.contacts)
    robot = load_urdf(path, snap=options.snap, **read)
    snap = snap_report(robot.model, load_urdf(path, snap=False, **read).model) if options.snap else None
    values = tuple(robot.values) if options.friction else without_friction(robot.model, robot.values)
    warnings = list(getattr(robot, "warnings", ()))
    warnings += [] if robot.model.end_effectors or robot.model.contacts else [_no_end_effector_warning(robot.model)]
    extra = {}
    if options.emit_model:
        model_toml, params_toml = robot.to_toml()
        stem = fragment(name)
        extra = {f"{stem}.toml": model_toml, f"{stem}_params.toml": params_toml}
    generate_options = {f.name: getattr(options, f.name) for f in dataclasses.fields(GenerateOptions)}
    config = CodegenConfig(**{**generate_options, "name": name}, out_dir=Path(out_dir), cmake=cmake,
                           inputs=(("URDF file", hashlib.sha256(data).hexdigest()),))
    written = generate(robot.model, values, config, extra_files=extra)
    header = next(p.name for p in written if p.name.endswith("_kernels.h"))
    module = header[:-len(".h")]
    summary = summary_line(robot.model, values, module, options.friction, snap, getattr(robot, "mimic", ()))
    return written, summary, warnings, module

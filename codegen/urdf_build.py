"""A URDF with its options -> generated files (C, and the Python module if asked),
the summary line and the warnings. Shared by the command line (codegen.cli)
and the one call from Python (codegen.urdf_import).

Names: the C prefix and module are NAME_ and NAME_kernels with NAME the
`name` option, else the URDF file's name without its extension (made a C
identifier: ur5_robot.urdf -> ur5_robot_kernels). Not the URDF's
<robot name>: that is often a package name (z1_description, UF_ROBOT) a
user never typed, so the module name would surprise.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .emit.cnames import fragment
from .generate import CodegenConfig, generate
from .read.model import ModelError
from .urdf_options import UrdfOptions
from .urdf_summary import snap_report, summary_line, without_friction


def default_name(path) -> str:
    """NAME from the URDF file name: its stem made a C identifier (codegen.read.urdf's rule)."""
    from .read.urdf import _model_name

    return _model_name(None, Path(path).name.split(".")[0])


def _no_end_effector_warning(model) -> str:
    parents = {f.parent for f in model.frames}
    leaves = [f.key for f in model.frames if f.key not in parents][:4]
    return ("no end effector given: the module's jacobian, fk and other per-end-effector kernels will raise; "
            f"pass --end-effector LINK (end_effectors=[...]), e.g. a leaf link: {', '.join(leaves)}")


def generate_urdf(path, options: UrdfOptions, out_dir) -> tuple:
    """Generate into out_dir (committed atomically by codegen.generate).
    Returns (written paths, summary line, warnings, module name)."""
    from .read.urdf import load_urdf  # through sys.modules at call time (tests replace the reader)

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read URDF file {path}: {exc.strerror or exc}") from None
    name = options.name or default_name(path)
    read = dict(name=name, end_effectors=tuple(options.end_effectors))
    if options.floating_base:  # codegen.read.urdf: the root link on a free-flying joint
        read["floating_base"] = True
    robot = load_urdf(path, snap=options.snap, **read)
    snap = snap_report(robot.model, load_urdf(path, snap=False, **read).model) if options.snap else None
    values = tuple(robot.values) if options.friction else without_friction(robot.model, robot.values)
    warnings = [] if robot.model.end_effectors else [_no_end_effector_warning(robot.model)]
    extra = {}
    if options.emit_model:
        model_toml, params_toml = robot.to_toml()
        stem = fragment(name)
        extra = {f"{stem}.toml": model_toml, f"{stem}_params.toml": params_toml}
    config = CodegenConfig(out_dir=Path(out_dir), name=name, end_effectors=tuple(options.end_effectors),
                           snap=options.snap, python=options.python, emit_model=options.emit_model,
                           share_subtrees=tuple(options.share_subtrees), kernels=options.kernels,
                           native=options.native,
                           inputs=(("URDF file", hashlib.sha256(data).hexdigest()),))
    written = generate(robot.model, values, config, extra_files=extra)
    header = next(p.name for p in written if p.name.endswith("_kernels.h"))
    module = header[:-len(".h")]
    return written, summary_line(robot.model, values, module, options.friction, snap), warnings, module

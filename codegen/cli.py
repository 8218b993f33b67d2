"""Command line: python -m codegen (see --help).

Every failure is one line `error: ...` on stderr and a non-zero exit status
(2: bad input or usage, 1: anything else), never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# SymPy's expression cache (read when SymPy is first imported): the default
# 1000 entries thrash on large robots; 100,000 cut generation CPU by ~20 % at
# 24 DOF for ~40 MB (same output). A user's own setting wins.
os.environ.setdefault("SYMPY_CACHE_SIZE", "100000")

from .generate import CodegenConfig, generate_from_files  # noqa: E402
from .read.model import ModelError  # noqa: E402

USAGE = """python -m codegen MODEL.toml PARAMS.toml --out DIR [--name NAME] [--no-share-subtrees] [--python]
       python -m codegen ROBOT.urdf --out DIR [--name NAME] [--end-effector LINK]...
                         [--floating-base] [--no-snap] [--no-friction] [--emit-model] [--no-share-subtrees]
                         [--python] [--no-cache]"""
DESCRIPTION = """Generate C99 rigid-body dynamics kernels (inertia matrix A(q), Coriolis C(q, dq),
gravity Q(q), end-effector Jacobians and poses, J-dot q-dot, friction, inverse and
forward dynamics) for a tree robot, fixed or on a free-flying base, from a model file and a parameter
file (TOML) or from a URDF. Writes DIR/NAME_kernels.h and
DIR/NAME_kernels.c (and with --python an importable NAME_kernels module); all files
are replaced together or not at all."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not usage + message
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m codegen", usage=USAGE, description=DESCRIPTION)
    ap.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="MODEL.toml PARAMS.toml (model and parameter file), or ROBOT.urdf")
    ap.add_argument("--out", default="generated", metavar="DIR",
                    help="output directory, created if missing (default: generated)")
    ap.add_argument("--name", metavar="NAME",
                    help="robot name: C prefix NAME_, macros NAME_ (uppercased), module NAME_kernels; "
                         "default: the model's name (TOML) or the URDF's file name without extension "
                         "(ur5_robot.urdf -> ur5_robot). Any text; made a C identifier")
    ap.add_argument("--end-effector", action="append", default=[], metavar="LINK", dest="end_effectors",
                    help="URDF only: a link to expose as end effector (repeatable; its position in "
                         "this list is the `ee` argument of NAME_jacobian)")
    ap.add_argument("--floating-base", action="store_true",
                    help="URDF only: put a free-flyer (Pinocchio's JointModelFreeFlyer, named root_joint) "
                         "between the world and the root link: q = [x, y, z, qx, qy, qz, qw, joints...], "
                         "dq = [base linear, base angular velocity (base axes), joints...]. A URDF whose "
                         "root joint is floating gets it without this flag")
    ap.add_argument("--no-snap", action="store_false", dest="snap",
                    help="URDF only: keep rotation entries within 1e-9 of 0 or +-1 as written "
                         "(default: make them exact, so that they fold away)")
    ap.add_argument("--emit-model", action="store_true",
                    help="URDF only: also write the derived NAME.toml and NAME_params.toml, "
                         "which regenerate the same C with the MODEL.toml PARAMS.toml form")
    ap.add_argument("--share-subtrees", type=_share, default="C,all",
                    help="kernels that call one static routine per group of isomorphic subtrees "
                         "(two arms, legs), comma-separated: C, A, all (compute_all), or none; "
                         "less machine code, compute_A a little slower alone (default: C,all)")
    ap.add_argument("--no-share-subtrees", action="store_const", const=(), dest="share_subtrees",
                    help="the same as --share-subtrees none: every kernel one straight line")
    ap.add_argument("--python", action="store_true",
                    help="also build an importable Python module NAME_kernels in DIR")
    ap.add_argument("--no-friction", action="store_false", dest="friction",
                    help="URDF only: default friction parameters 0 (the URDF's <dynamics damping friction> "
                         "ignored), so inverse_dynamics equals Pinocchio's rnea")
    ap.add_argument("--no-cache", action="store_false", dest="cache",
                    help="URDF only: generate and build afresh, without the module cache "
                         "(XDG_CACHE_HOME/krang-kernels, see codegen.import_urdf)")
    return ap


def _urdf(args, config):
    """URDF input: codegen.urdf_build through the module cache (codegen.urdf_import)."""
    from .urdf_import import generate_urdf_cached
    from .urdf_options import UrdfOptions

    options = UrdfOptions(end_effectors=tuple(args.end_effectors), name=args.name, snap=args.snap,
                          friction=args.friction, share_subtrees=tuple(args.share_subtrees), python=args.python,
                          emit_model=args.emit_model, floating_base=args.floating_base)
    written, summary, warnings = generate_urdf_cached(args.inputs[0], options, config.out_dir, cache=args.cache)
    for text in warnings:
        print(f"warning: {text}", file=sys.stderr)
    print(summary)
    return written


SHARE_CHOICES = ("A", "C", "all")


def _share(text: str) -> tuple:
    """--share-subtrees: CodegenConfig.share_subtrees from "none" or a comma-separated subset."""
    items = [s.strip() for s in text.split(",")]
    if items == ["none"]:
        return ()
    if items and all(s in SHARE_CHOICES for s in items) and len(set(items)) == len(items):
        return tuple(items)
    raise argparse.ArgumentTypeError(
        f"{text!r}: expected none or a comma-separated subset of {', '.join(SHARE_CHOICES)}")


def run(args) -> list:
    config = CodegenConfig(out_dir=Path(args.out), name=args.name, end_effectors=tuple(args.end_effectors),
                           snap=args.snap, python=args.python, emit_model=args.emit_model,
                           share_subtrees=args.share_subtrees)
    if len(args.inputs) == 1 and args.inputs[0].lower().endswith((".urdf", ".xml")):
        return _urdf(args, config)
    if len(args.inputs) != 2:
        raise ModelError("expected MODEL.toml PARAMS.toml or one ROBOT.urdf, got "
                         f"{len(args.inputs)} input file(s)")
    urdf_only = [o for o, given in (("--end-effector", args.end_effectors), ("--no-snap", not args.snap),
                                    ("--emit-model", args.emit_model), ("--no-friction", not args.friction),
                                    ("--floating-base", args.floating_base)) if given]
    if urdf_only:
        raise ModelError(f"{', '.join(urdf_only)}: only for URDF input (edit the model file instead)")
    return generate_from_files(args.inputs[0], args.inputs[1], config)


def _one_line(exc) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    if not isinstance(exc, (ModelError, OSError)):
        text = f"internal error ({type(exc).__name__}): {text}"
    return " ".join(text.split())


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    t0 = time.perf_counter()
    try:
        files = run(args)
    except ModelError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - one line, never a traceback
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 1
    for f in files:
        print(f"wrote {f}")
    print(f"generation took {time.perf_counter() - t0:.1f} s")
    return 0

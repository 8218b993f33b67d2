"""Command line: python -m codegen (see --help).

Every failure is one line `error: ...` on stderr and a non-zero exit status
(2: bad input or usage, 1: anything else, 130 on SIGINT, 128 + n on SIGTERM and
SIGHUP, which are raised as exceptions so that staging and build directories are
removed), never a traceback; a standard output or error that cannot be written
(a closed pipe, a full disk) included.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import time
from pathlib import Path

from .emit.abi import CORE, OPTIONAL
from .pipeline import CodegenConfig, generate_from_files
from .read.model import ModelError
from .support import interrupts
from .support.interrupts import Terminated
from .support.options import SHARE_CHOICES, URDF_ONLY, GenerateOptions, UrdfOptions, check_robot_name

USAGE = """python -m codegen MODEL.toml PARAMS.toml --out DIR [--name NAME] [--no-share-subtrees] [--kernels K] [--python] [--native]
                         [--cmake] [--module-source DIR [--module MODULE]]
       python -m codegen ROBOT.urdf --out DIR [--name NAME] [--end-effector LINK]...
                         [--floating-base] [--mimic independent] [--no-snap] [--no-friction] [--emit-model]
                         [--no-share-subtrees] [--kernels K] [--python] [--native] [--cmake] [--casadi] [--no-cache]"""
DESCRIPTION = """Generate C99 rigid-body dynamics kernels (inertia matrix A(q), Coriolis C(q, dq),
gravity Q(q), end-effector Jacobians and poses, J-dot q-dot, friction, inverse and
forward dynamics) for a tree robot, fixed or on a free-flying base, from a model file and a parameter
file (TOML) or from a URDF. Writes DIR/NAME_kernels.h and
DIR/NAME_kernels.c (with --python also an importable NAME_kernels module, with --cmake
the C library's CMake project); all files are replaced together or not at all."""


class _Parser(argparse.ArgumentParser):
    write_failed = False  # --help or an error could not be written (argparse itself ignores that)

    def error(self, message):  # one line, not usage + message
        _say(sys.stderr, f"error: {message} (see --help)")
        raise SystemExit(2)

    def _print_message(self, message, file=None):
        if message and _say(file or sys.stderr, message.rstrip("\n")) is not None:
            self.write_failed = True


def parser() -> argparse.ArgumentParser:
    """The command line's argument parser (`python -m codegen --help` prints its options)."""
    ap = _Parser(prog="python -m codegen", usage=USAGE, description=DESCRIPTION)
    ap.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="MODEL.toml PARAMS.toml (model and parameter file), or ROBOT.urdf")
    ap.add_argument("--out", default="generated", metavar="DIR",
                    help="output directory, created if missing (default: generated)")
    add_option_flags(ap, UrdfOptions)
    ap.add_argument("--no-share-subtrees", action="store_const", const=(), dest="share_subtrees",
                    help="the same as --share-subtrees none: every kernel one straight line")
    ap.add_argument("--cmake", action="store_true",
                    help="also write DIR/CMakeLists.txt, NAME_kernelsConfig.cmake.in and NAME_kernels.pc.in: DIR "
                         "becomes a CMake project (static and shared library; installs find_package(NAME_kernels) "
                         "and a relocatable NAME_kernels.pc; codegen.export writes the same)")
    ap.add_argument("--casadi", action="store_true",
                    help="URDF only: also build DIR/libNAME_casadi.so, CasADi external functions (forward and "
                         "inverse dynamics, end-effector positions, their Jacobians from the derivative kernels; "
                         "docs/casadi.md)")
    ap.add_argument("--module-source", metavar="DIR",
                    help="also render the Python module's source (MODULE.pyx, MODULE.pyi) into DIR without "
                         "compiling it (make generate: the krang_kernels package)")
    ap.add_argument("--module", metavar="MODULE",
                    help="with --module-source: the module's name (default NAME_kernels)")
    ap.add_argument("--no-cache", action="store_false", dest="cache",
                    help="URDF only: generate and build afresh, without the module cache "
                         "(XDG_CACHE_HOME/krang-kernels, see codegen.import_urdf)")
    return ap


def add_option_flags(ap: argparse.ArgumentParser, cls=UrdfOptions, skip=()) -> None:
    """The flags of the option record `cls` (its fields' metadata), with the record's
    defaults; `skip`: fields left out. Also used by `python -m krang_kernels.identify --urdf`."""
    for f, meta in cls.flags():
        if f.name in skip:
            continue
        flag, kw = meta["flag"], {k: v for k, v in meta.items() if k not in ("flag", "parse")}
        if isinstance(f.default, bool):
            kw["action"] = "store_false" if flag.startswith("--no-") else "store_true"
        elif "parse" in meta:
            kw["type"] = PARSERS[meta["parse"]]
        if kw.get("action") == "append":
            kw["default"] = []
        ap.add_argument(flag, dest=f.name, **kw)
    ap.set_defaults(**{f.name: f.default for f, _ in cls.flags()
                       if f.name not in skip and (not isinstance(f.default, tuple) or f.name == "share_subtrees")})


def options_from_args(args, cls, skip=()) -> dict:
    """The option fields of `cls` from a command line parsed with add_option_flags."""
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if f.name not in skip}


def _options(args, cls):
    """The option record `cls` from the parsed command line."""
    return cls(**options_from_args(args, cls))


def _urdf(args, out_dir):
    """URDF input: codegen.pipeline.generate_urdf through the module cache (codegen.urdf)."""
    from .urdf import generate_urdf_cached

    options = _options(args, UrdfOptions)
    written, summary, warnings = generate_urdf_cached(args.inputs[0], options, out_dir,
                                                      cache=args.cache, cmake=args.cmake)
    for text in warnings:
        print(f"warning: {text}", file=sys.stderr)
    print(summary)
    if args.casadi:  # after the C it compiles (codegen.urdf.casadi_library)
        from .urdf import casadi_library

        stem = next(p.name[:-len(".h")] for p in written if p.name.endswith("_kernels.h"))
        written = list(written) + [casadi_library(args.inputs[0], options, out_dir, stem)]
    return written


def _share(text: str) -> tuple:
    """--share-subtrees: GenerateOptions.share_subtrees from "none" or a comma-separated subset."""
    items = [s.strip() for s in text.split(",")]
    if items == ["none"]:
        return ()
    if items and all(s in SHARE_CHOICES for s in items) and len(set(items)) == len(items):
        return tuple(items)
    raise argparse.ArgumentTypeError(
        f"{text!r}: expected none or a comma-separated subset of {', '.join(SHARE_CHOICES)}")


def _kernels(text: str):
    """--kernels: GenerateOptions.kernels (None: all) from "all" or core plus optional kernels."""
    items = [s.strip() for s in text.split(",")]
    if items == ["all"]:
        return None
    if CORE in items and all(s in (CORE, *OPTIONAL) for s in items) and len(set(items)) == len(items):
        return tuple(s for s in OPTIONAL if s in items)
    raise argparse.ArgumentTypeError(
        f"{text!r}: expected all, or {CORE} plus any of {', '.join(OPTIONAL)}, comma-separated")


PARSERS = {"share_subtrees": _share, "kernels": _kernels}  # GenerateOptions fields' `parse` names


def run(args) -> list:
    """Generate what the parsed command line `args` (parser().parse_args) asks for: a model and a
    parameter file, or a URDF; returns the written paths. Errors raise (main reports them)."""
    if args.name is not None:
        try:
            check_robot_name(args.name)
        except ValueError as exc:
            raise ModelError(f"--name: {exc}") from None
    if not args.out.strip() or (args.module_source is not None and not args.module_source.strip()):
        raise ModelError("--out, --module-source: an empty directory name (say . for the current directory)")
    if args.module is not None and not (args.module.isidentifier() and args.module.isascii()):
        raise ModelError(f"--module: {args.module!r} is not a Python module name")
    if len(args.inputs) == 1 and args.inputs[0].lower().endswith((".urdf", ".xml")):
        if args.module_source is not None or args.module is not None:
            raise ModelError("--module-source, --module: only for MODEL.toml PARAMS.toml input "
                             "(a URDF's module: --python)")
        return _urdf(args, Path(args.out))
    if args.casadi:
        raise ModelError("--casadi: only for URDF input")
    if len(args.inputs) != 2:
        raise ModelError("expected MODEL.toml PARAMS.toml or one ROBOT.urdf, got "
                         f"{len(args.inputs)} input file(s)")
    urdf_only = [meta["flag"] for f, meta in UrdfOptions.flags()
                 if f.name in URDF_ONLY and getattr(args, f.name) not in (f.default, [])]
    if urdf_only:
        raise ModelError(f"{', '.join(urdf_only)}: only for URDF input (edit the model file instead)")
    config = CodegenConfig(out_dir=Path(args.out), **_options(args, GenerateOptions).__dict__,
                           module_source=Path(args.module_source) if args.module_source else None,
                           module=args.module, cmake=args.cmake)
    return generate_from_files(args.inputs[0], args.inputs[1], config)


def _one_line(exc) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    if not isinstance(exc, (ModelError, OSError)):  # a BuildError too: generated code should compile
        text = f"internal error ({type(exc).__name__}): {text}"
    return " ".join(text.split())


def _say(stream, text: str | None = None):
    """Print one line (or only flush); None, or the OSError if the stream is gone
    (EPIPE: `| head -c0`; ENOSPC: `> /dev/full`). The stream is then pointed at
    /dev/null, so that the interpreter's flush at exit cannot fail a second time
    with a traceback."""
    try:
        if text is not None:
            print(text, file=stream)
        stream.flush()
        return None
    except (OSError, ValueError) as exc:  # ValueError: a closed stream
        try:
            fd = stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        return exc


def _parse(argv):
    """(args, None) or (None, exit status): after --help, 0 only if the help was written."""
    ap = parser()
    try:
        return ap.parse_args(argv), None
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
        return None, (code or 1) if ap.write_failed else code


def _run(argv) -> int:
    args, code = _parse(argv)
    if args is None:
        return code
    t0 = time.perf_counter()
    try:
        files = run(args)
    except ModelError as exc:
        _say(sys.stderr, f"error: {_one_line(exc)}")
        return 2
    except KeyboardInterrupt:
        _say(sys.stderr, "error: interrupted")
        return 130
    except Terminated as exc:
        _say(sys.stderr, f"error: terminated ({signal.Signals(exc.signum).name})")
        return 128 + exc.signum
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - one line, never a traceback
        _say(sys.stderr, f"error: {_one_line(exc)}")
        return 1
    lines = [f"wrote {f}" for f in files] + [f"generation took {time.perf_counter() - t0:.1f} s"]
    for line in lines:
        exc = _say(sys.stdout, line)
        if exc is not None:
            reason = getattr(exc, "strerror", None) or str(exc)
            _say(sys.stderr, f"error: cannot write to standard output ({reason}); the files were written")
            return 1
    return 0


def main(argv=None) -> int:
    """The command line (`python -m codegen`, `krang-codegen`) on `argv` (default: sys.argv[1:]):
    returns the exit status, 0 on success (see the module docstring for the others)."""
    with interrupts.handled():
        try:
            return _run(argv)
        except Terminated as exc:  # between the stages' own handlers
            _say(sys.stderr, f"error: terminated ({signal.Signals(exc.signum).name})")
            return 128 + exc.signum
        except KeyboardInterrupt:
            _say(sys.stderr, "error: interrupted")
            return 130

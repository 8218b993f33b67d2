"""Identify a robot's base parameters from measured samples.

    python -m krang_kernels.identify samples.npz [--module NAME | PATH | --urdf ROBOT.urdf [options]]
        [--params p.npy] [--gravity] [--consistent] [--out estimate.npz]

samples.npz holds q (N, N_Q), dq (N, N_DOF), ddq (N, N_DOF) and tau
(N, N_DOF) (names v and a are accepted for dq and ddq); with --gravity only q
and tau (static poses). --module: any generated module, by import name (default
krang_kernels) or by the path of its compiled file (`python -m codegen ...
--python` writes it); --urdf: the module of a URDF, built or taken from the
module cache as codegen.import_urdf does, with python -m codegen's URDF options
(--end-effector, --floating-base, --no-friction, ...; needs the generator). --params: the parameter vector (.npy)
whose geometry the regressor uses (default the module's defaults).

Prints the base parameters with their standard deviations and relative
standard deviations, the condition number of the stacked base regressor and
the residual RMS; --out writes them (beta, std, names, condition,
residual_rms and, with --consistent, pi: physically consistent standard
parameters reproducing beta, and params: the parameter vector with them).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from . import identification as ident


def _arrays(samples, gravity):
    get = lambda *names: next((np.asarray(samples[n], float) for n in names if n in samples), None)  # noqa: E731
    q, tau = get("q"), get("tau")
    dq, ddq = get("dq", "v"), get("ddq", "a")
    if q is None or tau is None or (not gravity and (dq is None or ddq is None)):
        raise SystemExit("samples need q, tau" + ("" if gravity else ", dq (or v), ddq (or a)"))
    return q, dq, ddq, tau


def run(module, samples, params=None, gravity=False, consistent=False):
    """(BaseParameters, Fit, pi or None) for the samples (a mapping of arrays)."""
    params = module.default_params() if params is None else np.asarray(params, float)
    q, dq, ddq, tau = _arrays(samples, gravity)
    if gravity:
        base, fit = ident.identify_gravity(module, q, tau, params)
    else:
        base, fit = ident.identify(module, q, dq, ddq, tau, params)
    pi = None
    if consistent:
        prior = ident.regressor_pi(module, params)
        pi, _ = ident.physically_consistent(base, fit, module.REGRESSOR_PARAMS, prior)
    return base, fit, pi


def load_module(spec: str):
    """A generated module by import name, or by the path of its compiled file
    (NAME_kernels.cpython-*.so, as python -m codegen --python and the module cache write it)."""
    path = Path(spec)
    if path.suffix in (".so", ".pyd") or os.sep in spec:
        if not path.is_file():
            raise ValueError(f"--module {spec}: no such file")
        name = path.name.split(".", 1)[0]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or not name.isidentifier():
            raise ValueError(f"--module {spec}: not a compiled Python module")
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        raise ValueError(f"--module {spec}: {exc}; a module built by codegen.import_urdf is found with "
                         f"--urdf ROBOT.urdf (the same options), or give its file's path") from None


# import_urdf's own choices: a module it builds is compiled for this CPU, never emits model files
URDF_SKIP = ("python", "native", "emit_model")


def _urdf_module(path, args):
    from codegen.cli import options_from_args  # the generator: only for --urdf
    from codegen.support.options import UrdfOptions
    from codegen.urdf import import_urdf

    return import_urdf(path, **options_from_args(args, UrdfOptions, skip=URDF_SKIP))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    urdf = any(a == "--urdf" or a.startswith("--urdf=") for a in argv)
    ap = argparse.ArgumentParser(prog="python -m krang_kernels.identify", description=__doc__.split("\n\n")[0])
    ap.add_argument("samples", help=".npz with q, dq, ddq, tau")
    ap.add_argument("--module", default="krang_kernels",
                    help="the generated module: import name (default krang_kernels) or its compiled file's path")
    ap.add_argument("--urdf", metavar="ROBOT.urdf",
                    help="the module of this URDF (built, or from the module cache), with python -m codegen's "
                         "URDF options (--end-effector, --floating-base, --no-friction, ...)")
    if urdf:
        from codegen.cli import add_option_flags
        from codegen.support.options import UrdfOptions

        add_option_flags(ap, UrdfOptions, skip=URDF_SKIP)
    ap.add_argument("--params", help=".npy parameter vector whose geometry is used (default: the defaults)")
    ap.add_argument("--gravity", action="store_true", help="static poses: tau = Y_g beta_g")
    ap.add_argument("--consistent", action="store_true",
                    help="also physically consistent standard parameters (LMI, needs cvxpy: the [identify] extra)")
    ap.add_argument("--out", help=".npz to write the estimate to")
    args = ap.parse_args(argv)
    try:
        module = _urdf_module(args.urdf, args) if args.urdf else load_module(args.module)
        params = np.load(args.params) if args.params else None
        with np.load(args.samples) as f:
            samples = dict(f)
        base, fit, pi = run(module, samples, params, args.gravity, args.consistent)
    except (ValueError, OSError, ImportError) as exc:  # one line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{base.nbase} base parameters, condition number {fit.condition:.3g}, residual RMS {fit.residual_rms:.3g}")
    print("  estimate       std dev    (relative)  base parameter")
    for n, b, s in zip(base.names, fit.beta, fit.std):
        rel = 100 * s / abs(b) if b != 0 else np.inf
        print(f"  {b: .6e}  {s:.3e}  ({rel:8.3g} %)  {n}")
    if args.out:
        out = dict(beta=fit.beta, std=fit.std, names=np.array(base.names), condition=fit.condition,
                   residual_rms=fit.residual_rms, combination=base.combination)
        if pi is not None:
            p = (module.default_params() if params is None else np.array(params, float)).copy()
            p[list(module.REGRESSOR_PARAM_INDEX)] = pi
            out.update(pi=pi, params=p)
        np.savez(args.out, **out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

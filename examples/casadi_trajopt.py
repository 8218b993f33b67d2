"""Panda point-to-point with torque limits in CasADi Opti + IPOPT: this project's CasADi externals against
a CasADi-symbolic model of the same URDF.

The dynamics once from this project's CasADi external functions (libNAME_casadi.so, docs/casadi.md) and
once from ADAM's expressions (adam-robotics on PyPI): same optimum, IPOPT's time per iteration and the
set-up time of both; then a micro-benchmark of one forward-dynamics evaluation and its Jacobian, the external
against CasADi's generated C of the symbolic model (same compiler, same flags).

    python -m examples.casadi_trajopt            (from the repository root; pip install casadi adam-robotics liecasadi)
    python -m examples.casadi_trajopt --short    (10 intervals, fewer benchmark calls)

The robot: example-robot-data's Panda arm with its fingers fixed (each finger's joint made fixed, the
<mimic> removed): ADAM 0.5 fails on the URDF as shipped (its mimic finger joint: "Matrix product with
incompatible dimensions" in crba), so both sides read this derived URDF, 7 joints, no friction (ADAM
models none). The problem: N intervals over T = 1 s, state (q, v), control tau, semi-implicit Euler
(v+ = v + dt FD(q, v, tau), q+ = q + dt v+), from rest at Q_A to rest with the hand at the position it
has at Q_B; minimize dt sum |tau|^2; |tau| <= effort, joint position and velocity limits. IPOPT with
the limited-memory Hessian for both (the externals give first derivatives only); the symbolic model
also with its exact Hessian, for reference. ADAM's side: forward dynamics solve(M, tau - h) of its mass
matrix and bias force (the joint block: the base is fixed at the identity), an SX expression.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from reference.casadi_trajopt import (T, _per_call, arm_urdf, cflags, external_model, from_c, generated_c, solve,
                                      symbolic_model)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--short", action="store_true", help="10 intervals, fewer benchmark calls")
    args = ap.parse_args(argv)
    import casadi as ca

    n = 10 if args.short else 40
    calls = 2000 if args.short else 20000
    work = Path(tempfile.mkdtemp(prefix="casadi_trajopt_"))
    try:
        urdf = arm_urdf(work)
        fd_x, fk_x, module, build_x, setup_x = external_model(urdf, work / "panda_arm_c")
        g = module.default_params()[list(module.PARAM_NAMES).index("g")]
        fd_s, fk_s, setup_s = symbolic_model(urdf, g)
        rng = np.random.default_rng(0)
        q, v, u = rng.uniform(-1, 1, 7), rng.standard_normal(7), rng.standard_normal(7) * 5
        agree = float(np.abs(np.asarray(fd_x(q, v, u)) - np.asarray(fd_s(q, v, u))).max())
        print(f"Panda arm (7 joints, fingers fixed), {n} intervals over {T} s; {os.cpu_count()} CPUs; casadi "
              f"{ca.__version__}")
        print(f"forward dynamics, external vs ADAM at a random state: max difference {agree:.1e}")
        print(f"set-up: external {build_x:.1f} s to generate and build (cached module; the library is rebuilt), "
              f"{setup_x * 1e3:.1f} ms to load; ADAM {setup_s * 1e3:.0f} ms to build the expressions")
        runs = [("external, L-BFGS", solve(fd_x, fk_x, module, n)),
                ("ADAM SX, L-BFGS", solve(fd_s, fk_s, module, n)),
                ("ADAM SX, exact Hessian", solve(fd_s, fk_s, module, n, exact_hessian=True))]
        print("\n| model | status | iterations | objective | IPOPT s | ms / iteration | Opti set-up + solve s |")
        print("|---|---|---|---|---|---|---|")
        for name, r in runs:
            print(f"| {name} | {r['status']} | {r['iterations']} | {r['objective']:.6f} | {r['solver_s']:.2f} | "
                  f"{1e3 * r['solver_s'] / max(r['iterations'], 1):.2f} | {r['total_s']:.2f} |")
        dq = np.abs(runs[0][1]["q"] - runs[2][1]["q"]).max()
        dobj = abs(runs[0][1]["objective"] - runs[2][1]["objective"]) / runs[2][1]["objective"]
        print(f"\noptima: max |q_external - q_ADAM exact| = {dq:.1e} rad, objectives differ by {dobj:.1e} (relative)")
        # micro-benchmark: one evaluation, amortized over a serial map inside CasADi
        fd_c, jac_c, compile_s = generated_c(fd_s, work)
        lib = str(work / "panda_arm_c" / "libpanda_arm_casadi.so")
        jac_x = ca.external("jac_panda_arm_forward_dynamics", lib)
        ddq = np.asarray(fd_x(q, v, u)).ravel()
        rows = [("forward dynamics", _per_call(fd_x, (q, v, u), calls), _per_call(fd_c, (q, v, u), calls)),
                ("its Jacobian (q, v, tau)", _per_call(jac_x, (q, v, u, ddq), calls),
                 _per_call(jac_c, (q, v, u, ddq), calls))]
        print(f"\nper evaluation, {calls} in a serial map (CasADi's generated C of ADAM's expressions: "
              f"compiled in {compile_s:.1f} s with {' '.join(cflags())}, the external's flags):")
        print("\n| function | external µs | generated C µs | ratio |")
        print("|---|---|---|---|")
        for name, x, c in rows:
            print(f"| {name} | {x * 1e6:.2f} | {c * 1e6:.2f} | {x / c:.2f} |")
        direct = from_c(work, Path(lib), work / "fd_sym_gen.so", calls * 10)
        print("\nthe same functions called from a C loop through their CasADi API (no CasADi call machinery):")
        print("\n| function | external µs | generated C µs | ratio |")
        print("|---|---|---|---|")
        for (name, _, _), (x, c) in zip(rows, direct):
            print(f"| {name} | {x:.3f} | {c:.3f} | {x / c:.2f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

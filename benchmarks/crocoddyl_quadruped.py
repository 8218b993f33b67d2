"""Crocoddyl's FDDP on the contact kernels against its native action models -> benchmarks/results/crocoddyl_quadruped.md.

    .venv-crocoddyl/bin/python -m benchmarks.crocoddyl_quadruped              (make bench-crocoddyl)
    .venv-crocoddyl/bin/python -m benchmarks.crocoddyl_quadruped --rounds 3   (fewer rounds; default 5)

The problem and the two action models of examples/crocoddyl_quadruped.py (whose functions, in
reference/crocoddyl_quadruped.py, this module calls): Solo12 trotting (Crocoddyl's own gait problem),
solved by crocoddyl.SolverFDDP at nthreads = 1 as built (Pinocchio's contact and impulse dynamics) and
with every contact node and touchdown on our kernels (Python action models). Each round solves both from
the same initial guess (native first) and times one contact node's and one touchdown's calc and calcDiff
of each, and our two kernels alone (process CPU time per call). The table gives each figure's median over
the rounds, its spread (lowest..highest) and the ratio ours / native. No target: issue #35 asks for the
time per iteration of both, side by side.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "crocoddyl_quadruped.md"


@dataclass(frozen=True)
class Round:
    """One round's figures: FDDP per iteration (ms; process CPU and wall), then per call (µs, process CPU)."""
    native_cpu: float
    ours_cpu: float
    native_wall: float
    ours_wall: float
    node_calc: tuple      # (native, ours, our constrained_dynamics alone)
    node_diff: tuple      # (native, ours, our constrained_dynamics_derivatives alone)
    touchdown_calc: tuple  # (native, ours)
    touchdown_diff: tuple  # (native, ours)


ROWS = [  # (label, unit, native figure, ours figure, our kernel alone or None)
    ("FDDP, time per iteration (process CPU)", "ms", lambda r: r.native_cpu, lambda r: r.ours_cpu, None),
    ("FDDP, time per iteration (wall)", "ms", lambda r: r.native_wall, lambda r: r.ours_wall, None),
    ("contact node (four feet): calc", "µs", lambda r: r.node_calc[0], lambda r: r.node_calc[1],
     ("constrained_dynamics", lambda r: r.node_calc[2])),
    ("contact node (four feet): calcDiff", "µs", lambda r: r.node_diff[0], lambda r: r.node_diff[1],
     ("constrained_dynamics_derivatives", lambda r: r.node_diff[2])),
    ("touchdown (two feet): calc", "µs", lambda r: r.touchdown_calc[0], lambda r: r.touchdown_calc[1], None),
    ("touchdown (two feet): calcDiff", "µs", lambda r: r.touchdown_diff[0], lambda r: r.touchdown_diff[1], None),
]


def median_spread(values) -> tuple[float, str]:
    """(median, 'lowest..highest') of one figure over the rounds."""
    values = list(values)
    if not values:
        raise ValueError("no rounds")
    return statistics.median(values), f"{min(values):.3g}..{max(values):.3g}"


def table(rounds: list[Round]) -> list[str]:
    """The results table: per row the medians over the rounds, their spread, ours / native of the medians."""
    out = ["| what | unit | native median | spread | ours median | spread | ours / native | our kernel alone (from Python), median |",
           "|---|---|---:|---|---:|---|---:|---|"]
    for label, unit, nat, our, kernel in ROWS:
        (n, ns), (o, os_) = median_spread(map(nat, rounds)), median_spread(map(our, rounds))
        alone = f"`{kernel[0]}` {median_spread(map(kernel[1], rounds))[0]:.3g}" if kernel else ""
        out.append(f"| {label} | {unit} | {n:.3g} | {ns} | {o:.3g} | {os_} | {o / n:.2f} | {alone} |")
    return out


def report(rounds: list[Round], provenance: str, header: list[str]) -> str:
    return "\n".join(["# Crocoddyl's FDDP on our contact kernels vs its native action models (Solo12 trotting)", "",
                      provenance, "", *header, "", *table(rounds), ""])


def one_round(ex, native, ours, x0, us0, calls) -> tuple[Round, tuple]:
    """Both solves (native first) and the node timings (reference/crocoddyl_quadruped.py); the solvers too."""
    sn, cn, wn, pn = ex.solve(native, x0, us0, 100)
    so, co, wo, po = ex.solve(ours, x0, us0, 100)
    nc, nd, oc, od, kc, kd, ic, idf, jc, jdf = ex.node_times(native, ours, x0, us0[0], calls)
    r = Round(1e3 * pn, 1e3 * po, 1e3 * wn, 1e3 * wo, (nc, oc, kc), (nd, od, kd), (ic, jc), (idf, jdf))
    return r, (sn, cn, so, co)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds (median and spread); default 5")
    ap.add_argument("--calls", type=int, default=2000, help="calls per node timing; default 2000")
    ap.add_argument("--short", action="store_true", help="the example's 10-knot steps instead of 25")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be at least 1")
    from reference import crocoddyl_quadruped as ex  # exits with the reason outside .venv-crocoddyl

    from codegen.build.module import compile_flags

    from reference.solo12_contacts import load_robot

    from .env import cpu_flags, cpu_model, first_line, loadavg, provenance

    load_before = loadavg()
    gait = ex.SHORT if args.short else ex.TROT
    m = load_robot()
    model, native, x0 = ex.build_problem(m, gait)
    ours, _keep = ex.with_kernels(native, m, model)
    us0 = native.quasiStatic([x0] * native.T)
    native.nthreads = 1  # as the example: a problem with Python models runs on one thread
    with contextlib.redirect_stdout(io.StringIO()):  # the per-node lines; the worst is in the report
        worst = ex.compare_nodes(native, ours, model, x0, us0)
    rounds = []
    for k in range(args.rounds):
        r, (sn, cn, so, co) = one_round(ex, native, ours, x0, us0, args.calls)
        rounds.append(r)
        print(f"round {k + 1}/{args.rounds}: per iteration native {r.native_cpu:.2f} ms, ours {r.ours_cpu:.2f} ms",
              file=sys.stderr)
    rel = abs(so.cost - sn.cost) / sn.cost
    cc = first_line([os.environ.get("CC", "cc"), "--version"])
    prov = provenance(datetime.datetime.now().isoformat(timespec="seconds"), f"{cpu_model()} ({cpu_flags()})",
                      os.cpu_count(), cc, " ".join(compile_flags(True)))
    steps = f"{gait['stepKnots']}-knot steps" + (" (--short)" if args.short else "")
    header = [
        f"Python {platform.python_version()}, crocoddyl {ex.crocoddyl.__version__} (PyPI), pinocchio "
        f"{ex.pinocchio.__version__}; our Solo12 module built by `codegen.import_urdf` with the flags above "
        f"(Crocoddyl's and Pinocchio's own builds are PyPI's). Crocoddyl's trot of its quadrupedal_gaits example, "
        f"{steps}: {native.T} nodes; SolverFDDP at nthreads = 1 from the quasi-static guess, 100 iterations at most. "
        f"{args.rounds} rounds; per call: {args.calls} calls after one warm-up. Load average {load_before} before, "
        f"{loadavg()} after (the cores are shared: the spread shows how much).",
        "",
        f"Both solves: iterations native {sn.iter}, ours {so.iter} (converged: native {cn}, ours {co}); final cost "
        f"native {sn.cost:.9e}, ours {so.cost:.9e} (relative difference {rel:.1e}). The first node of each contact "
        f"set and the first touchdown of each, ours against native (ddq, lambda, their derivatives, x+, the costs' "
        f"derivatives): largest relative difference {worst:.1e}.",
        "",
        "Our nodes are Python subclasses of Crocoddyl's abstract models: the kernels' time is the column on the "
        "right; the rest of ours is the Python layer (Crocoddyl's C++ calling back through Boost.Python, the "
        "copies into Crocoddyl's data) and the native costs' Pinocchio kinematics.",
    ]
    text = report(rounds, prov, header)
    OUT.write_text(text, encoding="utf-8")
    print(text)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Largest errors of krang_kernels against Pinocchio -> benchmarks/results/errors_vs_pinocchio.json.

Uses the same helpers, parameter sets and tolerance as
tests/test_against_pinocchio.py: the default set, random physically valid
sets and the default geometry with random inertias; random states with q
uniform in [-pi, pi] and dq in [-3, 3]; error per matrix
max|ours - ref| / (1 + max|ref|).

    python -m benchmarks.errors_vs_pinocchio [--states 1000] [--random-sets 5] [--out PATH]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from reference.pin_reference import compare, krang_eval, krang_param_sets  # noqa: E402
from reference.reference_fk import KRANG_MODEL, load_model  # noqa: E402

TOL = 1e-10


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1000, help="random states per parameter set")
    ap.add_argument("--random-sets", type=int, default=5, help="random parameter sets")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "errors_vs_pinocchio.json")
    args = ap.parse_args(argv)

    import krang_kernels as kk

    model = load_model(KRANG_MODEL)
    sets = krang_param_sets(model, kk, n_random=args.random_sets, seed=args.seed)
    res = compare(krang_eval(kk), model, sets, n_states=args.states, seed=args.seed + 1,
                  tol=TOL, on_fail="collect")
    report = {
        "model": str(KRANG_MODEL.relative_to(ROOT)),
        "model_sha256": model.sha256,
        "reference": f"pinocchio {pin.__version__}",
        "krang_kernels": getattr(kk, "__version__", None),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "measure": "max over states of max|ours - ref| / (1 + max|ref|), per matrix",
        "tolerance": TOL,
        "states_per_set": args.states,
        "q_range": [-np.pi, np.pi],
        "dq_range": [-3.0, 3.0],
        "seed": args.seed,
        "parameter_sets": [label for label, _ in sets],
        "max_error": res["overall"],
        "max_error_per_set": res["per_set"],
        "n_failures": len(res["failures"]),
        "failures": res["failures"][:50],
        "passed": not res["failures"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    width = max(len(k) for k in res["overall"])
    for k, v in res["overall"].items():
        print(f"{k.ljust(width)}  {v:.2e}")
    print(f"{'PASS' if report['passed'] else 'FAIL'} ({len(res['failures'])} above {TOL:g}); wrote {args.out}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

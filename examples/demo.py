"""The main job in one screen: Krang's kernels at the default parameters,
their cost, and a check against Pinocchio (an independent implementation).

    python -m examples.demo      (from the repository root; `make demo`)

The check reuses the shared Pinocchio reference (reference.pin_reference),
importable when run from the repository root as above.
"""
import sys
import timeit
from pathlib import Path

import numpy as np

import krang_kernels as kk

ROOT = Path(__file__).resolve().parent.parent

rng = np.random.default_rng(0)
q, dq = rng.uniform(-np.pi, np.pi, kk.N_DOF), rng.uniform(-2, 2, kk.N_DOF)
A = kk.compute_A(q)
print(f"Golem Krang, {kk.N_DOF} DOF, {kk.N_PARAMS} parameters (defaults from the lab URDF)")
print(f"cond(A) at q = 0: {np.linalg.cond(kk.compute_A(np.zeros(kk.N_DOF))):.4g};"
      f" at a random q: {np.linalg.cond(A):.4g}")

out = {"A": np.empty((17, 17)), "C": np.empty((17, 17)), "Q": np.empty(17), "J": np.empty((6, 17))}
calls = {
    "compute_A": lambda: kk.compute_A(q, out=out["A"]),
    "compute_C": lambda: kk.compute_C(q, dq, out=out["C"]),
    "compute_Q": lambda: kk.compute_Q(q, out=out["Q"]),
    "jacobian (one arm)": lambda: kk.jacobian(q, "left", out=out["J"]),
    "compute_all": lambda: kk.compute_all(q, dq),
}
print("\nkernel               median us/call (Python, out= given)")
for name, f in calls.items():
    t = np.median(timeit.repeat(f, number=2000, repeat=7)) / 2000 * 1e6
    print(f"  {name:20s} {t:8.2f}")

try:
    from codegen.read.model import load_model
    from reference.pin_reference import build_pin_model, pin_reference
except ImportError as exc:  # pin is a test dependency
    print(f"\n(no check against Pinocchio: {exc})")
    sys.exit(0)

model = load_model(ROOT / "models" / "krang.toml")
p = kk.default_params()
pm, _ = build_pin_model(model, p)
ref = pin_reference(pm, pm.createData(), q, dq)
ours = {"A": A, "C": kk.compute_C(q, dq), "Q": kk.compute_Q(q),
        "J_left_world": kk.jacobian(q, "left"), "J_right_local": kk.jacobian(q, "right", "local")}
print("\ncheck against Pinocchio (max abs error / max abs value):")
for k, v in ours.items():
    print(f"  {k:14s} {np.abs(v - ref[k]).max():.2e} / {np.abs(ref[k]).max():.3g}")

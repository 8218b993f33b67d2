"""What the benchmark needs to know about one robot, and the names derived from it.

The harnesses are generic: bench_c.c includes a small header written here
(`bench_robot.h`: the kernel header, the C prefix, the end effectors and the
per-end-effector calls), and bench_pin.cpp reads its end effectors from the
model file (pin_model.harness_model_text). Nothing in harness code names a
robot or its arms.

Row keys follow one rule, used by the harnesses and the report alike:
"J_<ee>" per end effector, GROUP for all of them in sequence ("J_both" for
two, as the Krang tables always said; "J_all" otherwise), and the tick's
group "J_a+J_b".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple


class EE(NamedTuple):
    name: str
    frame: str            # key of the model frame the end effector is attached to
    origin: tuple = (0, 0, 0)  # its origin in that frame (SymPy expressions or numbers)


def end_effectors(model) -> list[EE]:
    """The model's end effectors as EE records: the one place that knows their layout,
    either (name, frame key) pairs or EndEffector(name, frame, rotation, origin) records."""
    return [EE(e.name, e.frame, tuple(e.origin)) if hasattr(e, "frame") else EE(*e) for e in model.end_effectors]


def j_key(name: str) -> str:
    return f"J_{name}"


def group_key(ee_names) -> str:
    return "J_both" if len(ee_names) == 2 else "J_all"


def group_label(ee_names) -> str:
    """Row label of every end effector's Jacobian in sequence, e.g. 'J_left + J_right'."""
    return " + ".join(j_key(n) for n in ee_names)


def tick_group(ee_names) -> str:
    """The control tick's key for its Jacobian calls together, e.g. 'J_left+J_right'."""
    return "+".join(j_key(n) for n in ee_names)


def c_ident(name: str) -> str:
    return re.sub(r"\W", "_", name, flags=re.A).lower()


@dataclass(frozen=True)
class KernelSet:
    """One generated kernel directory as the C harness calls it."""
    gen_dir: Path
    header: Path
    prefix: str                      # C prefix: prefix_compute_A, PREFIX_NDOF
    ee_names: tuple[str, ...]        # in the order of the `ee` argument of prefix_jacobian
    direct: tuple[str, ...] | None   # per-end-effector world Jacobians without dispatch, if generated
    has_all: bool                    # prefix_compute_all(q, dq, p, A, C, Q, J_0, ..., J_n-1)
    has_friction: bool
    has_controller: bool = False     # inverse_dynamics, bias, forward_dynamics, fk, jdot_qdot
    has_regressor: bool = False      # regressor (NDOF x NPI) and base_regressor (NDOF x NBASE)
    has_derivatives: bool = False    # inverse_dynamics_derivatives, forward_dynamics_derivatives (--kernels)

    def fn(self, what: str) -> str:
        return f"{self.prefix}_{what}"


def kernel_set(gen_dir: Path, prefix: str, ee_names) -> KernelSet | None:
    """Read PREFIX_kernels.h (or the only *.h) in gen_dir; None if there is no generated C."""
    gen_dir = Path(gen_dir)
    header = gen_dir / f"{prefix}_kernels.h"
    if not header.exists():
        heads = sorted(gen_dir.glob("*.h"))
        if len(heads) != 1:
            return None
        header = heads[0]
    if not any(gen_dir.glob("*.c")):
        return None
    text = header.read_text()
    if not re.search(rf"\b{prefix}_jacobian\s*\(", text):
        raise SystemExit(f"{header}: no {prefix}_jacobian(); wrong --prefix?")
    ee_names = tuple(ee_names)
    direct = tuple(f"{prefix}_jacobian_{c_ident(n)}_world" for n in ee_names)
    has_direct = all(re.search(rf"\b{d}\s*\(", text) for d in direct)
    m = re.search(rf"\b{prefix}_compute_all\s*\(([^)]*)\)", text)
    has_all = bool(m) and len(m.group(1).split(",")) == 6 + len(ee_names)
    return KernelSet(gen_dir, header, prefix, ee_names, direct if has_direct else None, has_all,
                     bool(re.search(rf"\b{prefix}_friction\s*\(", text)),
                     all(re.search(rf"\b{prefix}_{f}\s*\(", text) for f in CONTROLLER_FUNCTIONS),
                     all(re.search(rf"\b{prefix}_{f}\s*\(", text) for f in REGRESSOR_FUNCTIONS),
                     all(re.search(rf"\b{prefix}_{f}\s*\(", text) for f in DERIVATIVE_FUNCTIONS))


def tick_calls(ks: KernelSet) -> list[str]:
    """Our functions called in one control tick, in order."""
    jac = list(ks.direct) if ks.direct else [f"{ks.fn('jacobian')}(ee {i}, WORLD)" for i in range(len(ks.ee_names))]
    return [ks.fn("compute_A"), ks.fn("compute_C"), ks.fn("compute_Q"), *jac]


CONTROLLER_FUNCTIONS = ("inverse_dynamics", "bias", "forward_dynamics", "fk", "jdot_qdot")
# identification: Y(q, dq, ddq) with inverse_dynamics = Y . pi, and its independent columns
REGRESSOR_FUNCTIONS = ("regressor", "base_regressor")
# MPC / trajectory optimization: d tau/d(q, v) and d ddq/d(q, v, tau) (optional: --kernels core leaves them out)
DERIVATIVE_FUNCTIONS = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")


def robot_header_text(ks: KernelSet) -> str:
    """bench_robot.h for bench_c.c (see harness/bench_c.c for the macros it expects)."""
    P, n = ks.prefix.upper(), len(ks.ee_names)
    if n < 1 or n > 29:
        raise SystemExit(f"{n} end effectors: the harness supports 1 to 29")
    world = [f"{d}(q, p, J[{i}])" for i, d in enumerate(ks.direct)] if ks.direct else \
            [f"{ks.fn('jacobian')}(q, p, {i}, BR_WORLD, J[{i}])" for i in range(n)]
    tick = world[0] + "".join(f"; BENCH_MARK({3 + i}); {w}" for i, w in enumerate(world[1:], start=1))
    quoted = ", ".join('"' + n_.replace("\\", "\\\\").replace('"', '\\"') + '"' for n_ in ks.ee_names)
    lines = [
        "/* Written by benchmarks/robot.py for harness/bench_c.c: one robot's names. */",
        "#ifndef BENCH_ROBOT_H", "#define BENCH_ROBOT_H",
        f'#include "{ks.header.name}"',
        f"#define BR_NDOF {P}_NDOF", f"#define BR_NQ {P}_NQ", f"#define BR_NP {P}_NP", f"#define BR_NEE {n}",
        "#define BR_WORLD 0", "#define BR_LOCAL 1",
        f"#define BR_EE_NAMES {{{quoted}}}",
        f'#define BR_GROUP "{group_key(ks.ee_names)}"',
        f'#define BR_TICK_GROUP "{tick_group(ks.ee_names)}"',
    ]
    lines += [f"#define BR_{w} {ks.fn(w)}" for w in ("compute_A", "compute_C", "compute_Q", "jacobian")]
    lines.append(f"#define BR_HAVE_FRICTION {int(ks.has_friction)}")
    if ks.has_friction:
        lines.append(f"#define BR_friction {ks.fn('friction')}")
    lines.append(f"#define BR_HAVE_DIRECT {int(ks.direct is not None)}")
    if ks.direct:
        lines.append(f"#define BR_J_DIRECT_FIRST(q, p, J) {world[0]}")
    lines.append(f"#define BR_J_SEQ(q, p, J) {'; '.join(world)}")
    lines.append(f"#define BR_TICK_J(q, p, J) {tick}")
    lines.append(f"#define BR_HAVE_CONTROLLER {int(ks.has_controller)}")
    if ks.has_controller:
        lines += [f"#define BR_{f} {ks.fn(f)}" for f in CONTROLLER_FUNCTIONS]
    lines.append(f"#define BR_HAVE_REGRESSOR {int(ks.has_regressor)}")
    if ks.has_regressor:
        lines += [f"#define BR_NPI {P}_NPI", f"#define BR_NBASE {P}_NBASE"]
        lines += [f"#define BR_{f} {ks.fn(f)}" for f in REGRESSOR_FUNCTIONS]
    lines.append(f"#define BR_HAVE_DERIVATIVES {int(ks.has_derivatives)}")
    if ks.has_derivatives:
        lines += [f"#define BR_{f} {ks.fn(f)}" for f in DERIVATIVE_FUNCTIONS]
    lines.append(f"#define BR_HAVE_ALL {int(ks.has_all)}")
    if ks.has_all:
        js = ", ".join(f"J[{i}]" for i in range(n))
        lines.append(f"#define BR_COMPUTE_ALL(q, dq, p, A, C, Q, J) {ks.fn('compute_all')}(q, dq, p, A, C, Q, {js})")
    lines.append("#endif")
    return "\n".join(lines) + "\n"

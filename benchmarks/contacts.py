"""Contact dynamics against Pinocchio C++ (python -m benchmarks.contacts, part of `make bench-robots`).

For every robot of ROBOTS (Solo12 on its four feet, Talos on its two soles), on a free-flying base:
1. generate with the CLI (`python -m codegen ROBOT.urdf --out benchmarks/build/contacts/NAME --name
   NAME --floating-base --contact LINK[:6d]... --end-effector LINK... --no-friction`, Talos with
   `--mimic independent`; the CLI's cache makes a rerun quick);
2. Pinocchio's model of the same URDF with a JointModelFreeFlyer (benchmarks.urdf_case), each
   contact a frame at the URDF link (a `contact` line of the harness's model file);
3. build harness/bench_contacts_c.c with our C and harness/bench_contacts_pin.cpp with Pinocchio
   (header-only), the same flags (env.OPT) as the other robot benchmarks;
4. check that the two agree on the first states, every output (ddq, lambda, the six derivatives,
   v_plus, impulse, its four derivatives, Jc, gamma) within AGREEMENT relative, before any timing;
5. time both hot (timing.timing_rounds: alternating rounds pinned to one core), one row per kernel:
   constrained_dynamics vs constraintDynamics, constrained_dynamics_derivatives vs constraintDynamics +
   computeConstraintDynamicsDerivatives, impulse_dynamics vs impulseDynamics, impulse_dynamics_derivatives
   vs impulseDynamics + computeImpulseDynamicsDerivatives, contact_jacobian and
   contact_drift vs their frame-by-frame Pinocchio counterparts.
Writes benchmarks/results/robots_contacts.md. No timing is asserted: the machine may be shared.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .build import build_ours, build_pin
from .env import HERE, OPT, ROOT, cmeel_prefixes, cpu_model, default_core, first_line, loadavg, log, provenance
from .inputs import draw_floating_states, write_states
from .pin_model import _fmt
from .tables import fmt_ns, ratio
from .timing import rel_err, run_harness, summarize, timing_rounds
from .urdf_case import urdf_case
from .urdf_robots import harness_options, ratio_spread
from reference.robot_data import MIMIC, MIMIC_FLAGS, robots_dir

# (name, URDF under example-robot-data's robots/, contacts LINK[:6d] in mask-bit order, mask, mimic joints)
ROBOTS = [
    ("solo12_fb", "solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], 0b1111, False),
    ("talos_fb", "talos_data/robots/talos_reduced.urdf", ["left_sole_link:6d", "right_sole_link:6d"], 0b11, True),
]
# (row, our harness key, Pinocchio's harness key, Pinocchio's call, target ratio or None)
ROWS = [
    ("constrained_dynamics", "constrained_dynamics", "constrained_dynamics", "constraintDynamics", 0.3),
    ("constrained_dynamics_derivatives", "constrained_dynamics_derivatives", "constrained_dynamics_derivatives",
     "constraintDynamics + computeConstraintDynamicsDerivatives", 0.3),
    ("constrained_dynamics + derivatives", "constrained_dynamics+derivatives", "constrained_dynamics_derivatives",
     "constraintDynamics + computeConstraintDynamicsDerivatives", None),
    ("impulse_dynamics", "impulse_dynamics", "impulse_dynamics", "impulseDynamics", 0.3),
    ("impulse_dynamics_derivatives", "impulse_dynamics_derivatives", "impulse_dynamics_derivatives",
     "impulseDynamics + computeImpulseDynamicsDerivatives", None),
    ("contact_jacobian", "contact_jacobian", "contact_jacobian",
     "computeJointJacobians + getFrameJacobian per contact", None),
    ("contact_drift", "contact_drift", "contact_drift",
     "forwardKinematics(q, v, 0) + getFrameClassicalAcceleration / getFrameAcceleration per contact", None),
]
RESTITUTION = 0.5
AGREEMENT = 1e-9  # largest relative difference of the two harnesses' outputs before timing
DUMP_STATES = 4


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.contacts", description=__doc__.split("\n")[0])
    ap.add_argument("--robots", nargs="*", default=[r[0] for r in ROBOTS], help="subset of robots")
    harness_options(ap, HERE / "build" / "contacts", HERE / "results" / "robots_contacts.md", rounds=5)
    return ap.parse_args(argv)


def split_contact(spec: str) -> tuple[str, str]:
    """'LINK' or 'LINK:3d' -> (LINK, '3d'); 'LINK:6d' -> (LINK, '6d')."""
    link, _, kind = spec.partition(":")
    return link, kind or "3d"


def generate(name, urdf, contacts, gen_dir, mimic):
    cmd = [sys.executable, "-m", "codegen", str(urdf), "--out", str(gen_dir), "--name", name, "--floating-base",
           "--no-friction", *(MIMIC_FLAGS if mimic else ())]
    for spec in contacts:
        cmd += ["--contact", spec, "--end-effector", split_contact(spec)[0]]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"{name}: generation failed: {r.stderr.strip()}")


def contact_lines(pmodel, contacts) -> list[str]:
    """The model file's `contact NAME JOINT KIND R p` lines (harness/bench_pin_model.hpp): each
    contact at its URDF link's frame, placed in its parent joint's frame."""
    import pinocchio as pin

    out = []
    for link, kind in contacts:
        if not pmodel.existFrame(link, pin.BODY):
            raise SystemExit(f"no link {link!r} in Pinocchio's model")
        f = pmodel.frames[pmodel.getFrameId(link, pin.BODY)]
        out.append(f"contact {link} {pmodel.names[f.parentJoint]} {kind} {_fmt(f.placement.rotation.reshape(-1))} "
                   f"{_fmt(f.placement.translation)}")
    return out


def robot_header(prefix: str, rows) -> tuple[str, str]:
    """bench_contacts_robot.h for harness/bench_contacts_c.c: the kernels' header and names."""
    P = prefix.upper()
    lines = ["/* Written by benchmarks/contacts.py for harness/bench_contacts_c.c: one robot's names. */",
             "#ifndef BENCH_CONTACTS_ROBOT_H", "#define BENCH_CONTACTS_ROBOT_H", f'#include "{prefix}_kernels.h"']
    lines += [f"#define CR_{k} {P}_{k}" for k in ("NDOF", "NQ", "NP", "NCONTACTS", "NCROWS")]
    lines.append(f"#define CR_ROWS {{{', '.join(map(str, rows))}}}")
    lines += [f"#define CR_{f} {prefix}_{f}" for f in ("constrained_dynamics", "constrained_dynamics_derivatives",
                                                       "impulse_dynamics", "impulse_dynamics_derivatives",
                                                       "contact_jacobian", "contact_drift")]
    return "bench_contacts_robot.h", "\n".join(lines + ["#endif"]) + "\n"


def dump_layout(nv: int, m: int) -> list[tuple[str, int]]:
    """The outputs of one state in a harness's --dump, in order, and their sizes."""
    return [("ddq", nv), ("lambda_c", m), ("dddq_dq", nv * nv), ("dddq_dv", nv * nv), ("dddq_dtau", nv * nv),
            ("dlambda_dq", m * nv), ("dlambda_dv", m * nv), ("dlambda_dtau", m * nv), ("v_plus", nv),
            ("impulse", m), ("dv_plus_dq", nv * nv), ("dv_plus_dv", nv * nv), ("dimpulse_dq", m * nv),
            ("dimpulse_dv", m * nv), ("Jc", m * nv), ("gamma", m)]


def read_dump(path: Path, nv: int, m: int, k: int) -> list[dict]:
    layout = dump_layout(nv, m)
    per = sum(n for _, n in layout)
    raw = np.fromfile(path, dtype="<f8")
    if raw.size != per * k:
        raise SystemExit(f"{path}: {raw.size} values, expected {per * k}")
    out = []
    for s in range(k):
        o, d = s * per, {}
        for key, n in layout:
            d[key] = raw[o:o + n]
            o += n
        out.append(d)
    return out


def agreement(harnesses, build: Path, name: str, nv: int, m: int, k: int) -> dict:
    """{output: largest relative difference ours vs Pinocchio C++ over the first k states}; stops
    the benchmark if one exceeds AGREEMENT (the two would not compute the same thing)."""
    dumps = {}
    for h, cmd in harnesses.items():
        path = build / f"dump_{name}_{h}.bin"
        run_harness(cmd + ["--dump", path, k], None, parse=False)
        dumps[h] = read_dump(path, nv, m, k)
    worst = {key: max(rel_err(x[key], y[key]) for x, y in zip(dumps["ours"], dumps["pin"]))
             for key, _ in dump_layout(nv, m)}
    bad = {key: f"{v:.1e}" for key, v in worst.items() if not v <= AGREEMENT}
    if bad:
        raise SystemExit(f"{name}: ours and Pinocchio C++ disagree beyond {AGREEMENT:g} ({bad}): not timed")
    return worst


def one_robot(name, rel, contacts, mask, mimic, args, core, pool) -> dict:
    import pinocchio as pin
    from codegen.read.urdf import load_urdf

    urdf = robots_dir() / rel
    gen_dir = args.build_dir / name
    pairs = [split_contact(c) for c in contacts]
    links = [link for link, _ in pairs]
    robot = load_urdf(urdf, name=name, end_effectors=links, floating_base=True, contacts=pairs,
                      **({"mimic": MIMIC} if mimic else {}))
    model = robot.model
    # Pinocchio's constraint dynamics has no joint friction: ours without it (--no-friction's defaults)
    params = [0.0 if n.startswith(("Fv_", "Fc_")) else v for n, v in zip(model.param_names, robot.values)]
    rows = [6 if kind == "6d" else 3 for _, kind in pairs]
    m = sum(r for k, r in enumerate(rows) if (mask >> k) & 1)
    log(f"{name}: generating")
    generate(name, urdf, contacts, gen_dir, mimic)
    case = urdf_case(name, gen_dir, name, urdf, links, params, list(model.joint_names), args.build_dir,
                     floating=True)
    with open(case.model_txt, "a") as f:
        f.write("\n".join(contact_lines(case.pmodel, pairs)) + "\n")
    q, dq = draw_floating_states(args.states, model.ndof, args.seed)
    states = args.build_dir / f"{name}_states.bin"
    write_states(states, params, q, dq)

    pin_exe, pin_status = build_pin(cmeel_prefixes(), args.build_dir, args.cxx, False, pin.__version__,
                                    "bench_contacts_pin.cpp")
    ours_exe, _, ours_status = build_ours(case.ks, args.build_dir, args.cc, pool, harness="bench_contacts_c.c",
                                          robot_h=robot_header(name, rows))
    log(f"{name}: ours {ours_status}, Pinocchio {pin_status}")
    tail = [str(mask), repr(RESTITUTION)]
    harnesses = {"ours": [ours_exe, states, *tail], "pin": [pin_exe, case.model_txt, states, *tail]}
    worst = agreement(harnesses, args.build_dir, name, model.ndof, m, min(DUMP_STATES, args.states))
    log(f"{name}: agreement {max(worst.values()):.1e}; timing {args.rounds} round(s), core {core}")
    per_round, _, _ = timing_rounds(harnesses, args.rounds, core,
                                    ["--target-ms", args.target_ms, "--inner", args.inner])
    summary = summarize(per_round)
    return dict(name=name, ndof=model.ndof, contacts=pairs, mask=mask, m=m, agreement=worst, summary=summary,
                per_round=per_round)


def _med(row, harness, key):
    v = row["summary"].get(harness, {}).get(key)
    return v["median"] if v else None


def report(rows, args, core) -> str:
    out = ["# Contact dynamics vs Pinocchio C++ (`make bench-robots`)", "",
           provenance(_dt.datetime.now().isoformat(timespec="seconds"), cpu_model(), os.cpu_count(),
                      first_line([args.cc, "--version"]), " ".join(["-std=c99", *OPT])), "",
           f"Harnesses pinned to core {core}; load average at the end: {loadavg()}. {args.rounds} round(s), "
           f"{args.states} states, hot medians in ns (same flags both sides; Pinocchio header-only, "
           "`-std=c++17` and the same optimization flags).", "",
           "**Caveat:** a shared 2-core machine under load from other jobs: ratios are indicative, "
           "absolute times noisy.", "",
           "Robots on a free-flying base (`--floating-base`; Pinocchio's model of the same URDF with a "
           "JointModelFreeFlyer root), random base poses (unit quaternions), joints in [-pi, pi], "
           "dq in [-2, 2], tau = the state's dq: " + "; ".join(
               f"{r['name']}, {r['ndof']} DOF, " + ", ".join(f"{link} ({kind})" for link, kind in r["contacts"])
               + f", mask {r['mask']:#b} ({r['m']} rows)" for r in rows) + ".", "",
           "Spread: the lowest-highest ratio of the per-round medians.", "",
           "| robot | kernel | ours ns | Pinocchio ns | ratio | spread | Pinocchio call |",
           "|---|---|---:|---:|---:|---|---|"]
    missed = []
    for r in rows:
        for label, ok, pk, call, target in ROWS:
            o, p = _med(r, "ours", ok), _med(r, "pin", pk)
            s = ratio_spread(r["per_round"], ok, pk)
            out.append(f"| {r['name']} | {label} | {fmt_ns(o)} | {fmt_ns(p)} | **{ratio(o, p)}** | "
                       + (f"{s[0]:.2f}-{s[1]:.2f}" if s else "") + f" | {call} |")
            if target is not None and o is not None and p and o / p > target:
                missed.append(f"{r['name']} {label}: {ratio(o, p)} (target <= {target})")
    alone = ", ".join(
        f"{r['name']} {fmt_ns(d - c)} ns" for r in rows
        if (d := _med(r, "pin", "constrained_dynamics_derivatives")) is not None
        and (c := _med(r, "pin", "constrained_dynamics")) is not None)
    out += ["", "Targets: constrained_dynamics, constrained_dynamics_derivatives and impulse_dynamics "
            "<= 0.3 of Pinocchio.", "",
            "Missed: " + ("; ".join(missed) if missed else "none"), "",
            "Calls: Baumgarte gains kp = kd = 0 and mu = 0 on both sides (Pinocchio's default "
            "ProximalSettings: one iteration, the plain Cholesky solve of the contact system); restitution "
            f"{RESTITUTION:g}. A point contact is Pinocchio's CONTACT_3D in LOCAL_WORLD_ALIGNED, a sole "
            "CONTACT_6D in LOCAL (docs/contact-dynamics.md), one RigidConstraintModel per active contact, "
            "initConstraintDynamics once before timing. Our derivatives kernel starts from (q, v, tau), so "
            "Pinocchio's row is the sequence that gives them from the same inputs, constraintDynamics then "
            "computeConstraintDynamicsDerivatives; its derivative call alone (the difference of the two "
            f"medians): {alone or 'n/a'}. The row `constrained_dynamics + derivatives` calls both of our "
            "kernels (ddq, lambda and their derivatives: what Pinocchio's sequence leaves in its Data). "
            "Likewise impulse_dynamics_derivatives against impulseDynamics then computeImpulseDynamicsDerivatives "
            "(Pinocchio 4.1.0 adds those derivatives to the ones left on its Data: correct values need "
            "initConstraintDynamics between calls, about 1 us, not timed).", "",
            "Agreement ours vs Pinocchio C++ before timing (largest relative difference of every output: "
            f"ddq, lambda, the six derivatives, v_plus, impulse, its four derivatives, Jc, gamma; on "
            f"{min(DUMP_STATES, args.states)} "
            "states): " + ", ".join(f"{r['name']} {max(r['agreement'].values()):.0e}" for r in rows), ""]
    return "\n".join(out)


def main(argv=None) -> int:
    args = parse_args(argv)
    unknown = set(args.robots) - {r[0] for r in ROBOTS}
    if unknown:
        raise SystemExit(f"unknown robot(s) {sorted(unknown)}: one of {[r[0] for r in ROBOTS]}")
    core = default_core(args)
    args.build_dir.mkdir(parents=True, exist_ok=True)
    # one compile at a time: the generated C files, then each harness
    with ThreadPoolExecutor(max_workers=1) as pool:
        rows = [one_robot(*r, args, core, pool) for r in ROBOTS if r[0] in args.robots]
    text = report(rows, args, core)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`make bench-robots` (python -m benchmarks.urdf_robots): our C kernels against Pinocchio C++ on real URDFs.

For every robot of ROBOTS (example-robot-data URDFs, fixed base) and of FLOATING (legged robots
and humanoids on a free-flying base: their own rows, NAME_fb, against Pinocchio's model built
with JointModelFreeFlyer):
1. generate with the CLI (`python -m codegen ROBOT.urdf --out benchmarks/build/robots/NAME
   --name NAME --end-effector LINK... [--floating-base]`), timed (wall clock, whole process);
2. compile the generated .c at -O2, its parts concurrently (timed, benchmarks.build.generation_figures);
3. build both harnesses with the same flags (benchmarks.run.c_level on the Case of
   benchmarks.urdf_case.urdf_case: Pinocchio from the same URDF), check agreement, time them;
4. one row per robot: hot medians of A (crba), C (computeCoriolisMatrix), Q
   (computeGeneralizedGravity), J (every end effector, world axes; Pinocchio: the
   fastest of its three frame-Jacobian variants), ID (rnea) and FD (aba), ratios
   ours/Pinocchio, with the spread (lowest-highest round median) of each ratio;
5. a second table, identification: `regressor` and `base_regressor` against Pinocchio's
   computeJointTorqueRegressor, and our base regressor against our full one.

The harness rebuilds Pinocchio's own model of each URDF joint by joint (axis-aligned,
unaligned and continuous joints; see benchmarks.urdf_case); a robot it cannot rebuild is listed
as skipped with the reason. Writes benchmarks/results/robots.md.
No timing is asserted: the machine may be shared and loaded (the report names the load).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from .build import children_cpu, generation_figures
from .env import HERE, OPT, ROOT, cpu_model, default_core, first_line, loadavg, log, provenance
from .inputs import draw_floating_states, draw_states, write_states
from .urdf_case import urdf_case
from .run import c_level
from .robot import group_key
from .tables import _med, fmt_ns, headline, ratio
from reference.robot_data import MIMIC, MIMIC_FLAGS, robots_dir

# (name, URDF under example-robot-data's robots/, end-effector links)
ROBOTS = [
    ("panda", "panda_description/urdf/panda.urdf", ["panda_hand"]),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", ["tool0"]),
    ("kinova", "kinova_description/robots/kinova.urdf", ["j2s6s200_end_effector"]),
    ("solo12", "solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    ("baxter", "baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper"]),
    ("talos", "talos_data/robots/talos_reduced.urdf",
     ["left_sole_link", "right_sole_link", "gripper_left_base_link", "gripper_right_base_link"]),
]
# The same on a free-flying base (--floating-base; rows NAME_fb): a quadruped and humanoids.
FLOATING = [
    ("solo12_fb", "solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    ("simple_humanoid_fb", "simple_humanoid_description/urdf/simple_humanoid.urdf", ["l_ankle", "r_wrist"]),
    ("talos_full_fb", "talos_data/robots/talos_full_v2.urdf",
     ["left_sole_link", "right_sole_link", "gripper_left_base_link", "gripper_right_base_link"]),
]
KERNELS = ("A", "C", "Q", "J", "ID", "FD")
TARGETS = {"A": 0.3, "C": 0.3, "Q": 0.15, "J": 0.3, "ID": 0.25, "FD": 0.3}
# for a 32-DOF robot (Talos) on a 2-core machine, seconds; on a free-flying base (Talos full), the
# floating-base ones
BUILD_TARGETS = {"gen": 60.0, "compile": 30.0}
BUILD_TARGET_DOF = 32
FLOATING_BUILD_TARGETS = {"gen": 90.0, "compile": 45.0}
# identification: regressor <= 0.3 of Pinocchio's; the base regressor no slower than the full one
REGRESSOR_TARGET, BASE_TARGET = 0.3, 1.0
# derivatives of the dynamics: <= 0.3 of Pinocchio's computeRNEADerivatives / computeABADerivatives
DERIVATIVE_TARGET = 0.3
DERIVATIVE_KEYS = ("ID_derivatives", "FD_derivatives")


def harness_options(ap, build_dir: Path, out: Path, rounds: int = 3):
    """The options of a robot benchmark's harness runs (this one's, benchmarks.contacts')."""
    ap.add_argument("--build-dir", type=Path, default=build_dir)
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--states", type=int, default=32)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--target-ms", type=float, default=10.0)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--no-pin", dest="pin_core", action="store_false")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.urdf_robots", description=__doc__.split("\n")[0])
    ap.add_argument("--robots", nargs="*", default=[r[0] for r in ROBOTS + FLOATING],
                    help="subset of robots (the floating-base ones end in _fb)")
    harness_options(ap, HERE / "build" / "robots", HERE / "results" / "robots.md")
    args = ap.parse_args(argv)
    # what run.c_level reads: no shipped-library build, no control tick, no cold runs
    args.no_pin_lib, args.no_tick, args.cold_kib, args.no_flush, args.no_portable = True, True, 0, True, True
    return args


def generate(name, urdf, ees, gen_dir, floating=False):
    # --no-cache: the generation itself is timed, never a copy from the build cache
    # mimic fingers (Panda, Baxter, Talos) as independent coordinates: Pinocchio's default, the harness's
    cmd = [sys.executable, "-m", "codegen", str(urdf), "--out", str(gen_dir), "--name", name, "--no-cache",
           *MIMIC_FLAGS, *(["--floating-base"] if floating else [])]
    for e in ees:
        cmd += ["--end-effector", e]
    t0, c0 = time.perf_counter(), children_cpu()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"{name}: generation failed: {r.stderr.strip()}")
    return time.perf_counter() - t0, children_cpu() - c0


def ratio_spread(per_round, ours_key, pin_key, den="pin"):
    """(lowest, highest) of ours / Pinocchio (or / the harness `den`) over the rounds (round i's medians),
    None if absent."""
    o, p = per_round.get("ours", {}).get(ours_key), per_round.get(den, {}).get(pin_key)
    if not o or not p:
        return None
    r = [a / b for a, b in zip(o, p) if b]
    return (min(r), max(r)) if r else None


def one_robot(name, rel, ees, args, core, floating=False) -> dict:
    from codegen.read.urdf import load_urdf

    urdf = robots_dir() / rel
    gen_dir = args.build_dir / name
    row = dict(name=name, ees=ees, floating=floating)
    robot = load_urdf(urdf, name=name, end_effectors=ees, floating_base=floating, mimic=MIMIC)
    row["ndof"], row["np"] = robot.model.ndof, len(robot.model.param_names)
    log(f"{name}: generating")
    row["gen_s"], row["gen_cpu_s"] = generate(name, urdf, ees, gen_dir, floating)
    cfiles = [f for f in generation_figures(gen_dir, args.cc, True, by_parts=True) if f["file"].endswith(".c")]
    row["compile_s"] = sum(f["compile_s"] or 0.0 for f in cfiles)
    row["compile_cpu_s"] = sum(f["compile_cpu_s"] or 0.0 for f in cfiles)
    try:
        case = urdf_case(name, gen_dir, name, urdf, ees, robot.values, list(robot.model.joint_names),
                         args.build_dir, floating=robot.model.floating_base)
    except ValueError as exc:
        row["skipped"] = str(exc).split(": ", 1)[-1]
        return row
    draw = draw_floating_states if robot.model.floating_base else draw_states
    q, dq = draw(args.states, robot.model.ndof, args.seed)
    states = args.build_dir / f"{name}_states.bin"
    write_states(states, robot.values, q, dq)
    res = c_level(case, args, args.build_dir, states, q, dq, core)
    rows, pj = headline(res["summary"], tuple(ees))
    med = {r[0]: (r[1], r[2]) for r in rows}
    row.update({k: med[k] for k in ("A", "C", "Q")})
    jrow = rows[3 + len(ees)]  # all end effectors together
    row["J"] = (jrow[1], jrow[2])
    row["ID"], row["FD"] = (_med(res["summary"]["ours"], "ID"), _med(res["summary"]["pin"], "ID")), \
        (_med(res["summary"]["ours"], "FD"), _med(res["summary"]["pin"], "FD"))
    keys = {"A": ("A", "A"), "C": ("C", "C"), "Q": ("Q", "Q"), "J": (group_key(tuple(ees)), pj),
            "ID": ("ID", "ID"), "FD": ("FD", "FD")}
    row["spread"] = {k: ratio_spread(res["per_round"], *keys[k]) for k in KERNELS}
    if case.ks.has_regressor:
        row["regressor"] = regressor_figures(case.ks.header, name, case.pmodel, res)
    if case.ks.has_derivatives:
        row["derivatives"] = derivative_figures(res)
    row["agreement"] = max(v for k, v in res["agreement"]["ours vs pin C++"].items() if k != "C")
    row["load"] = res["load_before"]
    return row


def regressor_figures(header, prefix, pmodel, res) -> dict:
    """Column counts (ours from the generated header, Pinocchio's ten per joint), the hot medians of
    regressor and base_regressor against computeJointTorqueRegressor, and the per-round spreads."""
    text = Path(header).read_text()
    cols = {k: int(re.search(rf"#define {prefix.upper()}_{k} (\d+)", text).group(1)) for k in ("NPI", "NBASE")}
    ours, pin = res["summary"]["ours"], res["summary"]["pin"]
    pr = res["per_round"]
    return dict(npi=cols["NPI"], nbase=cols["NBASE"], pin_cols=10 * (pmodel.njoints - 1),
                Y=(_med(ours, "regressor"), _med(pin, "regressor")),
                Yb=(_med(ours, "base_regressor"), _med(pin, "regressor")),
                spread_Y=ratio_spread(pr, "regressor", "regressor"),
                spread_Yb=ratio_spread(pr, "base_regressor", "regressor"),
                spread_base_full=ratio_spread(pr, "base_regressor", "regressor", den="ours"))


def derivative_figures(res) -> dict:
    """{key: (ours, Pinocchio's) hot median ns, spread: {key: per-round ratio range}} of the two
    derivative kernels against computeRNEADerivatives and computeABADerivatives."""
    ours, pin = res["summary"]["ours"], res["summary"]["pin"]
    return {**{k: (_med(ours, k), _med(pin, k)) for k in DERIVATIVE_KEYS},
            "spread": {k: ratio_spread(res["per_round"], k, k) for k in DERIVATIVE_KEYS}}


def derivative_table(rows) -> tuple[list[str], list[str]]:
    """The derivatives table's lines (empty without a derivatives row) and the targets it misses."""
    out, missed = [], []
    for r in rows:
        g = r.get("derivatives")
        if not g:
            continue
        out.append(f"| {r['name']} | {r['ndof']} |" + "".join(_cell(*g[k], g["spread"][k]) for k in DERIVATIVE_KEYS))
        for k in DERIVATIVE_KEYS:
            o, p = g[k]
            if o is not None and p and o / p > DERIVATIVE_TARGET:
                missed.append(f"{r['name']} {k}: {ratio(o, p)} (target <= {DERIVATIVE_TARGET})")
    if not out:
        return [], []
    head = ["## Derivatives of the dynamics", "",
            "`inverse_dynamics_derivatives(q, v, a)` (dtau_dq, dtau_dv) against Pinocchio's "
            "`computeRNEADerivatives`, `forward_dynamics_derivatives(q, v, tau)` (dddq_dq, dddq_dv, Minv) "
            "against `computeABADerivatives`; a = tau = the state's dq. Same cell format as above.", "",
            "| robot | DOF | ID derivatives ours / pin | FD derivatives ours / pin |", "|---|---|---|---|"]
    return head + out + ["", f"Target: <= {DERIVATIVE_TARGET} of Pinocchio for both.", "",
                         "Missed (derivatives): " + ("; ".join(missed) if missed else "none"), ""], missed


def _cell(o, p, s) -> str:
    return f" {fmt_ns(o)} / {fmt_ns(p)} = **{ratio(o, p)}**" + (f" [{s[0]:.2f}-{s[1]:.2f}]" if s else "") + " |"


def regressor_table(rows) -> tuple[list[str], list[str]]:
    """The identification table's lines (empty without a regressor row) and the targets it misses."""
    out, missed = [], []
    for r in rows:
        g = r.get("regressor")
        if not g:
            continue
        (o, p), (ob, _) = g["Y"], g["Yb"]
        out.append(f"| {r['name']} | {r['ndof']} | {g['npi']} / {g['pin_cols']} | {g['nbase']} |"
                   + _cell(o, p, g["spread_Y"]) + _cell(ob, p, g["spread_Yb"]) + _cell(ob, o, g["spread_base_full"]))
        if o is not None and p and o / p > REGRESSOR_TARGET:
            missed.append(f"{r['name']} regressor: {ratio(o, p)} (target <= {REGRESSOR_TARGET})")
        if ob is not None and o and ob / o > BASE_TARGET:
            missed.append(f"{r['name']} base_regressor / regressor: {ratio(ob, o)} (target <= {BASE_TARGET:g})")
    if not out:
        return [], []
    head = ["## Identification: the joint-torque regressor", "",
            "`regressor(q, dq, ddq)` (NDOF x NPI) and `base_regressor` (NDOF x NBASE) against Pinocchio's "
            "`computeJointTorqueRegressor(q, v, a)` (NV x 10 per joint), ddq = a = the state's dq; the last "
            "column is our base regressor against our full one. Same cell format as above.", "",
            "| robot | DOF | columns ours / pin | NBASE | regressor ours / pin | base_regressor ours / pin "
            "| base_regressor / regressor (ours) |",
            "|---|---|---|---|---|---|---|"]
    return head + out + ["", f"Targets: regressor <= {REGRESSOR_TARGET} of Pinocchio; base_regressor no slower "
                         "than regressor. Our columns also hold each joint's rotor inertia and friction "
                         "(Ia, Fv, Fc); Pinocchio's, ten inertial parameters per joint (bodies on fixed joints "
                         "lumped), so the two do not compute the same matrix, only the same torques.", "",
                         "Missed (identification): " + ("; ".join(missed) if missed else "none"), ""], missed


def report(rows, args, core) -> str:
    out = ["# Generated kernels vs Pinocchio C++ on example-robot-data URDFs (`make bench-robots`)", "",
           provenance(_dt.datetime.now().isoformat(timespec="seconds"), cpu_model(), os.cpu_count(),
                      first_line([args.cc, "--version"]), " ".join(["-std=c99", *OPT])), "",
           f"Harnesses pinned to core {core}; load average at the end: {loadavg()}. {args.rounds} round(s), "
           f"{args.states} states, hot medians in ns (same flags both sides; Pinocchio header-only).", "",
           "**Caveat:** a shared 2-core machine under load from other jobs: ratios are indicative, "
           "absolute times noisy.", "",
           "Floating-base rows (`_fb`): `--floating-base`, DOF = NV (6 base velocities + joints), against "
           "Pinocchio's model with a JointModelFreeFlyer root, random base poses (unit quaternions).", "",
           "Each cell: ours / Pinocchio median ns = **ratio**, and in brackets the lowest-highest ratio of "
           "the per-round medians.", "",
           "| robot | DOF | ee | A | C | Q | J (all ee, world) | ID | FD "
           "| generation wall (CPU) | -O2 compile wall (CPU) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    missed = []
    for r in rows:
        head = f"| {r['name']} | {r['ndof']} | {len(r['ees'])} |"
        tail = (f" {r['gen_s']:.1f} s ({r['gen_cpu_s']:.1f} s) | {r['compile_s']:.1f} s "
                f"({r['compile_cpu_s']:.1f} s) |")
        if r["ndof"] >= BUILD_TARGET_DOF:
            targets = FLOATING_BUILD_TARGETS if r.get("floating") else BUILD_TARGETS
            for k, what in (("gen", "generation"), ("compile", "compile")):
                if r[f"{k}_s"] > targets[k]:
                    missed.append(f"{r['name']} {what}: {r[f'{k}_s']:.1f} s wall (target <= {targets[k]:.0f} s)")
        if "skipped" in r:
            out.append(head + f" skipped: {r['skipped']} | | | | | |" + tail)
            continue
        cells = []
        for k in KERNELS:
            o, p = r[k]
            rt = ratio(o, p)
            s = r.get("spread", {}).get(k)
            cells.append(f" {fmt_ns(o)} / {fmt_ns(p)} = **{rt}**" + (f" [{s[0]:.2f}-{s[1]:.2f}]" if s else "") + " |")
            if o is not None and p and o / p > TARGETS[k]:
                missed.append(f"{r['name']} {k}: {rt} (target <= {TARGETS[k]})")
        out.append(head + "".join(cells) + tail)
    out += ["", "Targets: A <= 0.3, C <= 0.3, Q <= 0.15, J <= 0.3, ID <= 0.25, FD <= 0.3 of Pinocchio; "
            "generation <= 60 s and compile <= 30 s for Talos (32 DOF); on a floating base (Talos full) "
            "<= 90 s and <= 45 s.", "",
            "Missed: " + ("; ".join(missed) if missed else "none"), "",
            "Generation: wall time of `python -m codegen ROBOT.urdf ...` (process start included). Compile: "
            "`gcc -std=c99 -O2 -c -DKKPART=k` of each part of the generated .c, as the Python module build "
            "compiles them, as many at a time as that build (here both cores), largest part first; in parentheses the "
            "CPU time (user + system) of all of them, about that of one serial `gcc -O2 -c` of the whole file: "
            "on a loaded machine wall exceeds CPU / cores. J: our `jacobian` for every end effector vs the "
            "fastest of Pinocchio's three ways (see bench.md). ID: inverse_dynamics (with the URDF's friction, if "
            "any) vs rnea; FD: forward_dynamics vs aba. Agreement ours vs Pinocchio C++ "
            "(A, Q, J, max rel. err. on 8 states): " + ", ".join(
                f"{r['name']} {r['agreement']:.0e}" for r in rows if "agreement" in r), ""]
    out += regressor_table(rows)[0]
    out += derivative_table(rows)[0]
    return "\n".join(out)


def main(argv=None) -> int:
    args = parse_args(argv)
    core = default_core(args)
    args.build_dir.mkdir(parents=True, exist_ok=True)
    rows = [one_robot(n, rel, ees, args, core) for n, rel, ees in ROBOTS if n in args.robots]
    rows += [one_robot(n, rel, ees, args, core, floating=True) for n, rel, ees in FLOATING if n in args.robots]
    text = report(rows, args, core)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

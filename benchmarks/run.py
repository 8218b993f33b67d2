"""`make bench` (python -m benchmarks): generated C kernels against Pinocchio, side by side.

In order:
1. Parameters: --params (models/krang_params.toml) if it exists, else a random
   physically valid vector (said so in the report). States: --states random
   (q, dq), drawn once with --seed, written to the build directory.
2. Pinocchio model: a URDF written from our frame table with every joint frame
   re-expressed so that its axis is +x/+y/+z (pin_model.py), loaded with
   pin.buildModelFromUrdf (joints RX/RY/RZ); checked against a model built from
   the frame table as is (RevoluteUnaligned joints) on the same states.
3. Builds (build.py, cached): bench_c (the generated *.c + harness/bench_c.c),
   bench_pin (Pinocchio header-only, same flags as ours) and bench_pin_lib
   (Pinocchio's shipped libraries).
4. Agreement: outputs of the three harnesses on the first states (--dump).
5. Timing (harness.py): tight loop and control tick (warm, buffer-evicted, clflushed)
   per harness run, alternating rounds, including `ours-clones` (the portable
   target_clones build) and `ours-pad1`, ... (--copies: `ours` linked with its kernels placed
   elsewhere, benchmarks/copies.py; the tick ratios are figures over these copies); Python
   level (python_level.py); generation figures (build.py);
   efficiency figures (efficiency.py: code per tick, worst tick, FMA floor, batch kernels, portable build).
6. Writes bench.md, bench.json (report.py) and bench.png (plot.py).

The C-level part works for any robot: `Case` holds a kernel set (generated
directory, C prefix, end effectors) and the Pinocchio side; `c_level` builds,
checks and times it. A Case for a URDF robot comes from urdf_case.urdf_case.
No timing is asserted anywhere: the machine may be shared and noisy.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import pin_model
from . import efficiency
from .copies import DEFAULT_COPIES, MARK, NOTE as COPIES_NOTE, describe_shifts, moved, pad_bytes, pad_object
from .build import build_ours, build_pin, generation_figures, machine_code_sizes, tick_code
from .env import HERE, PORTABLE, ROOT, cmeel_prefixes, default_core, loadavg, log, machine_info
from .inputs import draw_states, get_params, write_states
from .timing import compare, dump_outputs, summarize, summarize_tick, summarize_timer, timing_rounds
from .plot import plot
from .python_level import PinEE, pin_ees, python_level, python_pin_outputs
from .report import write_json, write_report
from .robot import KernelSet, end_effectors, kernel_set
from .tables import add_c_columns

DUMP_STATES = 8


@dataclass
class Case:
    """One robot, ready to benchmark at the C level."""
    name: str
    ks: KernelSet | None        # our kernels (None: no generated C yet)
    ee_names: tuple[str, ...]
    params: list                # the parameter vector both sides use
    pmodel: object              # pinocchio.Model, joints 1-dof
    perm: object                # perm[i] = Pinocchio's velocity index of our q[i]
    ees: list[PinEE]            # the end effectors in the Pinocchio model
    model_txt: Path             # bench_pin.cpp's model file
    agreement: dict = field(default_factory=dict)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--generated", type=Path, default=ROOT / "generated", help="generated C directory")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "krang.toml")
    ap.add_argument("--params", type=Path, default=ROOT / "models" / "krang_params.toml")
    ap.add_argument("--prefix", default=None, help="C prefix of the kernels (default: the model's name)")
    ap.add_argument("--build-dir", type=Path, default=HERE / "build")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--rounds", type=int, default=5, help="alternating harness runs (>= 5 recommended)")
    ap.add_argument("--states", type=int, default=64)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--target-ms", type=float, default=20.0, help="duration of one measurement")
    ap.add_argument("--inner", type=int, default=5, help="measurements per harness run")
    ap.add_argument("--py-repeat", type=int, default=7, help="timeit repeats at the Python level")
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last one)")
    ap.add_argument("--no-pin", dest="pin_core", action="store_false", help="do not pin to a core")
    ap.add_argument("--no-pin-lib", action="store_true", help="skip the shipped-libraries Pinocchio build")
    ap.add_argument("--no-python", action="store_true", help="skip the Python-level timings")
    ap.add_argument("--no-tick", action="store_true", help="skip the control-tick measurement")
    ap.add_argument("--cold-kib", type=int, default=4096,
                    help="buffer read before every cold tick, KiB (0: no cold tick; default 4096 = 2x this "
                         "machine's L2 per core)")
    ap.add_argument("--no-flush", action="store_true", help="skip the clflushed cold tick")
    ap.add_argument("--no-portable", action="store_true",
                    help="skip the portable (target_clones) build of our kernels")
    ap.add_argument("--copies", type=int, default=DEFAULT_COPIES,
                    help="copies of the batch and tick binaries, code placed differently (benchmarks/copies.py; "
                         f"default {DEFAULT_COPIES})")
    ap.add_argument("--no-batch", action="store_true", help="skip the batch-kernel figures (benchmarks.batch)")
    ap.add_argument("--no-compile-time", action="store_true", help="skip the -O2 compile-time measurement")
    ap.add_argument("--random-params", action="store_true", help="ignore --params")
    ap.add_argument("--generate-time", type=float, default=None, help="`make generate` wall time to report (s)")
    ap.add_argument("--measure-generate", action="store_true",
                    help="time the generation step of `make generate` (python -m codegen), into a scratch "
                         "directory under --build-dir so generated/ is left alone")
    ap.add_argument("--quick", action="store_true", help="1 round, short measurements (smoke test)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.target_ms, args.inner, args.py_repeat = 1, 5.0, 3, 3
    return args


def measure_generation(args, build: Path) -> str:
    if not args.measure_generate:
        return f"{args.generate_time:.1f} s (given)" if args.generate_time is not None else "not measured"
    scratch = build / "regen"
    shutil.rmtree(scratch, ignore_errors=True)
    cmd = [sys.executable, "-m", "codegen", str(args.model), str(args.params), "--out", str(scratch)]
    log(f"timing the generation: {shlex.join(cmd)}")
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT)
    return (f"{time.perf_counter() - t0:.1f} s measured for `python -m codegen` (the generation step of "
            "`make generate`, without the extension rebuild)" if r.returncode == 0 else "codegen failed")


def frame_table_case(model, params, gen_dir: Path, prefix: str, build: Path, q, dq) -> Case:
    """A Case from our model file: the axis-aligned URDF model, checked against the frame table."""
    urdf = build / f"{model.name}_aligned.urdf"
    pmodel = pin_model.build_aligned(model, params, urdf)
    model_txt = build / f"{model.name}_pin_model.txt"
    model_txt.write_text(pin_model.harness_model_text(pmodel, model, urdf))
    names = tuple(e.name for e in end_effectors(model))
    frames = [(n, pin_model.ee_frame_name(n)) for n in names]
    perm = pin_model.q_permutation(pmodel, model)
    ees = pin_ees(pmodel, frames)
    ref_model = pin_model.build_unaligned(model, params)
    ref = python_pin_outputs(ref_model, pin_model.q_permutation(ref_model, model), pin_ees(ref_model, frames), q, dq)
    ali = python_pin_outputs(pmodel, perm, ees, q, dq)
    pair = "pin URDF (RX/RY/RZ) vs pin unaligned joints (Python)"
    agreement = {pair: compare(ali, ref, dq)}
    worst = max(agreement[pair].values())
    if worst > 1e-9:
        raise SystemExit(f"the axis-aligned URDF model differs from the frame table ({worst:.1e}); fix pin_model.py")
    return Case(model.name, kernel_set(gen_dir, prefix, names), names, list(params), pmodel, perm, ees, model_txt,
                agreement)


def c_level(case: Case, args, build: Path, states: Path, q, dq, core):
    """Build, check agreement and time one Case. Returns (harnesses, objs, summaries...) as a dict."""
    import pinocchio as pin

    prefixes = cmeel_prefixes()
    with ThreadPoolExecutor(max_workers=2) as pool:
        f_pin = pool.submit(build_pin, prefixes, build, args.cxx, False, pin.__version__)
        f_lib = None if args.no_pin_lib else pool.submit(build_pin, prefixes, build, args.cxx, True, pin.__version__)
        ours_exe, objs, ours_status = build_ours(case.ks, build, args.cc, pool) if case.ks else (None, [], "no C")
        port_exe = None
        if case.ks and not args.no_portable:
            port_exe, _, port_status = build_ours(case.ks, build, args.cc, pool, PORTABLE, "-clones")
            log(f"ours-clones: {port_status}")
        pads = []
        ncopies = getattr(args, "copies", 1)  # make bench's option; urdf_robots (no tick) has none
        if ours_exe and ncopies > 1 and not args.no_tick:
            # copies of `ours` that differ only in code placement: the tick figures' spread
            pads = [build_ours(case.ks, build, args.cc, pool, tag=f"-pad{k}",
                               pad=pad_object(build / "obj", pad_bytes(k), args.cc))[0] for k in range(1, ncopies)]
            try:
                log("ours copies: " + describe_shifts(moved([ours_exe, *pads], efficiency.tick_roots(case.ks))))
            except ValueError as e:
                log(f"WARNING: {e}")
        pin_exe, _ = f_pin.result()
        lib_exe, lib_status = f_lib.result() if f_lib else (None, "skipped")
    log(f"ours: {ours_status}; pin-lib: {lib_status}")
    harnesses = {}
    if ours_exe:
        harnesses["ours"] = [ours_exe, states]
    harnesses["pin"] = [pin_exe, case.model_txt, states]
    if lib_exe:
        harnesses["pin-lib"] = [lib_exe, case.model_txt, states]
    if port_exe:
        harnesses["ours-clones"] = [port_exe, states]
    copy_names = ["ours"] if ours_exe else []
    for k, exe in enumerate(pads, 1):
        harnesses[f"ours-pad{k}"] = [exe, states]
        copy_names.append(f"ours-pad{k}")

    k = min(DUMP_STATES, len(q))
    dumps = dump_outputs({h: c for h, c in harnesses.items() if "-pad" not in h}, build, case.pmodel.nv, k,
                         case.ee_names)
    ali = python_pin_outputs(case.pmodel, case.perm, case.ees, q[:k], dq[:k])
    agreement = dict(case.agreement)
    agreement["pin C++ vs pin Python"] = compare(dumps["pin"], ali, dq[:k])
    if "pin-lib" in dumps:
        agreement["pin libs C++ vs pin Python"] = compare(dumps["pin-lib"], ali, dq[:k])
    if "ours" in dumps:
        agreement["ours vs pin C++"] = compare(dumps["ours"], dumps["pin"], dq[:k])
        bad = {n: v for n, v in agreement["ours vs pin C++"].items() if n != "C" and v > 1e-8}
        if bad:
            log(f"WARNING: ours and Pinocchio disagree ({bad}): the models differ, timings still reported")
    if "ours-clones" in dumps and "ours" in dumps:
        agreement["ours portable vs ours native"] = compare(dumps["ours-clones"], dumps["ours"], dq[:k])

    log(f"timing: {args.rounds} round(s) of {', '.join(harnesses)}; core {core}")
    load_before = loadavg()
    extra = ["--target-ms", args.target_ms, "--inner", args.inner, "--cold-kib", args.cold_kib]
    if args.no_tick:
        extra.append("--no-tick")
    if not args.no_flush:
        extra.append("--flush")
    per_round, tick_per_round, timer_runs = timing_rounds(harnesses, args.rounds, core, extra)
    # the tick as separate calls, and as one compute_all call
    code, code_all = tick_code(ours_exe, objs, efficiency.tick_roots(case.ks), efficiency.all_roots(case.ks)) \
        if ours_exe else ([], [])
    return dict(objs=objs, agreement=agreement, tick_copies=efficiency.tick_ratio_figures(tick_per_round, copy_names),
                tick_code=code, tick_code_all=code_all, per_round=per_round,
                summary=summarize(per_round), tick_per_round=tick_per_round, tick_summary=summarize_tick(tick_per_round),
                timer=summarize_timer(timer_runs), load_before=load_before)


def main(argv=None):
    from codegen.read.model import load_model

    args = parse_args(argv)
    core = default_core(args)

    import pinocchio as pin

    build = args.build_dir
    build.mkdir(parents=True, exist_ok=True)
    gen_time = measure_generation(args, build)
    model = load_model(args.model)
    params, params_src = get_params(model, args)
    q, dq = draw_states(args.states, model.ndof, args.seed)
    states = build / "states.bin"
    write_states(states, params, q, dq)
    k = min(DUMP_STATES, args.states)
    case = frame_table_case(model, params, args.generated, args.prefix or model.name, build, q[:k], dq[:k])
    res = c_level(case, args, build, states, q, dq, core)
    summary, tick_summary, ks = res["summary"], res["tick_summary"], case.ks
    gen_files = generation_figures(args.generated, args.cc, not args.no_compile_time) if ks else []

    py_rows, py_note = [], "skipped (--no-python)"
    if not args.no_python:
        log("Python level")
        py_rows, py_note = python_level(case.pmodel, case.perm, case.ees, q[0], dq[0], args.py_repeat, core)
        add_c_columns(py_rows, summary, tick_summary, case.ee_names)

    info = dict(date=_dt.datetime.now().isoformat(timespec="seconds"),
                **machine_info(args, core, pin.__version__, res["load_before"]), params=params_src,
                states=f"{args.states} random (q in [-pi, pi], dq in [-2, 2]), seed {args.seed}")
    batch_res, batch_note = None, "skipped (--no-batch)"
    if ks and not args.no_batch:
        from . import batch
        batch_res, batch_note = (efficiency.batch_figures(core, copies=args.copies) if ks.gen_dir.resolve() == batch.GEN.resolve()
                                 else (None, "benchmarks.batch drives the Krang kernels in generated/ only"))
    ops = {name: n for f in gen_files for name, n in f["ops"]}
    from .batch import nominal_ghz
    ghz = nominal_ghz()
    fma = efficiency.fma_fractions(ks, summary, ops, ghz) if ks else {}
    portable = efficiency.portable_rows(ks, summary, tick_summary) if ks else []
    eff_rows = efficiency.summary_rows(ks, summary, tick_summary, res["tick_code"], fma, batch_res, portable,
                                       res["tick_code_all"], res["tick_copies"])
    eff_notes = [f"FMA floor: ops / 4 cycles at the nominal {ghz:.2f} GHz (`cpu MHz`; on a VM the TSC "
                "rate, not the turbo clock).", f"Batch figures: {batch_note}.",
                "Portable: the harness `ours-clones`, our kernels built as the wheel builds them, timed in the "
                "same alternating rounds as `ours` (-march=native)."]
    if any(MARK in r.value for r in eff_rows):
        eff_notes.append(COPIES_NOTE)
    code = machine_code_sizes(res["objs"], ks.prefix) if ks else {}
    shown = [ks.fn(f) for f in ("compute_A", "compute_C", "compute_Q")] + list(ks.direct or ()) if ks else []
    if code:
        info["code_bytes"] = ", ".join(f"{f.removeprefix(ks.prefix + '_')} {code[f]:,} B" for f in shown if f in code)
    rows = write_report(args.out, info, summary, res["agreement"], py_rows, py_note, gen_files, gen_time,
                        case.ee_names, ks, tick_summary=tick_summary, timer=res["timer"],
                        efficiency_lines=efficiency.section(info, eff_rows, eff_notes), tick_code=res["tick_code"])
    plot(args.out, rows, py_rows, case.ee_names, summary, tick_summary)
    write_json(args.out, info=info, per_round=res["per_round"], summary=summary, agreement=res["agreement"],
               python=py_rows, python_note=py_note, generation=gen_files, make_generate=gen_time,
               tick_per_round=res["tick_per_round"], tick_summary=tick_summary, tick_timer=res["timer"],
               efficiency=dict(rows=[r.__dict__ for r in eff_rows], tick_code=res["tick_code"],
                           tick_code_all=res["tick_code_all"], fma=fma,
                           batch=batch_res, batch_note=batch_note, portable=portable))
    print((args.out / "bench.md").read_text())
    return 0

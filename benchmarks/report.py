"""bench.md and bench.json: the benchmark's report, from the summaries (tables.py computes the rows).

The Markdown layout is the one docs_tables.py copies into docs/benchmarks.md (and its first
table into the README): keep the provenance line (env.provenance: machine, compiler, flags, date),
the section headings ("## C / C++ level", "## Control tick", "### Cold tick", "### Flushed tick",
"## Efficiency", "## Python level") and the first table under each.
"""
from __future__ import annotations

import json
from pathlib import Path

from .env import provenance
from .robot import KernelSet, group_label, j_key, tick_calls
from .tables import (add_c_columns, controller_rows, fmt_dus, fmt_ns, fmt_us, headline, our_calls,  # noqa: F401
                     pin_calls, ratio, tick_rows)


def report_text(info, summary, agreement, py_rows, py_note, gen_files, gen_time, ees, ks: KernelSet | None = None,
                tick_summary=None, timer=None, efficiency_lines=None, tick_code=None) -> tuple[str, list]:
    """bench.md's text and the headline rows (for the plot). ees: end-effector names; ks: our
    kernel set (None: no generated C, the text names the Krang prefix's calls generically)."""
    tick_summary = tick_summary or {}
    timer = timer or {}
    rows, pj_name = headline(summary, ees)
    glabel = group_label(ees)
    ours_calls = our_calls(ks) if ks else {}
    pcalls = pin_calls(ees)
    tick_fns = ", ".join(f"`{f}`" for f in tick_calls(ks)) if ks else "?"
    L = []
    L.append("# krang-kernels benchmark: generated C vs Pinocchio\n")
    L.append(provenance(info["date"], info.get("cpu", "?"), info.get("cores", "?"), info.get("cc", "?"),
                        info.get("flags_ours", "?")) + "\n")
    L.append("Made by `python -m benchmarks`. No timing is asserted anywhere; "
             "the machine may be shared, so treat differences under ~10 % as noise.\n")
    L.append("| | |\n|---|---|")
    for k in ("cpu", "cpu_flags", "cpu_caches", "cores", "cc", "cxx", "flags_ours", "flags_portable", "flags_pin",
              "flags_pin_lib", "pin",
              "python", "numpy", "params", "states", "rounds", "pinned", "load", "code_bytes"):
        L.append(f"| {k} | {info.get(k, '')} |")
    L.append("")
    L.append("## C / C++ level: ns per call\n")
    L.append("Median over rounds of each run's median (runs alternate ours / Pinocchio, pinned to one core). "
             "*Pinocchio* is Pinocchio's algorithms compiled here, header-only, with our flags "
             f"(`{info['flags_ours']}`, model from a URDF with RX/RY/RZ joints); *Pinocchio libs* runs the "
             "explicitly instantiated algorithms of the wheel's `libpinocchio_default` (its own flags).\n")
    L.append("| kernel | ours ns | Pinocchio ns | ratio ours/pin | Pinocchio libs ns | Pinocchio call |")
    L.append("|---|---:|---:|---:|---:|---|")
    for label, o, p, lb, call in rows:
        L.append(f"| {label} | {fmt_ns(o)} | {fmt_ns(p)} | {ratio(o, p)} | {fmt_ns(lb)} | {call} |")
    L.append("")
    L.append("Notes: Pinocchio's `crba` fills only the upper triangle (ours writes all of A; `A_sym` below "
             f"adds the copy). Our `world` Jacobian is Pinocchio's `LOCAL_WORLD_ALIGNED`. For {glabel} "
             "the fastest of three Pinocchio ways is taken"
             + (f" (here `{pj_name}`)" if pj_name else "") + ".\n")
    crows = controller_rows(summary)
    if crows:
        L.append("### Controller kernels\n")
        L.append("Same loop and flags; end effector 0; ddq and tau are the state's dq (timing only). "
                 "Target: the project's bound on ours/Pinocchio.\n")
        L.append("| kernel | ours ns | Pinocchio ns | ratio ours/pin | target | Pinocchio libs ns | our call | "
                 "Pinocchio call |")
        L.append("|---|---:|---:|---:|---:|---:|---|---|")
        for k, o, p, lb, oc, pc, target in crows:
            L.append(f"| {k} | {fmt_ns(o)} | {fmt_ns(p)} | {ratio(o, p)} | {target:g} | {fmt_ns(lb)} | `{oc}` | `{pc}` |")
        L.append("")
    if tick_summary:
        t_ours = timer.get("ours") or next(iter(timer.values()), {})
        cold_kib = (t_ours.get("cold_bytes") or 0) / 1024
        L.append("## Control tick: per-call latency in sequence (ns)\n")
        L.append(
            "The table above is throughput of a hot kernel: each kernel is called alone in a tight loop, so its "
            "code and data stay in L1/L2. A controller instead runs the kernels one after the other once per tick. "
            f"Here, for each pre-drawn state in turn, one tick calls A, C, Q, {', '.join(j_key(e) for e in ees)} "
            f"(ours: {tick_fns}; Pinocchio: `crba`, `computeCoriolisMatrix`, "
            f"`computeGeneralizedGravity`, and the main table's {'/'.join(j_key(e) for e in ees)} method "
            "(`computeJointJacobian` + rotate to LOCAL_WORLD_ALIGNED) once per end effector), and every call is "
            "timed on "
            f"its own with {t_ours.get('timer', '?')}; the timer overhead, measured as the median of empty timed "
            f"regions ({t_ours.get('overhead_ns', float('nan')):.1f} ns here; `clock_gettime` costs "
            f"{t_ours.get('clock_gettime_ns', float('nan')):.0f} ns), is subtracted from each call. Figures: median "
            "over ticks (about "
            f"{t_ours.get('warm_ticks', 0):,.0f} ticks per measurement for ours), median over measurements and "
            "rounds; rounds alternate ours / Pinocchio as above. *whole tick* is timed in a separate pass with no "
            "timestamps inside the tick; its *tight loop* figure is the sum of the four tight-loop rows. The "
            "ratio columns are ours / Pinocchio; *tick / tight* is how much longer the same call takes inside "
            "the tick than in its tight loop.\n")

        def tick_table(mode):
            L.append("| call | ours ns | Pinocchio ns | ratio ours/pin | Pinocchio libs ns | tight loop: ours ns "
                     "| tight loop: Pinocchio ns | tight loop ratio | ours tick / tight | Pinocchio tick / tight |")
            L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for label, o, p, lb, ot, pt in tick_rows(summary, tick_summary, mode, ees):
                L.append(f"| {label} | {fmt_ns(o)} | {fmt_ns(p)} | {ratio(o, p)} | {fmt_ns(lb)} | {fmt_ns(ot)} | "
                         f"{fmt_ns(pt)} | {ratio(ot, pt)} | {ratio(o, ot)} | {ratio(p, pt)} |")
            L.append("")

        tick_table("warm")
        ours_w = tick_summary.get("ours", {}).get("warm", {})
        if "sum" in ours_w and "tick" in ours_w:
            pin_w = tick_summary.get("pin", {}).get("warm", {})
            extra = (f"; Pinocchio {fmt_ns(pin_w['sum']['median'])} vs {fmt_ns(pin_w['tick']['median'])}"
                     if "sum" in pin_w and "tick" in pin_w else "")
            all_seq = summary.get("ours", {}).get("all_seq", {}).get("median")
            pin_seq = summary.get("pin", {}).get("all_seq", {}).get("median")
            L.append(f"Check: the sum of the individually timed calls of a tick, ours "
                     f"{fmt_ns(ours_w['sum']['median'])} ns vs the whole tick timed alone "
                     f"{fmt_ns(ours_w['tick']['median'])} ns{extra}; the same sequence in a tight loop over the "
                     f"states (`all_seq`): ours {fmt_ns(all_seq)} ns, Pinocchio {fmt_ns(pin_seq)} ns.\n")
        if any("cold" in m for m in tick_summary.values()):
            L.append("### Cold tick: caches evicted before every tick (ns)\n")
            L.append(f"Before every tick the harness reads one byte of every cache line of a {cold_kib:,.0f} KiB "
                     f"buffer (`--cold-kib`; caches per core: {info.get('cpu_caches', '?')}). With L2 = 2 MiB a "
                     "2 MiB buffer evicts only part of it; on the machine this was written on, 4 and 8 MiB gave "
                     "the same figures. So each tick starts with its code and data out of L1/L2 (served from L3). "
                     "This is the other bound: a real tick that follows other work (estimation, I/O, a Python "
                     "step) lies between the warm and the cold figures, depending on how much that work "
                     "displaces. Our kernels are long straight-line code (machine code: "
                     f"{info.get('code_bytes', '?')}), Pinocchio's are small loops over the joints, so cache "
                     f"misses cost ours much more. About {t_ours.get('cold_ticks', 0):,.0f} ticks per "
                     "measurement.\n")
            tick_table("cold")
        if any("flush" in m for m in tick_summary.values()):
            fl = {h: t.get("flush_ranges", {}) for h, t in timer.items()}
            what = "; ".join(f"{h} ({timer[h].get('flush_insn', '?')}): "
                             + ", ".join(f"{k} {v / 1024:,.0f} KiB" for k, v in r.items() if v)
                             for h, r in fl.items() if r)
            code = tick_code or []
            L.append("### Flushed tick: every cache line of code and data flushed before every tick (ns)\n")
            L.append("Before every tick the harness flushes (`clflushopt` where the CPU has it, else `clflush`; "
                     "then `mfence`; `--flush`) "
                     "every cache line of: every readable mapping of its executable (machine code, read-only "
                     "data, .data, .bss: for ours the called kernels and all the others, and the static outputs; "
                     "for Pinocchio its header-only algorithms, compiled into the executable), the anonymous "
                     "mapping after it (the rest of .bss), the malloc heap (the states, the parameter vector, "
                     "Pinocchio's Model and Data, their Eigen storage), the main stack (the kernels' frames) and "
                     "libm (Pinocchio's sin/cos). Each tick so starts from DRAM, whatever the cache sizes. Not "
                     "flushed: other shared libraries (libc, libstdc++), TLBs, branch predictors. Flushed per "
                     f"tick: {what or '?'}. Code our tick executes: "
                     + (", ".join(f"`{f}` {b:,} B" for f, b in code) + f" = {sum(b for _, b in code):,} B"
                        if code else "?")
                     + f". About {t_ours.get('flush_ticks', 0):,.0f} ticks per measurement.\n")
            tick_table("flush")
        L.append("Per-tick 90th percentiles (median over rounds, ns) are in bench.json (`tick_summary`, "
                 "modes `warm_p90`, `cold_p90`, `flush_p90`).\n")
    if efficiency_lines:
        L += efficiency_lines
    L.append("### Every timed call (median [min - max over rounds], ns)\n")
    L.append("| harness | name | median | range | call |")
    L.append("|---|---|---:|---|---|")
    for h, ks in summary.items():
        for k, s in ks.items():
            call = ours_calls.get(k, "") if h.startswith("ours") else pcalls.get(k, "")
            L.append(f"| {h} | {k} | {fmt_ns(s['median'])} | {fmt_ns(s['lo'])} - {fmt_ns(s['hi'])} | {call} |")
    L.append("")
    L.append("## Agreement (max relative error over the first states)\n")
    if agreement:
        keys = ["A", "C", "C*dq", "Q", *(j_key(e) for e in ees)]
        L.append("| pair | " + " | ".join(keys) + " |")
        L.append("|---|" + "---:|" * len(keys))
        for pair, res in agreement.items():
            L.append(f"| {pair} | " + " | ".join(f"{res[k]:.1e}" if k in res else "" for k in keys) + " |")
        L.append("\nC is compared as a matrix and as C*dq: any factorization with the same C*dq is a valid "
                 "Coriolis matrix; ours uses Christoffel symbols.\n")
    else:
        L.append("No generated C yet.\n")
    L.append("## Python level: µs per call\n")
    L.append("timeit medians, one state, pinned to one core; default parameters (`params=None`). Pinocchio's "
             "Python calls write into its `data` (they have no `out=`).\n")
    if py_note:
        L.append(f"Note: {py_note}\n")
    L.append("The two *minus C* columns are a `krang_kernels` call with `out=` minus ours in C, the C time taken "
             "from the tight loop (C/C++ table) and from the warm control tick. Neither is purely the wrapper's "
             "cost: in timeit's loop the kernel runs between interpreter code, which displaces part of its code, "
             "so it is colder than in the tight loop (the tight-loop column also counts that slowdown, large for "
             "the long C) but can be warmer than in the tick, where the much longer compute_C runs between two "
             "A calls (hence negative values). The small kernels (Q, J), whose C time hardly depends on the "
             "context, show the wrapper's own cost. compute_all has no `out=`.\n")
    L.append("| kernel | krang_kernels µs | with out= µs | Python out= minus C (tight loop) µs "
             "| Python out= minus C (tick latency) µs | pinocchio µs | ratio ours (faster of the two)/pin "
             "| pinocchio call |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in py_rows:
        best = min((v for v in (r["ours"], r["ours_out"]) if v is not None), default=None)
        L.append(f"| {r['kernel']} | {fmt_us(r['ours'])} | {fmt_us(r['ours_out'])} | "
                 f"{fmt_dus(r.get('out_minus_c_tight_us'))} | {fmt_dus(r.get('out_minus_c_tick_us'))} | "
                 f"{fmt_us(r['pin'])} | {ratio(best, r['pin'])} | {r['pin_call']} |")
    L.append("")
    L.append("## Generation\n")
    if gen_files:
        L.append("| file | bytes | lines | ops (banner) | gcc -O2 compile s |")
        L.append("|---|---:|---:|---|---:|")
        for f in gen_files:
            ops = ", ".join(f"{k}: {v:,}" for k, v in f["ops"]) or ""
            cs = f"{f['compile_s']:.2f}" if f["compile_s"] is not None else ""
            L.append(f"| {f['file']} | {f['bytes']:,} | {f['lines']:,} | {ops} | {cs} |")
        tb = sum(f["bytes"] for f in gen_files if f["file"].endswith(".c"))
        tc = [f["compile_s"] for f in gen_files if f["compile_s"] is not None]
        L.append(f"| **all .c** | {tb:,} | | | {sum(tc):.2f} |" if tc else f"| **all .c** | {tb:,} | | | |")
        L.append("")
    else:
        L.append("No generated sources found.\n")
    L.append(f"`make generate` wall time: {gen_time}\n")
    L.append("![bench](bench.png)\n")
    return "\n".join(L), rows


def write_report(out_dir: Path, *args, **kw) -> list:
    """Write out_dir/bench.md (report_text's arguments); returns the headline rows."""
    out_dir.mkdir(parents=True, exist_ok=True)
    text, rows = report_text(*args, **kw)
    (out_dir / "bench.md").write_text(text)
    return rows


def write_json(out_dir: Path, **parts):
    (out_dir / "bench.json").write_text(json.dumps(parts, indent=1, default=str))

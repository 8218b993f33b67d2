"""Running the compiled harnesses: their input (the states file), their dumps, their timing rounds.

Timing: `rounds` rounds, each running every harness once pinned to one core
(taskset), alternating which goes first; the summary is the median over rounds
of each harness's own median (bench_common.h describes one harness run).
"""
from __future__ import annotations

import json
import shlex
import statistics
import subprocess

import numpy as np

from .env import loadavg, log, taskset_prefix
from .robot import j_key


def read_dump(path, nd, k, ee_names):
    """A harness's --dump: per state A, C, Q, then each end effector's world Jacobian."""
    ne = len(ee_names)
    per = 2 * nd * nd + nd + 6 * nd * ne
    raw = np.fromfile(path, dtype="<f8")
    if raw.size != per * k:
        raise ValueError(f"{path}: {raw.size} values, expected {per * k}")
    out = []
    for s in range(k):
        r = raw[s * per:(s + 1) * per]
        d = dict(A=r[:nd * nd].reshape(nd, nd), C=r[nd * nd:2 * nd * nd].reshape(nd, nd),
                 Q=r[2 * nd * nd:2 * nd * nd + nd])
        o = 2 * nd * nd + nd
        for name in ee_names:
            d[j_key(name)] = r[o:o + 6 * nd].reshape(6, nd)
            o += 6 * nd
        out.append(d)
    return out


def rel_err(a, b):
    scale = max(np.abs(b).max(), 1e-300)
    return float(np.abs(a - b).max() / scale)


def compare(dx, dy, dq):
    """Relative max errors of x against y (the keys of read_dump, plus C*dq)."""
    res = {}
    for key in dx[0]:
        res[key] = max(rel_err(x[key], y[key]) for x, y in zip(dx, dy))
    res["C*dq"] = max(rel_err(x["C"] @ v, y["C"] @ v) for x, y, v in zip(dx, dy, dq))
    return res


def run_harness(cmd, core, parse=True):
    r = subprocess.run(taskset_prefix(core) + [str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{shlex.join(map(str, cmd))} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout) if parse else None


def dump_outputs(harnesses, build, nd, k, ee_names):
    """{harness: read_dump of its outputs on the first k states}."""
    dumps = {}
    for name, cmd in harnesses.items():
        path = build / f"dump_{name}.bin"
        run_harness(cmd + ["--dump", path, k], None, parse=False)
        dumps[name] = read_dump(path, nd, k, ee_names)
    return dumps


def timing_rounds(harnesses, rounds, core, extra):
    """harnesses: {name: argv}. Returns ({name: {kernel: [median per round]}},
    {name: {mode: {call: [median per round]}}} for the control tick, {name: timer info})."""
    res = {name: {} for name in harnesses}
    tick = {name: {} for name in harnesses}
    timer = {}
    names = list(harnesses)
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            out = run_harness(harnesses[name] + extra, core)
            for k, (med, _mn) in out["ns"].items():
                res[name].setdefault(k, []).append(med)
            t = out.get("tick")
            # the same tick from one compute_all call (bench_c.c): its whole tick as "tick_all"
            whole = {k: {"tick_all": rows["tick"]} for k, rows in out.get("tick_all", {}).items()
                     if isinstance(rows, dict) and "tick" in rows}
            if t:
                for mode in ("warm", "cold", "flush"):
                    for k, (med, _mn, p90) in {**t.get(mode, {}), **whole.get(mode, {})}.items():
                        tick[name].setdefault(mode, {}).setdefault(k, []).append(med)
                        tick[name].setdefault(mode + "_p90", {}).setdefault(k, []).append(p90)
                timer.setdefault(name, []).append(
                    {k: v for k, v in t.items() if not isinstance(v, dict) or k == "flush_ranges"})
        log(f"round {r + 1}/{rounds} done (load {loadavg()})")
    return res, tick, timer


def _stats(v):
    return dict(median=statistics.median(v), lo=min(v), hi=max(v), n=len(v))


def summarize(per_round):
    return {h: {k: _stats(v) for k, v in ks.items()} for h, ks in per_round.items()}


def summarize_tick(tick_rounds):
    return {h: {mode: {k: _stats(v) for k, v in ks.items()} for mode, ks in modes.items()}
            for h, modes in tick_rounds.items()}


def summarize_timer(timer):
    """Per harness: the timer's name and the medians over runs of its numbers."""
    out = {}
    for h, runs in timer.items():
        d = {"timer": runs[0].get("timer")}
        for k in ("ns_per_count", "overhead_ns", "clock_gettime_ns", "cold_bytes", "warm_ticks", "cold_ticks",
                  "flush_ticks", "flush_bytes"):
            v = [r[k] for r in runs if k in r]
            if v:
                d[k] = statistics.median(v)
        if "flush_ranges" in runs[0]:  # {mapping kind: bytes}, and the instruction: the same in every run
            d["flush_ranges"] = runs[0]["flush_ranges"]
            d["flush_insn"] = runs[0].get("flush_insn")
        out[h] = d
    return out

"""bench.png from the report's rows (matplotlib, the `bench` extra; skipped without it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .env import log
from .tables import tick_keys, tick_rows


def plot(out_dir: Path, rows, py_rows, ees, summary=None, tick_summary=None):
    """bench.png: tight loop (C level), Python level, and tick / tight-loop ratios; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (pip install matplotlib, the `bench` extra): no bench.png")
        return False
    have_tick = bool(tick_summary) and bool(tick_summary.get("ours"))
    ncols = 3 if have_tick else 2
    fig, axes = plt.subplots(1, ncols, figsize=(20 if have_tick else 14, 5.5),
                             gridspec_kw=dict(width_ratios=[7, 6, 6][:ncols]))
    series = [("ours", 1, "#1f77b4"), ("Pinocchio (same flags)", 2, "#ff7f0e"), ("Pinocchio libs", 3, "#bbbbbb")]
    x = np.arange(len(rows))
    w = 0.27
    ax = axes[0]
    for n, (label, col, color) in enumerate(series):
        vals = [r[col] if r[col] is not None else 0 for r in rows]
        bars = ax.bar(x + (n - 1) * w, vals, w, label=label, color=color)
        if col == 1:
            for b, r in zip(bars, rows):
                if r[1] is not None and r[2]:
                    ax.annotate(f"{r[1] / r[2]:.2g}x", (b.get_x() + b.get_width() / 2, b.get_height()),
                                ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [r[0].replace("compute_all vs sum of pin's four", "all vs sum") for r in rows],
                  rotation=20, ha="right")
    ax.set_ylabel("ns per call (median)")
    ax.set_yscale("log")
    ax.set_title("C / C++ level, tight loop (label: ours / Pinocchio)")
    ax.legend(fontsize=8)
    ax = axes[1]
    x = np.arange(len(py_rows))
    for n, (key, label, color) in enumerate([("ours", "krang_kernels", "#1f77b4"),
                                             ("ours_out", "krang_kernels out=", "#6baed6"),
                                             ("pin", "pinocchio", "#ff7f0e")]):
        ax.bar(x + (n - 1) * w, [r[key] or 0 for r in py_rows], w, label=label, color=color)
    ax.set_xticks(x, [r["kernel"].replace("compute_all vs pin's four", "all vs sum") for r in py_rows],
                  rotation=20, ha="right")
    ax.set_ylabel("µs per call (median)")
    ax.set_yscale("log")
    ax.set_title("Python level")
    ax.legend(fontsize=8)
    if have_tick:
        ax = axes[2]
        modes = [("tight", "tight loop", "#9ecae1")] + [
            (m, lab, c) for m, lab, c in (("warm", "control tick", "#3182bd"), ("cold", "cold tick", "#08306b"))
            if any(m in v for v in tick_summary.values())]
        labels = [label for label, _, _ in tick_keys(ees)]
        x = np.arange(len(labels))
        w = 0.8 / len(modes)
        for n, (mode, lab, color) in enumerate(modes):
            if mode == "tight":
                tr = tick_rows(summary, tick_summary, "warm", ees)
                vals = [r[4] / r[5] if r[4] is not None and r[5] else 0 for r in tr]
            else:
                tr = tick_rows(summary, tick_summary, mode, ees)
                vals = [r[1] / r[2] if r[1] is not None and r[2] else 0 for r in tr]
            bars = ax.bar(x + (n - (len(modes) - 1) / 2) * w, vals, w, label=lab, color=color)
            for b, v in zip(bars, vals):
                if v:
                    ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, b.get_height()),
                                ha="center", va="bottom", fontsize=7)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel("ratio ours / Pinocchio (lower: ours faster)")
        ax.set_title("C / C++ level: tight loop vs control tick")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "bench.png", dpi=110)
    plt.close(fig)
    return True

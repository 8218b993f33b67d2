"""The examples' plotting: matplotlib on the Agg backend (files, no display) when it is
installed (`pip install krang-kernels[examples]`), one line saying so when it is not."""
from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot with the Agg backend, or None (and a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install krang-kernels[examples])")
        return None
    return plt


def save(fig, path: Path) -> None:
    """Lay out `fig`, write it to `path` (PNG, 100 dpi; parent folders made) and say where."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")

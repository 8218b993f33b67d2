"""Copy the headline tables of benchmarks/results/bench.md into README.md,
between the markers <!-- bench:start --> and <!-- bench:end -->, so the README
always shows the latest `make bench`; with the argument `robots`, the table of
benchmarks/results/robots.md between <!-- robots:start --> and <!-- robots:end -->
(`make bench-robots`)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = [  # (heading in bench.md, title in the README)
    ("## C / C++ level", "C level, each kernel hot in a tight loop (median ns per call, same run, same flags)"),
    ("## Control tick", "Control tick: A, C, Q, both Jacobians called in sequence, caches warm (ns)"),
    ("### Cold tick", "Control tick with caches evicted before every tick (ns)"),
    ("### Flushed tick", "Control tick with all code and data flushed (clflush) before every tick (ns)"),
    ("## Issue #9", "Issue #9 figures, each a ratio measured in the same run"),
    ("## Python level", "Python level (µs per call)"),
]


def first_table(text, heading):
    start = text.index(heading)
    lines = text[start:].splitlines()
    out, seen = [], False
    for line in lines[1:]:
        if line.startswith("|"):
            out.append(line)
            seen = True
        elif seen:
            break
    return out


def main():
    bench = (ROOT / "benchmarks" / "results" / "bench.md").read_text()
    made = re.search(r"Made by .*? on (\S+?)\.", bench)
    cpu = re.search(r"^\| cpu \| (.*) \|$", bench, re.M)
    parts = [f"Measured by `make bench` ({made.group(1) if made else 'date unknown'}, "
             f"{cpu.group(1) if cpu else 'cpu unknown'}, 2 cores; Pinocchio 4.1 compiled with the same flags). "
             "Full report: [benchmarks/results/bench.md](benchmarks/results/bench.md).", ""]
    for heading, title in SECTIONS:
        if heading in bench:
            parts += [f"**{title}**", ""] + first_table(bench, heading) + [""]
    parts.append("![benchmark](benchmarks/results/bench.png)")
    splice("bench", parts)


def splice(marker: str, parts: list):
    """Replace the README's lines between <!-- MARKER:start --> and <!-- MARKER:end -->."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    if f"<!-- {marker}:start -->" not in text:
        sys.exit(f"README.md has no {marker} markers")
    new = re.sub(rf"(<!-- {marker}:start -->\n).*?(<!-- {marker}:end -->)",
                 lambda m: m.group(1) + "\n".join(parts) + "\n" + m.group(2), text, flags=re.S)
    readme.write_text(new)


def robots():
    """robots.md's first paragraph, table, targets and misses."""
    lines = (ROOT / "benchmarks" / "results" / "robots.md").read_text().splitlines()
    keep = [ln for ln in lines[2:] if ln.startswith(("|", "Targets", "Missed")) or ln[:4].isdigit()]
    parts = []
    for ln in keep:
        if parts and not (ln.startswith("|") and parts[-1].startswith("|")):
            parts.append("")
        parts.append(ln)
    parts += ["", "Full report: [benchmarks/results/robots.md](benchmarks/results/robots.md)."]
    splice("robots", parts)


if __name__ == "__main__":
    robots() if sys.argv[1:] == ["robots"] else main()

"""Copy the tables the benchmark scripts wrote into the documentation, so that every figure in
docs/ and the README comes from a results file, with the line naming machine, compiler, flags
and date (env.provenance) that the script wrote above it.

    python -m benchmarks.docs_tables bench     # after make bench: results/bench.md
    python -m benchmarks.docs_tables robots    # after make bench-robots: results/robots.md
    python -m benchmarks.docs_tables contacts  # after make bench-robots: results/robots_contacts.md
    python -m benchmarks.docs_tables scaling   # after python -m benchmarks.scaling: results/scaling.md
    python -m benchmarks.docs_tables jax       # after python -m benchmarks.jax_overhead: results/jax_overhead.md
    python -m benchmarks.docs_tables casadi    # after python -m benchmarks.casadi_external: results/casadi_external.md
    python -m benchmarks.docs_tables layout    # after make bench (benchmarks.batch_layout): results/batch_layout.md
    python -m benchmarks.docs_tables crocoddyl # after make bench-crocoddyl: results/crocoddyl_quadruped.md

Each copy replaces the lines between <!-- NAME:start --> and <!-- NAME:end --> of its page.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
BENCH_PAGE = ROOT / "docs" / "benchmarks.md"
GENERATION_PAGE = ROOT / "docs" / "generation-time.md"
JAX_PAGE = ROOT / "docs" / "jax.md"
CASADI_PAGE = ROOT / "docs" / "casadi.md"
C_ABI_PAGE = ROOT / "docs" / "c-abi.md"
CONTACT_PAGE = ROOT / "docs" / "contact-dynamics.md"
SECTIONS = [  # (heading in bench.md, title in docs/benchmarks.md)
    ("## C / C++ level", "Each kernel hot in a tight loop (median ns per call)"),
    ("## Control tick", "Control tick: A, C, Q and the Jacobians called in sequence, caches warm (ns)"),
    ("### Cold tick", "Control tick with caches evicted before every tick (ns)"),
    ("### Flushed tick", "Control tick with all code and data flushed (clflush) before every tick (ns)"),
    ("## Efficiency", "Efficiency: code per tick, worst tick, FMA floor, batch kernels, portable build"),
    ("## Python level", "Python level (µs per call)"),
]


def first_table(text: str, heading: str) -> list[str]:
    """The first Markdown table after `heading`, as lines."""
    lines = text[text.index(heading):].splitlines()
    out, seen = [], False
    for line in lines[1:]:
        if line.startswith("|"):
            out.append(line)
            seen = True
        elif seen:
            break
    return out


def provenance_line(text: str) -> str:
    """The 'Machine: ...; date: ...' line a script wrote (env.provenance)."""
    m = re.search(r"^Machine: .*; date: .*$", text, re.M)
    if not m:
        sys.exit("the results file has no 'Machine: ...' line: rerun the benchmark that writes it")
    return m.group(0)


def splice(page: Path, marker: str, parts: list[str]) -> None:
    """Replace the page's lines between <!-- MARKER:start --> and <!-- MARKER:end -->."""
    text = page.read_text(encoding="utf-8")
    if f"<!-- {marker}:start -->" not in text:
        sys.exit(f"{page.relative_to(ROOT)} has no {marker} markers")
    new = re.sub(rf"(<!-- {marker}:start -->\n).*?(<!-- {marker}:end -->)",
                 lambda m: m.group(1) + "\n".join(parts) + "\n" + m.group(2), text, flags=re.S)
    page.write_text(new, encoding="utf-8")


def bench() -> None:
    """bench.md's section tables into docs/benchmarks.md; its first (hot kernels) into the README."""
    text = (RESULTS / "bench.md").read_text(encoding="utf-8")
    line = provenance_line(text)
    parts = [line, ""]
    for heading, title in SECTIONS:
        if heading in text:
            parts += [f"**{title}**", ""] + first_table(text, heading) + [""]
    parts.append("Full report: `benchmarks/results/bench.md`; plot: `benchmarks/results/bench.png`.")
    splice(BENCH_PAGE, "bench", parts)
    splice(README, "headline", [line, ""] + first_table(text, SECTIONS[0][0]))


def robot_sections(text: str) -> list[str]:
    """Each section of robots.md (the kernels, then identification and derivatives under
    their `## ` headings) as its table, the later ones titled by their heading. The
    project's Targets and Missed lines under each table stay in the results file: the
    user documentation gets the measurements only."""
    out = []
    for k, section in enumerate(re.split(r"^(?=## )", text, flags=re.M)):
        if "\n|" not in section:
            continue
        title = [f"**{section.splitlines()[0][3:]}**", ""] if k else []
        out += title + first_table(section, section.splitlines()[0]) + [""]
    return out[:-1]


def robots() -> None:
    """robots.md's tables (robot_sections) with its provenance line."""
    text = (RESULTS / "robots.md").read_text(encoding="utf-8")
    splice(BENCH_PAGE, "robots", [provenance_line(text), ""] + robot_sections(text))


def contacts() -> None:
    """robots_contacts.md's table (benchmarks.contacts) with its provenance line."""
    text = (RESULTS / "robots_contacts.md").read_text(encoding="utf-8")
    splice(BENCH_PAGE, "contacts", [provenance_line(text), ""] + first_table(text, "# "))


def scaling() -> None:
    """scaling.md's table with its provenance line."""
    text = (RESULTS / "scaling.md").read_text(encoding="utf-8")
    splice(GENERATION_PAGE, "scaling", [provenance_line(text), ""] + first_table(text, "# "))


def jax() -> None:
    """jax_overhead.md's table with its provenance line and the paragraph under it (python, jax, rounds, load)."""
    text = (RESULTS / "jax_overhead.md").read_text(encoding="utf-8")
    splice(JAX_PAGE, "jax_overhead", [provenance_line(text), ""] + first_table(text, "# ")
           + ["", "Full report (the target and how each row is measured): `benchmarks/results/jax_overhead.md`."])


def casadi() -> None:
    """casadi_external.md's two tables (evaluations; IPOPT time per iteration) with its provenance line."""
    text = (RESULTS / "casadi_external.md").read_text(encoding="utf-8")
    splice(CASADI_PAGE, "casadi_external", [provenance_line(text), ""] + robot_sections(text)
           + ["", "Full report (set-up times, rounds, load, targets): `benchmarks/results/casadi_external.md`."])


def layout() -> None:
    """batch_layout.md's table with its provenance line and the line under it (load, rounds, what the columns are)."""
    text = (RESULTS / "batch_layout.md").read_text(encoding="utf-8")
    line = provenance_line(text)
    legend = text[text.index(line) + len(line):].strip().splitlines()[0]
    splice(C_ABI_PAGE, "batch_layout", [line, legend, ""] + first_table(text, "# ")
           + ["", "Full report: `benchmarks/results/batch_layout.md` (`python -m benchmarks.batch_layout`, part of "
              "`make bench`)."])


def crocoddyl() -> None:
    """crocoddyl_quadruped.md's table with its provenance line (benchmarks.crocoddyl_quadruped)."""
    text = (RESULTS / "crocoddyl_quadruped.md").read_text(encoding="utf-8")
    splice(CONTACT_PAGE, "crocoddyl_quadruped", [provenance_line(text), ""] + first_table(text, "# ")
           + ["", "Full report (versions, rounds, load, both solves' iterations and costs, the agreement): "
              "`benchmarks/results/crocoddyl_quadruped.md` (`make bench-crocoddyl`)."])


def main(argv=None) -> int:
    jobs = {"bench": bench, "robots": robots, "contacts": contacts, "scaling": scaling, "jax": jax, "casadi": casadi,
            "layout": layout, "crocoddyl": crocoddyl}
    args = sys.argv[1:] if argv is None else argv
    if not args or any(a not in jobs for a in args):
        sys.exit(f"usage: python -m benchmarks.docs_tables {'|'.join(jobs)} ...")
    for a in args:
        jobs[a]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

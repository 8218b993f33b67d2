"""The top-level folders of code that is not shipped import in one direction only.

reference/ holds the independent references (Pinocchio models, textbook forward
kinematics, the ctypes loader of generated C) that tests/, benchmarks/ and
examples/ share, so none of those three needs another's helpers:

* reference/ imports none of tests, benchmarks, examples;
* benchmarks/ and examples/ import neither tests nor each other;
* tests/ imports no example (the examples run as subprocesses, as users run
  them); it imports benchmarks only to test the benchmarks' own code.

Read from the source text (ast), like tests/test_layering.py, so every import
counts, also one inside a function.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("reference", "tests", "benchmarks", "examples")
FORBIDDEN = {  # folder -> the folders it must not import
    "reference": {"tests", "benchmarks", "examples"},
    "benchmarks": {"tests", "examples"},
    "examples": {"tests", "benchmarks"},
    "tests": {"examples"},
}


def tops(source: str, package: str) -> set:
    """The top-level packages a file's imports name (relative imports resolved in `package`)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add(package.split(".")[0] if node.level else (node.module or "").split(".")[0])
    return out


SOURCES = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_one_way(path):
    folder = path.relative_to(ROOT).parts[0]
    bad = tops(path.read_text(), folder) & FORBIDDEN[folder]
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}; shared helpers belong in reference/"


@pytest.mark.parametrize("folder, line", [
    ("examples", "from tests.pin_reference import build_pin_model"),
    ("benchmarks", "import tests.abi_ctypes"),
    ("benchmarks", "def f():\n    from examples.plotting import plot\n"),
    ("reference", "from benchmarks.urdf_coverage import run"),
    ("tests", "import examples.demo"),
])
def test_the_checker_sees_a_wrong_import(folder, line):
    """The rule can fail: each forbidden direction, also inside a function, is caught."""
    assert tops(line + "\n", folder) & FORBIDDEN[folder]


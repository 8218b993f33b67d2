"""The test tiers (tests/conftest.py, pyproject.toml's markers) hold.

* Every tests/test_*.py names exactly one tier in a module-level `pytestmark`,
  read from the source (ast), so a file that fails to import is checked too;
* the fast tiers (unit, module, builds: `make test`) still reach every module of
  codegen/ and krang_kernels/: each is imported, directly or through the modules
  the tests import (the shared references in reference/ included), by a test
  file of a fast tier, or run by one as `python -m <module>`. Imports inside
  functions count (the lazy ones are code paths too); a module only the robots
  or system tiers reach would be untested by `make test`.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
TIERS = ("unit", "module", "builds", "robots", "system")
FAST = ("unit", "module", "builds")
LOCAL = ("codegen", "krang_kernels", "reference", "tests", "benchmarks", "examples")
COVERED = ("codegen", "krang_kernels")  # the packages whose every module the fast tiers must reach


def _mark_names(node) -> list:
    """`pytest.mark.X` (called or not) anywhere in a pytestmark value -> [X, ...]."""
    return [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
            and isinstance(n.value.value, ast.Name) and n.value.value.id == "pytest"]


def file_tiers(source: str) -> list:
    """The tier marks of a test file's module-level `pytestmark` assignments."""
    found = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            found += [n for n in _mark_names(node.value) if n in TIERS]
    return found


TEST_FILES = sorted(TESTS.glob("test_*.py"))


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_every_test_file_names_one_tier(path):
    tiers = file_tiers(path.read_text())
    assert len(tiers) == 1, f"{path.name}: tier marks {tiers}; add `pytestmark = pytest.mark.<tier>`, one of {TIERS}"


@pytest.mark.parametrize("source, tiers", [
    ("import pytest\n", []),
    ("pytestmark = pytest.mark.unit\n", ["unit"]),
    ("pytestmark = [pytest.mark.builds, pytest.mark.skipif(True, reason='x')]\n", ["builds"]),
    ("pytestmark = [pytest.mark.unit, pytest.mark.robots]\n", ["unit", "robots"]),
    ("def f():\n    pytestmark = pytest.mark.unit\n", []),
    ("pytestmark = pytest.mark.slow\n", []),
])
def test_the_tier_reader_sees_what_is_written(source, tiers):
    """The check can fail: no mark, two marks, a mark inside a function, an unknown mark."""
    assert file_tiers(source) == tiers


# --------------------------------------------------------------------------
# the fast tiers reach every module

def _modules() -> dict:
    """Dotted name -> file of every Python module of the repository's own packages."""
    out = {}
    for top in LOCAL:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _package(path: Path, name: str) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(path: Path, name: str, source: str | None = None) -> set:
    """The repository modules a file imports (anywhere in it) or runs with `-m`."""
    tree = ast.parse(path.read_text() if source is None else source)
    out = set()

    def add(mod):
        # `import a.b.c` imports a and a.b too
        parts = mod.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(path, name).split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            add(mod)
            for a in node.names:  # `from pkg import submodule`
                add(f"{mod}.{a.name}")
        elif isinstance(node, (ast.List, ast.Tuple)):
            # [sys.executable, "-m", "codegen", ...]: the module runs (its __main__ for a package)
            elts = node.elts
            for a, b in zip(elts, elts[1:]):
                if isinstance(a, ast.Constant) and a.value == "-m" and isinstance(b, ast.Constant) \
                        and isinstance(b.value, str):
                    add(b.value)
                    add(f"{b.value}.__main__")
    return out


def reached(start: set) -> set:
    """The modules that importing (or running) `start` imports, transitively."""
    seen, todo = set(), list(start)
    while todo:
        mod = todo.pop()
        if mod in seen or mod not in MODULES:
            continue
        seen.add(mod)
        todo += imported(MODULES[mod], mod)
        # importing a.b.c runs a/__init__ and a/b/__init__ first
        parts = mod.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
    return seen


def _fast_files() -> list:
    return [p for p in TEST_FILES if set(file_tiers(p.read_text())) & set(FAST)]


def test_the_fast_tiers_reach_every_module():
    start = set()
    for path in _fast_files():
        start |= imported(path, f"tests.{path.stem}")
    seen = reached(start)
    missing = sorted(m for m in MODULES if m.split(".")[0] in COVERED and m not in seen)
    assert not missing, f"no unit/module/builds test file reaches {missing}"


def test_the_reach_check_sees_an_unreached_module():
    """The check can fail: a test file importing nothing reaches nothing, and one that runs
    `python -m codegen` reaches codegen's command line."""
    path = TESTS / "test_tiers.py"
    assert reached(imported(path, "tests.test_tiers", "import pytest\n")) == set()
    runs = reached(imported(path, "tests.test_tiers", f"cmd = [{sys.executable!r}, '-m', 'codegen']\n"))
    assert {"codegen", "codegen.__main__"} <= runs

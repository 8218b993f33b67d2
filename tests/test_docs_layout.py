"""docs/layout.md names every Python module of the tree and no other; each stage package of
codegen names its modules in its docstring.

Compared with the files on disk, so a module added, moved or removed without its line on the
page (or in its package's docstring) fails here; the failure message gives the rows to add.
"""
import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "layout.md"
# The packages whose modules the page lists (reference/: the shared test and benchmark helpers,
# once it exists).
PACKAGES = ("codegen", "krang_kernels", "benchmarks", "examples", "reference")
STAGES = ("read", "derive", "emit", "build", "support")
NAMED = re.compile(r"`((?:%s)/[\w/]*\.py)`" % "|".join(PACKAGES))


def modules() -> set:
    """Every .py file under PACKAGES, as a path relative to the repository root."""
    return {p.relative_to(ROOT).as_posix()
            for pkg in PACKAGES if (ROOT / pkg).is_dir()
            for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}


def summary(path: str) -> str:
    """The first sentence of a module's docstring: what its row on the page says."""
    doc = ast.get_docstring(ast.parse((ROOT / path).read_text(encoding="utf-8")))
    if not doc:
        return "—"
    para = " ".join(line.strip() for line in doc.strip().split("\n\n")[0].splitlines())
    m = re.match(r"(.+?[.!?])(\s|$)", para)
    return (m.group(1) if m else para).replace("|", "\\|")


def test_the_page_names_every_module_and_only_those():
    named = set(NAMED.findall(PAGE.read_text(encoding="utf-8")))
    have = modules()
    missing = sorted(have - named)
    gone = sorted(named - have)
    rows = "\n".join(f"| `{m}` | {summary(m)} |" for m in missing)
    assert not missing, f"docs/layout.md does not name these modules; rows to add:\n{rows}"
    assert not gone, f"docs/layout.md names modules that do not exist: {gone}"


def test_the_page_names_each_module_once():
    named = NAMED.findall(PAGE.read_text(encoding="utf-8").split("## Modules", 1)[1])
    assert sorted(named) == sorted(set(named)), [m for m in set(named) if named.count(m) > 1]


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_docstring_names_its_modules(stage):
    folder = ROOT / "codegen" / stage
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    unnamed = sorted(p.stem for p in folder.glob("*.py")
                     if p.stem != "__init__" and not re.search(rf"\b{p.stem}\b", doc))
    assert not unnamed, f"codegen/{stage}/__init__.py's docstring does not name: {unnamed}"


def test_the_check_sees_the_tree():
    """Guards the test itself: the glob finds the packages, the pattern reads the page."""
    have = modules()
    assert {"codegen/pipeline.py", "codegen/read/model.py", "krang_kernels/__init__.py"} <= have
    assert "codegen/pipeline.py" in NAMED.findall(PAGE.read_text(encoding="utf-8"))

"""codegen's stages import only down the pipeline: read -> derive -> emit -> build
-> the pipeline, the one-call URDF API and the command line (codegen.pipeline,
codegen.urdf, codegen.cli). codegen.support holds leaves every stage may use.
Read from the source text (ast), so the test needs none of the generator's
dependencies and fails on any import that points back up."""
import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CODEGEN = Path(__file__).resolve().parent.parent / "codegen"
ORDER = ["read", "derive", "emit", "build"]  # a stage may import the stages before it
LEAVES = {"codegen", "codegen.__version__", "codegen.support"}  # the version and the shared leaves
LAZY = {"codegen.urdf"}  # codegen.import_urdf, imported inside codegen.__getattr__


def _module(path: Path) -> str:
    parts = path.relative_to(CODEGEN.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, source: str | None = None):
    """Absolute names of the codegen modules a file imports."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    source = path.read_text() if source is None else source
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "codegen")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.split(".")[0] != "codegen":
                continue
            if node.module is None or name in ("codegen",) or name.count(".") == 1 and name.split(".")[1] in ORDER:
                # `from . import x` / `from .. import read`: the names may be modules
                yield from (f"{name}.{a.name}" for a in node.names)
            else:
                yield name


def _stage(name: str):
    parts = name.split(".")
    if name in LEAVES or (len(parts) > 1 and f"codegen.{parts[1]}" in LEAVES):
        return -1
    if len(parts) > 1 and parts[1] in ORDER:
        return ORDER.index(parts[1])
    return len(ORDER)  # the pipeline and command line: last


SOURCES = sorted(CODEGEN.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CODEGEN)))
def test_imports_point_down_the_pipeline(path):
    mine = _stage(_module(path))
    if mine < 0:
        # codegen/__init__'s __getattr__ imports codegen.import_urdf's module on first use (never at import)
        lazy = LAZY if path == CODEGEN / "__init__.py" else set()
        assert not [n for n in _imports(path) if _stage(n) >= 0 and n not in lazy], \
            "codegen.support and codegen/__init__ import no stage"
        return
    up = [n for n in _imports(path) if _stage(n) > mine]
    assert not up, f"{_module(path)} imports a later stage: {up}"


@pytest.mark.parametrize("line", ["from ..emit.cnames import local", "from ..emit import cnames",
                                  "from .. import pipeline", "import codegen.emit.abi", "from codegen.cli import main",
                                  "from ..build.cache import get_or_build"])
def test_the_checker_sees_an_upward_import(line):
    """The rule can fail: a derive module importing a later stage is caught."""
    path = CODEGEN / "derive" / "kinematics.py"
    names = set(_imports(path, path.read_text() + "\n" + line + "\n"))
    assert max(_stage(n) for n in names) > _stage(_module(path)), names


def test_every_stage_has_a_docstring_naming_its_job():
    for stage in ORDER + ["support"]:
        doc = ast.get_docstring(ast.parse((CODEGEN / stage / "__init__.py").read_text()))
        assert doc and "Imports:" in doc, stage


def test_an_emit_module_importing_the_build_stage_fails():
    """The build stage is after emit: an emit module that imports it is a back arrow."""
    path = CODEGEN / "emit" / "python_module.py"
    names = set(_imports(path, path.read_text() + "\nfrom ..build import module\n"))
    assert max(_stage(n) for n in names) > _stage(_module(path)), names


def test_at_most_five_modules_at_the_top_of_codegen():
    """The stages are folders; the top holds only the entry points."""
    top = sorted(p.name for p in CODEGEN.glob("*.py"))
    assert len(top) <= 5, top
    assert not [p for p in CODEGEN.iterdir() if p.is_dir() and p.name not in
                {"read", "derive", "emit", "build", "support", "__pycache__", "templates"}]

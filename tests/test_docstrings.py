"""Every public function documents itself: a docstring, with the shapes of the arrays it takes
or returns (the rule: "every public function has a docstring with shapes, units and frames").

Read statically (ast), as the API reference (mkdocstrings) reads it: the generated stub
krang_kernels/_kernels.pyi, the hand-written public modules of krang_kernels, and the
generator's members that docs/api/*.md lists. Nothing is imported or compiled.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "krang_kernels" / "_kernels.pyi"
PUBLIC_MODULES = [ROOT / "krang_kernels" / "__init__.py", ROOT / "krang_kernels" / "identification.py"]
# A NumPy-style entry whose description only repeats its name, or says nothing ("the result"):
# the renderer's fallback when the ABI gives an argument no `doc` (codegen/emit/docstrings.py).
EMPTY_ENTRY = re.compile(r"^(?:(\w+) : [^\n]*|ndarray, [^\n]*)\n\s+(?:\1|the result(?: \(float64\))?)\.$", re.M)
# the return annotations of functions that handle no arrays (paths, names)
NO_ARRAYS = {"str", "list[str]", "None", "int", "bool"}


def _public_functions(tree: ast.Module, names=None):
    """(qualified name, node) of the public functions and public methods (not properties) of
    the public classes of a module; `names`: only these top-level names."""
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        if names is not None and node.name not in names:
            continue
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, ast.FunctionDef) and not m.name.startswith("_") and not any(
                        isinstance(d, ast.Name) and d.id == "property" for d in m.decorator_list):
                    yield f"{node.name}.{m.name}", m


def _handles_arrays(fn: ast.FunctionDef) -> bool:
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    args = [a for a in args if a.arg not in ("self", "cls")]
    ret = ast.unparse(fn.returns) if fn.returns is not None else ""
    return bool(args) or ret not in NO_ARRAYS


def problems(source: str, names=None) -> list[str]:
    """What is missing in the docstrings of `source`'s public functions."""
    out = []
    for name, fn in _public_functions(ast.parse(source), names):
        doc = ast.get_docstring(fn)
        if not doc:
            out.append(f"{name}: no docstring")
        elif _handles_arrays(fn) and "shape" not in doc:
            out.append(f"{name}: no shape statement")
        elif doc and (m := EMPTY_ENTRY.search(doc)):
            out.append(f"{name}: {m.group(1) or 'the result'} says nothing (its ABI Arg has no doc)")
    return out


def _stub_exports(text: str) -> set:
    return set(ast.literal_eval(re.search(r"^__all__ = (\[.*\])$", text, re.M).group(1)))


def test_generated_stub_documents_every_function():
    text = STUB.read_text()
    assert problems(text, _stub_exports(text)) == []


@pytest.mark.parametrize("path", PUBLIC_MODULES, ids=lambda p: p.name)
def test_public_modules_document_every_function(path):
    assert problems(path.read_text()) == []


def test_the_check_fails_on_a_stripped_function():
    """The checks can fail: a kernel whose docstring is removed, one whose shapes are removed,
    and one whose result is left undescribed are each reported."""
    text = STUB.read_text()
    names = _stub_exports(text)
    stripped = re.sub(r'(def com\(.*\n)    """[\s\S]*?"""', r'\1    ...', text, count=1)
    assert stripped != text and problems(stripped, names) == ["com: no docstring"]
    shapeless = re.sub(r'(def neutral\(.*\n    """[\s\S]*?)shape', r'\1size', text, count=1)
    assert shapeless != text and problems(shapeless, names) == ["neutral: no shape statement"]
    vague = re.sub(r"(def com_jacobian\([\s\S]*?Returns\n    -------\n    ndarray[^\n]*\n)[^\n]*\n[^\n]*\n",
                   r"\1        the result (float64).\n", text, count=1)
    assert vague != text and problems(vague, names) == ["com_jacobian: the result says nothing (its ABI Arg has no doc)"]


def test_generator_reference_members_are_documented():
    """Each member that docs/api/*.md asks mkdocstrings to render exists and has a docstring."""
    found = 0
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for module, members in re.findall(r"^::: ([\w.]+)\n    options:\n(?:      .*\n)*?      members: \[(.*)\]",
                                           page.read_text(), re.M):
            path = ROOT / (module.replace(".", "/") + ".py")
            path = path if path.exists() else path.with_suffix("") / "__init__.py"
            tree = ast.parse(path.read_text())
            defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            for member in (m.strip() for m in members.split(",")):
                assert member in defs, f"{page.name}: {module}.{member} does not exist"
                assert ast.get_docstring(defs[member]), f"{module}.{member}: no docstring"
                found += 1
    assert found >= 20

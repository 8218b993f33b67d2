"""Golden files: the C generated for tests/models/mini.toml, byte for byte.

Any change to the generated text (naming, printing, layout, statement order)
shows up here as a reviewable diff of tests/golden/. After an intended
change, regenerate with `python -m pytest tests/test_golden.py --update-golden`
and commit the new files. The one line that names the generator's own
digest (it changes with every edit of codegen/ or templates/) is compared as
a placeholder; every other byte must match.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.pipeline import generate_from_files

pytestmark = pytest.mark.module

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
_DIGEST = re.compile(rb"^( \* generator +)[0-9a-f]{64}$", re.M)


def _normalized(data: bytes) -> bytes:
    return _DIGEST.sub(rb"\1<generator digest>", data)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("golden")
    generate_from_files(HERE / "models" / "mini.toml", HERE / "models" / "mini_params.toml", out)
    return {p.name: _normalized(p.read_bytes()) for p in out.iterdir()}


@pytest.mark.parametrize("name", ["mini_kernels.h", "mini_kernels.c"])
def test_golden(fresh, name, request):
    path = GOLDEN / name
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(fresh[name])
        pytest.skip(f"updated {path.name}")
    assert path.exists(), f"{path} missing: run pytest tests/test_golden.py --update-golden"
    expected = path.read_bytes()
    if fresh[name] != expected:
        a, b = expected.decode().splitlines(), fresh[name].decode().splitlines()
        line = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        pytest.fail(f"{name} differs from the golden file at line {line + 1}:\n"
                    f"  golden: {a[line] if line < len(a) else '<end>'}\n"
                    f"  now:    {b[line] if line < len(b) else '<end>'}\n"
                    "if intended: pytest tests/test_golden.py --update-golden")

"""The README's and the docs pages' Python examples and the package docstring run as written;
every benchmark table copied into them carries its provenance line; the docs' page links resolve."""
import doctest
import re
from pathlib import Path

import krang_kernels
import pytest

pytestmark = pytest.mark.module

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


@pytest.mark.parametrize("page", [p for p in PAGES if p != README], ids=lambda p: p.name)
def test_docs_python_blocks_run(page):
    for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        exec(compile(block, str(page), "exec"), {})


def test_copied_benchmark_tables_name_machine_compiler_flags_and_date():
    """Every block benchmarks.docs_tables fills starts with the line the script wrote."""
    blocks = 0
    for page in PAGES:
        for marker, body in re.findall(r"<!-- (\w+):start -->\n(.*?)<!-- \1:end -->", page.read_text(encoding="utf-8"),
                                       re.S):
            if marker in ("bench", "robots", "scaling", "headline", "contacts", "jax_overhead", "casadi_external",
                          "batch_layout", "crocoddyl_quadruped"):
                blocks += 1
                assert re.match(r"Machine: .+, \d+ cores; compiler: .+; flags: `.+`; date: \d{4}-\d\d-\d\d", body), \
                    f"{page.name} {marker}: {body[:80]!r}"
    assert blocks >= 4


def test_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8")):
        assert (ROOT / target).exists(), target


def test_package_doctest():
    result = doctest.testmod(krang_kernels)
    assert result.attempted > 0 and result.failed == 0


def _erd_urdf(relative: str) -> Path:
    import pinocchio

    for parent in Path(pinocchio.__file__).resolve().parents:
        if parent.name == "cmeel.prefix":
            path = parent / "share" / "example-robot-data" / "robots" / relative
            if path.exists():
                return path
    pytest.skip(f"example-robot-data's {relative} is not installed")


@pytest.mark.system
def test_readme_urdf_quickstart_runs(tmp_path):
    """The README's 'two commands' run as written, on the Panda URDF of example-robot-data,
    and the module they build agrees with Pinocchio's gravity torques."""
    import subprocess
    import sys

    import numpy as np
    import pinocchio as pin

    text = README.read_text()
    block = re.search(r"<!-- urdf-quickstart:start -->\n```sh\n(.*?)```", text, re.S).group(1)
    urdf = _erd_urdf("panda_description/urdf/panda.urdf")
    script = block.replace("panda.urdf", str(urdf)).replace("python ", f"{sys.executable} ")
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    printed = np.array(run.stdout.split("[")[-1].split("]")[0].split(), dtype=float)
    pm = pin.buildModelFromUrdf(str(urdf))
    ref = pin.computeGeneralizedGravity(pm, pm.createData(), pin.neutral(pm))
    assert printed.shape == ref.shape
    assert np.allclose(printed, ref, rtol=1e-6, atol=1e-6)  # printed with numpy's 8 digits

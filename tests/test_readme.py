"""The README's Python examples and the package docstring run as written."""
import doctest
import re
from pathlib import Path

import krang_kernels

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


def test_package_doctest():
    result = doctest.testmod(krang_kernels)
    assert result.attempted > 0 and result.failed == 0

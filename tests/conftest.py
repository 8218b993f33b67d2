"""pytest configuration shared by the tests. The repository root is on
sys.path through pyproject.toml's [tool.pytest.ini_options] pythonpath, not
through code here."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the current generator instead of comparing")

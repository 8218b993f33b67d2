"""pytest configuration shared by the tests. The repository root is on
sys.path through pyproject.toml's [tool.pytest.ini_options] pythonpath, not
through code here."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the current generator instead of comparing")


@pytest.fixture(autouse=True, scope="session")
def _private_module_cache(tmp_path_factory):
    """URDF runs of the command line and codegen.import_urdf cache built modules per
    user (codegen.build.cache); tests (and their subprocesses) use a cache of their own."""
    patch = pytest.MonkeyPatch()
    patch.setenv("KRANG_KERNELS_CACHE", str(tmp_path_factory.mktemp("module_cache")))
    yield
    patch.undo()

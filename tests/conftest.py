"""pytest configuration shared by the tests. The repository root is on
sys.path through pyproject.toml's [tool.pytest.ini_options] pythonpath, not
through code here.

Tiers. Every test file names its tier in a module-level
`pytestmark = pytest.mark.<tier>` (or a list holding it): unit, module, builds,
robots, system (pyproject.toml describes them; the README's test section says
what each covers and how long it takes). `make test` runs everything but robots
and system. A file without exactly one tier fails collection, so that a new file
cannot land in the fast run, or out of it, by accident. A test (or a class, or
a parameter) may carry a tier of its own, e.g. one full-robot test in a file of
small models: the innermost tier wins, the outer ones are taken off that test so
that `-m` sees one tier per test.
"""
import os
from pathlib import Path

import pytest

# No progress lines that depend on the machine's speed ("[codegen] derive C: 2.1 s", the compiled
# parts of a build), here and in every subprocess: output checks must not depend on load
# (codegen/support/progress.py). Tests of those lines clear it.
os.environ.setdefault("KRANG_CODEGEN_PROGRESS", "0")

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "module", "builds", "robots", "system")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the current generator instead of comparing")


def file_tiers(module) -> list:
    """The tier marks among a test module's own (module-level) marks."""
    return [m.name for m in module.own_markers if m.name in TIERS]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A test file whose module-level marks hold no tier, or several, is a collection error."""
    report = yield
    if isinstance(collector, pytest.Module) and report.passed and collector.path.name.startswith("test_"):
        tiers = file_tiers(collector)
        if len(tiers) != 1:
            report.outcome = "failed"
            report.result = []
            report.longrepr = (f"{collector.path.name}: {len(tiers)} tier markers {tiers}; a test file needs "
                               f"exactly one module-level `pytestmark = pytest.mark.<tier>`, one of {', '.join(TIERS)}")
    return report


def item_tier(item) -> str | None:
    """The innermost tier mark of a test (its own or a parameter's, then its class's, then its file's)."""
    return next((m.name for m in item.iter_markers() if m.name in TIERS), None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """One tier per test, the innermost: before -m deselects (tryfirst), the outer tier marks
    move from the file and class nodes onto the tests that do not carry a tier of their own."""
    tiers = [item_tier(item) for item in items]
    for item, tier in zip(items, tiers):
        for node in item.listchain():
            node.own_markers[:] = [m for m in node.own_markers if m.name not in TIERS]
        if tier is not None:
            item.add_marker(tier)


@pytest.fixture(autouse=True, scope="session")
def _private_module_cache(tmp_path_factory):
    """URDF runs of the command line and codegen.import_urdf cache built modules per
    user (codegen.build.cache); tests (and their subprocesses) use a cache of their own."""
    patch = pytest.MonkeyPatch()
    patch.setenv("KRANG_KERNELS_CACHE", str(tmp_path_factory.mktemp("module_cache")))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def floating_tiny_module(tmp_path_factory):
    """The module of the tiny free-floating robot (tests/models/floating_tiny.urdf): end effector
    foot, no optional kernels, for this CPU only (it builds in seconds), imported."""
    import importlib.util

    from codegen.pipeline import generate_urdf
    from codegen.support.options import UrdfOptions
    out = tmp_path_factory.mktemp("floating_tiny")
    _, _, _, module = generate_urdf(ROOT / "tests" / "models" / "floating_tiny.urdf",
                                    UrdfOptions(end_effectors=("foot",), kernels=(), python=True, native=True), out)
    (so,) = out.glob(f"{module}.*.so")
    spec = importlib.util.spec_from_file_location(module, so)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert m.N_Q == m.N_DOF + 1
    return m

"""python -m krang_kernels.identify on a module that is not Krang's: found by the
path of its compiled file or built from its URDF (--urdf, through the module
cache), and one-line errors for a module it cannot find."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
from tests.test_import_urdf import URDF  # noqa: E402 - the two-link arm of the import_urdf tests


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """(URDF path, environment with a private cache, the built module, samples.npz)."""
    base = tmp_path_factory.mktemp("identify_cli")
    urdf = base / "two_link.urdf"
    urdf.write_text(URDF)
    env = dict(os.environ, KRANG_KERNELS_CACHE=str(base / "cache"), PYTHONPATH=str(ROOT))
    os.environ["KRANG_KERNELS_CACHE"] = env["KRANG_KERNELS_CACHE"]
    try:
        import codegen
        module = codegen.import_urdf(urdf, end_effectors=["tool"], quiet=True)
    finally:
        os.environ.pop("KRANG_KERNELS_CACHE")
    rng = np.random.default_rng(3)
    n = 200
    q, dq, ddq = (rng.uniform(-2, 2, (n, module.N_DOF)) for _ in range(3))
    tau = module.inverse_dynamics(q, dq, ddq)
    np.savez(base / "samples.npz", q=q, dq=dq, ddq=ddq, tau=tau)
    return urdf, env, module, base / "samples.npz"


def identify(env, *args):
    return subprocess.run([sys.executable, "-m", "krang_kernels.identify", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=900, cwd=ROOT)


def test_a_module_by_the_path_of_its_file(arm):
    urdf, env, module, samples = arm
    r = identify(env, samples, "--module", module.__file__)
    assert r.returncode == 0, r.stderr
    assert f"{module.N_BASE} base parameters" in r.stdout


def test_a_module_from_its_urdf_through_the_cache(arm):
    urdf, env, module, samples = arm
    # the entry as a user's own process leaves it (the fixture's build ran in this worker, whose
    # earlier test files may have patched what the cache key reads)
    code = f"import codegen; codegen.import_urdf({str(urdf)!r}, end_effectors=['tool'], quiet=True)"
    built = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900,
                           cwd=ROOT)
    assert built.returncode == 0, built.stderr
    r = identify(env, samples, "--urdf", urdf, "--end-effector", "tool")
    assert r.returncode == 0, r.stderr
    assert f"{module.N_BASE} base parameters" in r.stdout
    assert "[codegen]" not in r.stderr  # the cached module, not a new build


def test_a_module_it_cannot_find_is_one_line_naming_the_ways(arm):
    urdf, env, module, samples = arm
    r = identify(env, samples, "--module", "two_link_kernels")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "--urdf" in r.stderr and "Traceback" not in r.stderr
    r = identify(env, samples, "--module", str(Path(module.__file__).with_name("missing.so")))
    assert r.returncode == 2 and "no such file" in r.stderr

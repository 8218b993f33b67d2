"""codegen/emit/parallel.py: kernels emitted by worker processes give the same
files, byte for byte, as kernels emitted one after the other in this process."""
from __future__ import annotations

from pathlib import Path

import pytest

from codegen.emit import parallel as parallel_emit
from codegen.pipeline import generate_from_files
from codegen.pipeline import generate_urdf
from codegen.support.options import UrdfOptions

pytestmark = pytest.mark.module

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models"

needs_fork = pytest.mark.skipif(parallel_emit.sys.platform != "linux", reason="generation is serial without fork")


def _files(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


@needs_fork
@pytest.mark.parametrize("case", ["mini", pytest.param("floating_tiny", marks=pytest.mark.robots)])
def test_parallel_and_serial_generation_are_identical(case, tmp_path, monkeypatch):
    def run(jobs):
        monkeypatch.setenv("KRANG_GENERATE_JOBS", str(jobs))
        assert parallel_emit.jobs(50) == jobs
        out = tmp_path / f"jobs{jobs}"
        if case == "floating_tiny":
            generate_urdf(MODELS / "floating_tiny.urdf", UrdfOptions(end_effectors=("foot",), python=False), out)
        else:
            generate_from_files(MODELS / f"{case}.toml", MODELS / f"{case}_params.toml", out)
        return _files(out)

    serial, parallel = run(1), run(3)
    assert serial.keys() == parallel.keys() and serial
    for name in serial:
        assert serial[name] == parallel[name], f"{name}: parallel emission changed the output"


def test_jobs_follows_the_environment(monkeypatch):
    monkeypatch.setenv("KRANG_GENERATE_JOBS", "1")
    assert parallel_emit.jobs(20) == 1
    monkeypatch.setenv("KRANG_GENERATE_JOBS", "7")
    assert parallel_emit.jobs(3) == (3 if parallel_emit.sys.platform == "linux" else 1)
    monkeypatch.setenv("KRANG_GENERATE_JOBS", "nonsense")
    assert parallel_emit.jobs(1) == 1


def test_generation_is_serial_beside_other_python_threads(monkeypatch):
    import threading

    monkeypatch.setenv("KRANG_GENERATE_JOBS", "2")
    expected = 2 if parallel_emit.sys.platform == "linux" else 1
    assert parallel_emit.jobs(5) == expected
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert parallel_emit.jobs(5) == 1  # a forked child could inherit a lock this thread holds
    finally:
        stop.set()
        t.join()
    assert parallel_emit.jobs(5) == expected


@needs_fork
def test_forks_beside_jax_threads_without_their_warning(tmp_path, monkeypatch):
    """JAX's thread pools hold no lock the child takes (codegen/emit/parallel.py): generation
    forks beside them, and JAX's at-fork deadlock warning, meant for a child computing with JAX,
    is not passed on to the caller."""
    import types
    import warnings

    jnp = pytest.importorskip("jax.numpy")
    jnp.ones(3).block_until_ready()  # starts JAX's backend and its threads; registers its at-fork hook
    assert len(list(Path("/proc/self/task").iterdir())) > 1

    def emit_one(spec, d):
        (tmp_path / f"{spec.name}-{parallel_emit.os.getpid()}").touch()
        return None

    monkeypatch.setenv("KRANG_GENERATE_JOBS", "2")
    monkeypatch.setattr(parallel_emit, "weight", lambda spec, d: 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parallel_emit.emit_all([types.SimpleNamespace(name=n) for n in "abc"], emit_one, None) == [None] * 3
    pids = {int(f.name.split("-")[1]) for f in tmp_path.iterdir()}
    assert pids and parallel_emit.os.getpid() not in pids  # emitted in forked children
    assert not [w for w in caught if "fork" in str(w.message)], [str(w.message) for w in caught]


def test_emitted_kernels_keep_only_text():
    from codegen.emit.cse import Argument, Kernel
    import sympy as sp

    inner = Kernel("h", "", [Argument("out", 1, True)], {"out": sp.Matrix([sp.Symbol("x")])}, body=[("a", "b")])
    k = Kernel("k", "", [], {"out": sp.Matrix([1])}, helpers=[("void h(void)", inner)], straight=inner)
    t = parallel_emit.text_only(k)
    assert t.outputs == {} and t.straight.outputs == {} and t.helpers[0][1].outputs == {}
    assert t.helpers[0][1].body == [("a", "b")] and k.outputs  # the original is left as it was


@needs_fork
def test_workers_end_with_a_killed_parent(tmp_path):
    """A generation killed while its workers emit leaves no worker running on."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = ("import os, sys, time, types; from codegen.emit import parallel as pe\n"
            "def slow(spec, d):\n    time.sleep(60)\n"
            "pe.weight = lambda spec, d: 0\n"
            "specs = [types.SimpleNamespace(name=n) for n in 'ab']\n"
            "print(os.getpid(), flush=True); pe.emit_all(specs, slow, None)\n")
    env = dict(os.environ, KRANG_GENERATE_JOBS="2")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env,
                            cwd=Path(__file__).resolve().parent.parent)
    parent = int(proc.stdout.readline())
    deadline = time.time() + 30
    workers = []
    while time.time() < deadline and len(workers) < 2:
        workers = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent_of(int(p)) == parent]
        time.sleep(0.1)
    assert len(workers) == 2
    os.kill(parent, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)


def _parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_derive_reports_complete_groups_that_never_change():
    """derive(ready=...): each call sees the outputs so far, a split form with the
    output it splits, and what one call saw stays (the children emit from it)."""
    from codegen.derive.outputs import derive
    from codegen.read.model import load_model

    model = load_model(MODELS / "mini.toml")
    seen = []
    snapshot = lambda d: ({**d.outputs}, {**d.splits})  # noqa: E731
    d = derive(model, ("C", "all"), ready=lambda d: seen.append(snapshot(d)))
    assert len(seen) >= 5
    for before, after in zip(seen, seen[1:] + [snapshot(d)]):
        for b, a in zip(before, after):
            assert set(b) <= set(a)
            assert all(a[k] is v for k, v in b.items())
    for outputs, splits in seen:
        assert ("C" in outputs) == ("C" in splits)
        assert any(k.startswith("J_") for k in outputs) == ("all" in splits)


@needs_fork
def test_a_killed_runs_result_files_are_removed_by_the_next(tmp_path, monkeypatch):
    """The children's result files live in a directory named like a module build's
    (codegen/support/workdirs.py), which the next run removes once its process is gone."""
    import tempfile
    import types

    from codegen.support import workdirs as build_dir

    monkeypatch.setenv("KRANG_GENERATE_JOBS", "2")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    specs = [types.SimpleNamespace(name=n) for n in "ab"]
    monkeypatch.setattr(parallel_emit, "weight", lambda spec, d: 0)
    with parallel_emit.Emission(lambda spec, d: None) as emission:
        assert emission.finish(specs, None) == [None, None]
        (made,) = list(tmp_path.iterdir())
        dead = tmp_path / made.name.replace(f"_{parallel_emit.os.getpid()}_", "_999999999_")
        dead.mkdir()
    assert not made.exists()  # removed on exit
    assert build_dir.remove_stale(tmp_path) == [dead]


@needs_fork
def test_a_childs_error_is_raised_in_the_parent(monkeypatch):
    import types

    from codegen.read.model import ModelError

    def emit_one(spec, d):
        if spec.name == "b":
            raise ModelError("cannot print b")
        return None

    monkeypatch.setenv("KRANG_GENERATE_JOBS", "2")
    monkeypatch.setattr(parallel_emit, "weight", lambda spec, d: 0)
    with pytest.raises(ModelError, match="cannot print b"):
        parallel_emit.emit_all([types.SimpleNamespace(name=n) for n in "abc"], emit_one, None)

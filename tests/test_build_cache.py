"""codegen/build/cache.py with a stand-in builder (no generation, fast): where the cache
lives, what makes an entry usable, rebuilds of bad entries, one build under concurrency,
nothing left behind by a failed build."""
from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from codegen.build.cache import cache_root, entry_key, get_or_build, read_manifest

pytestmark = pytest.mark.unit

KEY = entry_key({"urdf_sha256": "0" * 64, "options": {"x": 1}})


def builder(text="payload", log=None, fail=False, sleep=0.0):
    def build(directory: Path):
        if log is not None:
            with open(log, "a") as f:
                f.write(f"{os.getpid()}\n")
        time.sleep(sleep)
        (directory / "module.so").write_text(text)
        (directory / "module.h").write_text("header")
        if fail:
            raise RuntimeError("compiler failed")
        return {"module": "module"}
    return build


def test_cache_root_honours_xdg_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("KRANG_KERNELS_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "krang-kernels"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec: relative paths are ignored
    assert cache_root() == Path.home() / ".cache" / "krang-kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "krang-kernels"
    monkeypatch.setenv("KRANG_KERNELS_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_key_depends_on_every_part():
    base = {"urdf_sha256": "a", "options": {"friction": True}, "generator": "g"}
    keys = {entry_key(base), entry_key({**base, "urdf_sha256": "b"}), entry_key({**base, "generator": "h"}),
            entry_key({**base, "options": {"friction": False}})}
    assert len(keys) == 4
    assert entry_key(dict(reversed(list(base.items())))) == entry_key(base)  # order-free


def test_built_once_then_reused(tmp_path):
    log = tmp_path / "log"
    entry, manifest = get_or_build(KEY, builder(log=log), root=tmp_path)
    assert manifest["module"] == "module" and set(manifest["files"]) == {"module.so", "module.h"}
    again, _ = get_or_build(KEY, builder(log=log), root=tmp_path)
    assert again == entry and len(log.read_text().split()) == 1
    assert [p.name for p in (tmp_path / "v1").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("damage", ["changed", "missing", "manifest_json", "manifest_key", "no_manifest", "dotdot"])
def test_bad_entries_are_never_used_and_get_rebuilt(tmp_path, damage):
    entry, _ = get_or_build(KEY, builder(), root=tmp_path)
    manifest = json.loads((entry / "manifest.json").read_text())
    if damage == "changed":
        (entry / "module.so").write_text("payloaD")
    elif damage == "missing":
        (entry / "module.h").unlink()
    elif damage == "manifest_json":
        (entry / "manifest.json").write_text("{")
    elif damage == "manifest_key":
        (entry / "manifest.json").write_text(json.dumps({**manifest, "key": "other"}))
    elif damage == "no_manifest":
        (entry / "manifest.json").unlink()
    elif damage == "dotdot":
        manifest["files"]["../outside"] = manifest["files"]["module.so"]
        (entry / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(entry, KEY) is None
    log = tmp_path / "log"
    entry2, _ = get_or_build(KEY, builder(log=log), root=tmp_path)
    assert entry2 == entry and log.exists()  # rebuilt
    assert (entry / "module.so").read_text() == "payload" and read_manifest(entry, KEY) is not None


def test_failed_build_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="compiler failed"):
        get_or_build(KEY, builder(fail=True), root=tmp_path)
    assert [p.name for p in (tmp_path / "v1").iterdir() if not p.name.endswith(".lock")] == []


def _worker(root, log, text, barrier):
    barrier.wait(60)  # all four ask at once, however long each took to start
    get_or_build(KEY, builder(text=text, log=log, sleep=0.5), root=Path(root))


def test_concurrent_processes_build_once(tmp_path):
    """Four processes ask at once; the builder sleeps, so without the lock several would build."""
    log = tmp_path / "log"
    # spawned, not forked: this process may run other threads (JAX's, from another test), and a fork
    # beside threads can deadlock in the child
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), log, f"p{i}", barrier)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert len(log.read_text().split()) == 1
    assert read_manifest(tmp_path / "v1" / KEY, KEY) is not None


def test_dead_builders_leftovers_are_removed(tmp_path):
    root = tmp_path / "v1"
    root.mkdir()
    from codegen.support.workdirs import owner_tag
    dead = root / f".build-{owner_tag()}-999999999-abc"  # this host and PID namespace, no such process
    dead.mkdir()
    get_or_build(KEY, builder(), root=tmp_path)
    assert not dead.exists()

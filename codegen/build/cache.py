"""A per-user cache of generated and built robot modules.

An entry is keyed by everything that decides its files: the content hash of
the input, the generation options, the generator's source digest
(codegen.support.digest) and version, and the Python, NumPy and platform the
extension was built for. Layout under cache_root() (XDG_CACHE_HOME/krang-kernels,
default ~/.cache/krang-kernels; KRANG_KERNELS_CACHE overrides):

    v1/<key>/              a finished entry: the files and manifest.json
    v1/<key>.lock          flock()ed while an entry is built (released by the
                           kernel if the builder dies)
    v1/.build-<pid>-XXXX/  an entry being built, renamed to v1/<key> in one
                           step when complete (os.rename of a directory is atomic)

manifest.json holds the key and the SHA-256 of every file. An entry is used
only after its manifest verifies (every file present with its hash, nothing
else missing); a corrupt or half-deleted entry is moved aside and rebuilt.
Two processes asking for the same missing entry: one builds under the lock,
the other waits on it and then uses the finished entry.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

FORMAT = 1
MANIFEST = "manifest.json"


def cache_root() -> Path:
    explicit = os.environ.get("KRANG_KERNELS_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"  # XDG: relative -> ignored
    return base / "krang-kernels"


def entry_key(parts: dict) -> str:
    """SHA-256 of the key parts (JSON, keys sorted)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(entry: Path, key: str) -> dict | None:
    """The manifest of a complete, intact entry for `key`; None if anything is off."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
        if manifest.get("format") != FORMAT or manifest.get("key") != key:
            return None
        files = manifest["files"]
        if not isinstance(files, dict) or not files:
            return None
        for name, digest in files.items():
            if "/" in name or name.startswith(".") or _sha256(entry / name) != digest:
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return manifest


def _discard(path: Path, root: Path) -> None:
    """Move a bad entry aside (one rename, so no reader sees it half-deleted), then delete it."""
    if not path.exists():
        return
    trash = Path(tempfile.mkdtemp(prefix=f".trash-{os.getpid()}-", dir=root))
    with contextlib.suppress(OSError):
        os.rename(path, trash / "entry")
    shutil.rmtree(trash, ignore_errors=True)


def _remove_dead_builds(root: Path) -> None:
    """Build and trash directories of processes of this host that died (no `finally` ran)."""
    for d in list(root.glob(".build-*-*")) + list(root.glob(".trash-*-*")):
        pid = d.name.split("-")[1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (OverflowError, OSError):
            pass


@contextlib.contextmanager
def _locked(path: Path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def get_or_build(key: str, build, extra=None, root: Path | None = None) -> tuple:
    """(entry directory, manifest) of `key`, built first if missing or bad.

    build(directory) writes the entry's files into an empty directory and may
    return a dict merged into the manifest (e.g. the module name). `extra`: more
    manifest fields (the key parts, for people reading the cache)."""
    root = (Path(root) if root is not None else cache_root()) / f"v{FORMAT}"
    entry = root / key
    manifest = read_manifest(entry, key)
    if manifest is not None:
        return entry, manifest
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f"{key}.lock"):
        manifest = read_manifest(entry, key)  # another process may have built it meanwhile
        if manifest is not None:
            return entry, manifest
        _remove_dead_builds(root)
        _discard(entry, root)
        stage = Path(tempfile.mkdtemp(prefix=f".build-{os.getpid()}-", dir=root))
        try:
            info = build(stage) or {}
            files = {p.name: _sha256(p) for p in sorted(stage.iterdir()) if p.is_file()}
            manifest = {"format": FORMAT, "key": key, **(extra or {}), **info, "files": files}
            (stage / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            os.rename(stage, entry)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return entry, manifest


def describe_platform() -> dict:
    """Key parts for a compiled extension: what it was built for."""
    import platform
    import sysconfig
    try:
        import numpy
        numpy_version = numpy.__version__
    except ImportError:
        numpy_version = None
    return {"python": sys.implementation.cache_tag, "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
            "numpy": numpy_version, "machine": platform.machine(), "cc": os.environ.get("CC", ""),
            "cflags": os.environ.get("CFLAGS", "")}


_NATIVE_TARGET: dict = {}


def native_target() -> str:
    """What -march=native means to this machine's C compiler (the SHA-256 of the
    macros it predefines with it: the instruction sets, e.g. __AVX2__, __znver2__),
    the key part of a module built for this CPU: a cache shared by machines with
    other CPUs (a home directory on NFS) never serves one to them. "" if the
    compiler cannot be asked (the build then fails on its own, naming it)."""
    import shlex
    import subprocess
    import sysconfig

    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if tuple(cc) not in _NATIVE_TARGET:
        try:
            out = subprocess.run(cc + ["-march=native", "-dM", "-E", "-x", "c", os.devnull],
                                 capture_output=True, timeout=60, check=True).stdout
            _NATIVE_TARGET[tuple(cc)] = hashlib.sha256(b"\n".join(sorted(out.splitlines()))).hexdigest()
        except (OSError, subprocess.SubprocessError):
            _NATIVE_TARGET[tuple(cc)] = ""
    return _NATIVE_TARGET[tuple(cc)]

"""The shared libraries krang_kernels.jax loads: the XLA FFI handler (kernel_call.cc, one for every
robot) and a robot's kernels compiled from its C, each built once and cached per user.

Why a library of the robot's own: the Python module binds its kernels inside itself (hidden symbols,
docs/c-abi.md "Symbols"), so no C address can be taken from it; the same C compiled here, with the
module's native flags, exports them. Layout, under the module cache's root (KRANG_KERNELS_CACHE, else
XDG_CACHE_HOME/krang-kernels, else ~/.cache/krang-kernels, as codegen/build/cache.py):

    jax1/<key>.so      a finished library; <key> = SHA-256 of its sources, flags, compiler and CPU
    jax1/<key>.sha256  the library's SHA-256, checked before every load
    jax1/<key>.lock    flock()ed while a process checks or builds <key>
    jax1/.build-XXXX/  a library being built, renamed into place in one step

The trust rules are the module cache's (codegen/build/cache.py): the root and jax1 are real directories
of this user that nobody else may write, created 0700; a library is loaded only if it is a regular file
of this user, writable by nobody else, and its bytes hash to the recorded value, read from the descriptor
that is then loaded (/proc/self/fd), so the file checked is the file loaded. Otherwise the library is
built in a private temporary directory for this process, with one warning.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import fcntl
import hashlib
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SUBDIR = "jax1"
SHIM_SOURCE = Path(__file__).with_name("kernel_call.cc")
# The module build's native flags (codegen/build/flags.py: FLAGS without target_clones, plus
# -march=native), so that the library's kernels are the module's to rounding; -fPIC for a shared object.
C_FLAGS = ["-O3", "-std=c99", "-ffp-contract=fast", "-march=native", "-fPIC"]
X86_FLAGS = ["-mprefer-vector-width=256"]
CXX_FLAGS = ["-O2", "-std=c++17", "-fPIC", "-w"]  # -w: jaxlib's headers warn (-Wreturn-type) under GCC
_LOCK = threading.Lock()
_LOADED: dict = {}  # key -> ctypes.CDLL, kept alive for the process (XLA holds raw addresses into it)
_PRIVATE: list = []  # the fallback directory, made once per process
_OPEN_FDS: list = []  # the descriptors the libraries were loaded from (see _load_checked)


class CacheWarning(UserWarning):
    """The per-user cache is not usable (not trusted, not writable): built privately instead."""


# cache_root and _distrust restate codegen/build/cache.py's rules: this package is the runtime, which
# must import without the generator (docs/layout.md), so it cannot import them from there.
def cache_root() -> Path:
    explicit = os.environ.get("KRANG_KERNELS_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "krang-kernels"


def _distrust(st: os.stat_result, what: str, directory: bool) -> str | None:
    """Why an object (lstat or fstat) is not the user's own; None if it is."""
    if not (stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)):
        return f"{what} is not a {'directory' if directory else 'regular file'}"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{what} belongs to uid {st.st_uid}, not to this user"
    if st.st_mode & 0o022:
        return f"{what} is writable by group or others"
    return None


def _private_dir(path: Path) -> str | None:
    """Create `path` (and parents) 0700 if missing; why it cannot be trusted, or None."""
    missing = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        for d in reversed(missing):
            try:
                os.mkdir(d, 0o700)
                os.chmod(d, 0o700)  # mkdir's mode is masked by the umask
            except FileExistsError:
                pass
    except OSError as exc:
        return f"{path} cannot be created: {exc.strerror or exc}"
    for d in (path.parent, path):
        reason = _distrust(os.lstat(d), str(d), directory=True)  # lstat: a link is not a directory
        if reason:
            return reason
    return None


def _directory() -> Path:
    """The trusted cache directory, else a private temporary one (one warning per process)."""
    where = cache_root() / SUBDIR
    reason = _private_dir(where)
    if reason is None and os.access(where, os.W_OK):
        return where
    if not _PRIVATE:
        warnings.warn(f"krang_kernels.jax: not caching the compiled kernels ({reason or f'{where} is read-only'}); "
                      "building them in a private temporary directory", CacheWarning, stacklevel=4)
        _PRIVATE.append(Path(tempfile.mkdtemp(prefix="krang_jax_")))
        atexit.register(shutil.rmtree, _PRIVATE[0], True)  # built for this process only
    return _PRIVATE[0]


def _cpu() -> str:
    """What -march=native depends on: the CPU's model and feature flags (Linux), else the machine."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.machine()
    keep = [ln for ln in text.splitlines() if ln.split(":")[0].strip() in ("model name", "flags", "Features")]
    return platform.machine() + "\n" + "\n".join(sorted(set(keep)))


def _compiler_id(command: str) -> str:
    try:
        done = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"krang_kernels.jax needs a C/C++ compiler ({command}): {exc}") from None
    return f"{shutil.which(command)}\n{done.stdout}"


def _sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        h.update(chunk)
    return h.hexdigest()


def _load_checked(directory: Path, key: str):
    """The cached library `key` loaded, or None if missing, foreign or corrupt (then removed if ours)."""
    so, digest = directory / f"{key}.so", directory / f"{key}.sha256"
    try:
        fd = os.open(so, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP):
            return None
        raise
    try:
        if _distrust(os.fstat(fd), str(so), directory=False):
            return None
        try:
            dfd = os.open(digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            if _distrust(os.fstat(dfd), str(digest), directory=False):
                return None
            want = os.read(dfd, 128).decode("ascii", "replace").strip()
        finally:
            os.close(dfd)
        if _sha256_fd(fd) != want:
            for f in (so, digest):  # corrupt or half written: rebuilt by the caller
                f.unlink(missing_ok=True)
            return None
        # The descriptor just hashed is the file loaded (no second lookup of the path). It stays open
        # for the process: the dynamic loader knows a library by its name, and a closed descriptor's
        # number reused for another library would name the first one (dlopen would return it).
        if not os.path.isdir("/proc/self/fd"):
            return ctypes.CDLL(str(so), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        lib = ctypes.CDLL(f"/proc/self/fd/{fd}", mode=os.RTLD_NOW | os.RTLD_LOCAL)
        _OPEN_FDS.append(fd)
        fd = -1
        return lib
    finally:
        if fd >= 0:
            os.close(fd)


def _run(command: list, cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"krang_kernels.jax: {' '.join(command[:1])} failed ({done.returncode}):\n"
                           f"{(done.stderr or done.stdout)[-4000:]}")


def _build(key: str, build) -> ctypes.CDLL:
    """The library `key` from the cache, else built by build(tmpdir) -> path of the .so, stored, loaded."""
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        directory = _directory()
        with _file_lock(directory, key):
            lib = _build_locked(directory, key, build)
        _LOADED[key] = lib
        return lib


@contextlib.contextmanager
def _file_lock(directory: Path, key: str):
    """flock() on directory/<key>.lock: one process checks, builds and replaces a library at a time (a
    reader between the two renames of a builder would see a new digest beside an old library)."""
    fd = os.open(directory / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if this process dies
        yield
    finally:
        os.close(fd)


def _build_locked(directory: Path, key: str, build) -> ctypes.CDLL:
    lib = _load_checked(directory, key)
    if lib is None:
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))  # 0700 by mkdtemp
        try:
            so = build(tmp)
            with open(so, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            os.chmod(so, 0o700)
            (tmp / "digest").write_text(digest + "\n", encoding="ascii")
            os.rename(tmp / "digest", directory / f"{key}.sha256")
            os.rename(so, directory / f"{key}.so")  # atomic: all of the file or none
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        lib = _load_checked(directory, key)
        if lib is None:
            raise RuntimeError(f"krang_kernels.jax: the library just built in {directory} does not verify")
    return lib


def shim(include_dir: str, jaxlib_version: str) -> ctypes.CDLL:
    """The FFI handler library (KrangKernelCall), for this jaxlib's FFI headers."""
    cxx = os.environ.get("CXX", "c++")
    source = SHIM_SOURCE.read_bytes()
    key = hashlib.sha256(b"\0".join([b"shim", source, jaxlib_version.encode(), include_dir.encode(),
                                     _compiler_id(cxx).encode(), " ".join(CXX_FLAGS).encode()])).hexdigest()

    def build(tmp: Path) -> Path:
        (tmp / "kernel_call.cc").write_bytes(source)  # the bytes hashed are the bytes compiled
        _run([cxx, *CXX_FLAGS, "-shared", "-I", include_dir, "kernel_call.cc", "-o", "shim.so"], tmp)
        return tmp / "shim.so"
    return _build(key, build)


_PARTS = re.compile(rb"^#define KKNPARTS (\d+)$", re.M)


def robot_library(stem: str, c_text: bytes, h_text: bytes) -> ctypes.CDLL:
    """A robot's kernels (NAME_kernels.c and .h) as a shared library exporting every kernel."""
    cc = os.environ.get("CC", "cc")
    flags = C_FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else [])
    key = hashlib.sha256(b"\0".join([b"robot", stem.encode(), c_text, h_text, _compiler_id(cc).encode(),
                                     " ".join(flags).encode(), _cpu().encode()])).hexdigest()
    match = _PARTS.search(c_text)
    parts = list(range(1, int(match.group(1)) + 1)) if match else [None]

    def build(tmp: Path) -> Path:
        (tmp / f"{stem}.c").write_bytes(c_text)
        (tmp / f"{stem}.h").write_bytes(h_text)

        def part(k):  # the parts concurrently, as the module build does (docs/c-abi.md "Parts")
            obj = f"part{k}.o"
            _run([cc, *flags, *([f"-DKKPART={k}"] if k is not None else []), "-c", f"{stem}.c", "-o", obj], tmp)
            return obj
        with ThreadPoolExecutor(max_workers=max(1, min(len(parts), os.cpu_count() or 1))) as pool:
            objects = list(pool.map(part, parts))
        # -Bsymbolic-functions: the library's own calls never reach a same-named kernel loaded before it
        link = ["-Wl,-Bsymbolic-functions"] if sys.platform.startswith("linux") else []
        _run([cc, "-shared", *objects, "-o", "robot.so", *link, "-lm"], tmp)
        return tmp / "robot.so"
    return _build(key, build)

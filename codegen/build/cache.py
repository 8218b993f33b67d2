"""A per-user cache of generated and built robot modules.

An entry is keyed by everything that decides its files: the content hash of
the input, the generation options, the generator's source digest
(codegen.support.digest: its sources, templates and runtime files) and version,
the Python, NumPy, Cython and setuptools the extension was built with, the C
compiler (its path and `--version`) and every environment variable the build
reads (describe_build). Layout under cache_root() (XDG_CACHE_HOME/krang-kernels,
default ~/.cache/krang-kernels; KRANG_KERNELS_CACHE overrides):

    v1/<key>/                    a finished entry: the files and manifest.json
    v1/<key>.lock                flock()ed while an entry is built (released by
                                 the kernel if the builder dies)
    v1/.build-OWNER-PID-XXXX/    an entry being built, renamed to v1/<key> in one
                                 step when complete (os.rename of a directory is atomic)

The cache is a trust boundary: an entry's key is computable by anyone, and its
extension runs in the caller's process. So, as pip and ccache do, the cache is
used only if the root and v1 are real directories (not links) of the calling
user that nobody else may write; every directory it creates is 0700 whatever the
umask. Otherwise get_or_build raises CacheUnusable (the caller warns in one line
and builds in a private temporary directory), as it does when the cache cannot
be written (read-only, full). Entries, manifests, files and the lock are opened
without following links, through the directory descriptors checked before them,
and each must belong to the user and be writable by nobody else.

manifest.json holds the key and the SHA-256 of every file; it is bounded (size,
nesting) and its `module` and `extension` are plain names among the hashed files.
An entry is used only after its manifest verifies (every file present with its
hash); a corrupt, half-deleted or foreign entry (a link, another owner's) is
moved aside and rebuilt. Two processes asking for the same missing entry: one
builds under the lock, the other waits on it and then uses the finished entry.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from pathlib import Path

from ..support.workdirs import owner_tag, reap_dead

FORMAT = 1
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 1 << 20  # ours are a few KB; a bigger one is not ours
MAX_MANIFEST_DEPTH = 16  # ours nest 3 deep; json.loads recurses per level
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The cache's storage refused a write: the build goes elsewhere, not the error to the user.
_STORAGE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM}
_FULL_TEXTS = ("No space left on device", "Disk quota exceeded", "Read-only file system")
LOW_SPACE = 64 << 20  # bytes free under which a filesystem is called full


class CacheUnusable(Exception):
    """The module cache cannot be used (not trusted, not writable, full); str(): one
    line naming the directory and why. The caller builds privately instead."""


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


# ----------------------------------------------------------------------------
# Trust: ownership and modes, checked on open descriptors
# ----------------------------------------------------------------------------

def _distrust(st: os.stat_result, what: str, directory: bool) -> str | None:
    """Why an object (fstat of an open descriptor) is not the user's own; None if it is."""
    kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
    if not kind_ok:
        return f"{what} is not a {'directory' if directory else 'regular file'}"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{what} belongs to uid {st.st_uid}, not to this user (uid {os.getuid()})"
    if st.st_mode & 0o022:
        return f"{what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _open_dir(name, what: str, dir_fd=None) -> int:
    """A descriptor of a trusted directory (not followed if a link); CacheUnusable otherwise."""
    try:
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    except OSError as exc:
        reason = "is a symbolic link" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else f"cannot be opened: {exc.strerror}"
        raise CacheUnusable(f"{what} {reason}") from None
    reason = _distrust(os.fstat(fd), what, directory=True)
    if reason:
        os.close(fd)
        raise CacheUnusable(reason)
    return fd


def _make_private_dirs(path: Path) -> None:
    """Create `path` and its missing parents as 0700 directories (mkdir's mode is
    masked by the umask, so set it again on the directory just made)."""
    missing = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue  # made meanwhile: checked like any existing directory
        fd = os.open(d, _DIR)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _version_dir(root: Path):
    """The descriptor of root/v<FORMAT>, created if missing (0700), root and it both
    trusted; root is checked before anything is created in it."""
    name = f"v{FORMAT}"
    try:
        _make_private_dirs(root)
    except OSError as exc:
        raise CacheUnusable(f"the module cache {root} cannot be created: {exc.strerror or exc}") from None
    rfd = _open_dir(root, f"the module cache {root}")
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=rfd)
            made = True
        except FileExistsError:
            made = False
        except OSError as exc:
            raise CacheUnusable(f"the module cache {root} cannot be written: {exc.strerror or exc}") from None
        vfd = _open_dir(name, f"the module cache's {root / name}", dir_fd=rfd) if not made else \
            os.open(name, _DIR, dir_fd=rfd)
        if made:
            os.fchmod(vfd, 0o700)
    finally:
        os.close(rfd)
    try:
        yield vfd
    finally:
        os.close(vfd)


# ----------------------------------------------------------------------------
# Reading an entry
# ----------------------------------------------------------------------------

def _plain_name(name) -> bool:
    return (isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name
            and not name.startswith("."))


def _open_own(name: str, dir_fd: int, directory: bool) -> int | None:
    """A descriptor of the user's own regular file or directory `name` in dir_fd (not
    followed if a link, checked on the descriptor); None if it is not that."""
    try:
        fd = os.open(name, _DIR if directory else _FILE, dir_fd=dir_fd)
    except OSError:
        return None
    if _distrust(os.fstat(fd), name, directory=directory):
        os.close(fd)
        return None
    return fd


def _open_file(name: str, dir_fd: int) -> int | None:
    """A descriptor of the user's regular file `name` in dir_fd; None if not."""
    return _open_own(name, dir_fd, directory=False)


def _sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while block := os.read(fd, 1 << 20):
        h.update(block)
    return h.hexdigest()


def _json_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings (checked before json.loads recurses)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _load_manifest(efd: int, key: str) -> dict | None:
    """The entry's manifest, bounded and of the expected shape; None if not."""
    fd = _open_file(MANIFEST, efd)
    if fd is None:
        return None
    try:
        data = os.read(fd, MAX_MANIFEST_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_MANIFEST_BYTES:
        return None
    try:
        text = data.decode("utf-8")
        if _json_depth(text) > MAX_MANIFEST_DEPTH:
            return None
        manifest = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("key") != key:
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not files or not all(
            _plain_name(n) and isinstance(d, str) and re.fullmatch(r"[0-9a-f]{64}", d) for n, d in files.items()):
        return None
    # what the caller loads must be one of the hashed files, named plainly
    module, extension = manifest.get("module"), manifest.get("extension")
    if module is not None and not (isinstance(module, str) and _IDENTIFIER.fullmatch(module)):
        return None
    if extension is not None and not (_plain_name(extension) and extension in files):
        return None
    warns = manifest.get("warnings", [])
    if not isinstance(manifest.get("summary", ""), str) or not (
            isinstance(warns, list) and all(isinstance(w, str) for w in warns)):
        return None
    return manifest


def _verify(efd: int, key: str) -> dict | None:
    manifest = _load_manifest(efd, key)
    if manifest is None:
        return None
    for name, digest in manifest["files"].items():
        fd = _open_file(name, efd)
        if fd is None:
            return None
        try:
            if _sha256_fd(fd) != digest:
                return None
        except OSError:
            return None
        finally:
            os.close(fd)
    return manifest


def _open_entry(vfd: int, key: str) -> int | None:
    """A descriptor of the entry directory `key` if it is the user's own; None otherwise."""
    return _open_own(key, vfd, directory=True)


def _read(vfd: int, key: str) -> dict | None:
    efd = _open_entry(vfd, key)
    if efd is None:
        return None
    try:
        return _verify(efd, key)
    finally:
        os.close(efd)


def read_manifest(entry: Path, key: str) -> dict | None:
    """The manifest of a complete, intact entry for `key` (the entry directory,
    its manifest and files the user's own, every hash right); None if anything is off."""
    try:
        pfd = os.open(Path(entry).parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read(pfd, Path(entry).name) if Path(entry).name == key else None
    finally:
        os.close(pfd)


def open_verified(entry: Path, key: str, name: str) -> int:
    """A descriptor of the file `name` of the entry (opened once, hashed from that
    descriptor against the entry's verified manifest), for loading exactly the bytes
    checked. The chain root/v1/entry is checked again on descriptors. The caller closes
    it. CacheUnusable / ValueError if the entry is not the trusted one it was."""
    entry = Path(entry)
    with _version_dir(entry.parent.parent) as vfd:
        efd = _open_entry(vfd, entry.name)
        if efd is None:
            raise ValueError(f"module cache entry {entry} is not this user's directory")
        try:
            manifest = _load_manifest(efd, key)
            if manifest is None or name not in manifest["files"]:
                raise ValueError(f"module cache entry {entry}: {name} is not in its manifest")
            fd = _open_file(name, efd)
            if fd is None or _sha256_fd(fd) != manifest["files"][name]:
                if fd is not None:
                    os.close(fd)
                raise ValueError(f"module cache entry {entry}: {name} does not match its manifest")
            return fd
        finally:
            os.close(efd)


# ----------------------------------------------------------------------------
# Building an entry
# ----------------------------------------------------------------------------

def _discard(vfd: int, vdir: Path, name: str) -> None:
    """Remove a bad entry: a link or a file at once, a directory moved aside first
    (one rename, so no reader sees it half-deleted) and then deleted."""
    try:
        st = os.lstat(name, dir_fd=vfd)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=vfd)
        return
    trash = tempfile.mkdtemp(prefix=f".trash-{owner_tag()}-{os.getpid()}-", dir=vdir)
    try:
        os.rename(name, os.path.join(trash, "entry"), src_dir_fd=vfd)
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _remove_dead_builds(root: Path) -> None:
    """Build and trash directories of this owner's processes that died (no `finally` ran)."""
    for kind in (".build", ".trash"):
        reap_dead(root, f"{kind}-{owner_tag()}-")


@contextlib.contextmanager
def _locked(vfd: int, key: str):
    """flock on v1/<key>.lock: created 0600, never through a link (a planted link
    would make this process create or open a file elsewhere)."""
    name = f"{key}.lock"
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o600, dir_fd=vfd)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.unlink(name, dir_fd=vfd)  # a link is no live process's lock (none opens one)
        fd = os.open(name, flags | os.O_EXCL, 0o600, dir_fd=vfd)
    try:
        reason = _distrust(os.fstat(fd), f"the lock {name}", directory=False)
        if reason:
            raise CacheUnusable(reason)
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _private_files(stage: Path) -> dict:
    """The staged files' hashes, each made the user's only (whatever the umask)."""
    files = {}
    for p in sorted(stage.iterdir()):
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            os.chmod(p, (stat.S_IMODE(st.st_mode) | 0o600) & 0o700)
            fd = os.open(p, _FILE)
            try:
                files[p.name] = _sha256_fd(fd)
            finally:
                os.close(fd)
    return files


def free_bytes(path) -> int | None:
    """Bytes available to this user on the filesystem of `path` (None if unknown)."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


def storage_problem(exc: BaseException, paths) -> str | None:
    """If `exc` is a refused write under one of `paths` (read-only, no permission) or
    a build that ran out of space: one phrase naming the place (for a full disk: those
    of `paths` whose filesystem is full); None if it is another error."""
    paths = [str(p) for p in paths]
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS - {errno.ENOSPC, errno.EDQUOT}:
        where = os.fsdecode(exc.filename) if exc.filename is not None else None
        if where is None or any(where == p or where.startswith(p.rstrip("/") + "/") for p in paths):
            return f"{where or paths[0]}: {exc.strerror}"
        return None
    full = (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)) or any(
        t in str(exc) for t in _FULL_TEXTS[:2])
    if not full:
        return None
    low = [p for p in paths if (free_bytes(p) or 0) < LOW_SPACE]
    reason = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno else os.strerror(errno.ENOSPC)
    return f"{reason} in {', '.join(low) if low else 'a directory of the build'}"


def get_or_build(key: str, build, extra=None, root: Path | None = None) -> tuple:
    """(entry directory, manifest) of `key`, built first if missing or bad.

    build(directory) writes the entry's files into an empty directory and may
    return a dict merged into the manifest (e.g. the module name). `extra`: more
    manifest fields (the key parts, for people reading the cache). Raises
    CacheUnusable when the cache is not the user's own or cannot take the entry
    (read-only, full): the caller then builds elsewhere."""
    root = Path(root) if root is not None else cache_root()
    vdir = root / f"v{FORMAT}"
    entry = vdir / key
    with _version_dir(root) as vfd:
        manifest = _read(vfd, key)
        if manifest is not None:
            return entry, manifest
        try:
            with _locked(vfd, key):
                manifest = _read(vfd, key)  # another process may have built it meanwhile
                if manifest is not None:
                    return entry, manifest
                _remove_dead_builds(vdir)
                _discard(vfd, vdir, key)
                stage = Path(tempfile.mkdtemp(prefix=f".build-{owner_tag()}-{os.getpid()}-", dir=vdir))
                try:
                    try:
                        info = build(stage) or {}
                    except Exception as exc:  # noqa: BLE001 - only the storage's failures are turned
                        problem = storage_problem(exc, [vdir, tempfile.gettempdir()])
                        if problem and str(vdir) in problem:
                            raise CacheUnusable(f"the module cache {root}: {problem}") from exc
                        if problem:  # the disk is full elsewhere (TMPDIR): say where, not "did not compile"
                            raise RuntimeError(f"the build failed: {problem}, not in the module cache "
                                               f"{root}: {exc}") from exc
                        raise
                    files = _private_files(stage)
                    manifest = {"format": FORMAT, "key": key, **(extra or {}), **info, "files": files}
                    fd = os.open(stage / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                    with open(fd, "w", encoding="utf-8") as f:
                        f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
                    os.rename(stage, entry)
                finally:
                    shutil.rmtree(stage, ignore_errors=True)
        except OSError as exc:  # mkdtemp, the lock, the manifest, the rename: the cache's storage
            problem = storage_problem(exc, [vdir])
            if problem is None:
                raise
            raise CacheUnusable(f"the module cache {root}: {problem}") from exc
    return entry, manifest


# ----------------------------------------------------------------------------
# What an extension is built with (key parts)
# ----------------------------------------------------------------------------

# What distutils, setuptools and sysconfig read from the environment to compile and
# link an extension, and what gcc itself reads (include and library paths); the
# project's own: KRANG_BUILD_DEBUG (-g). KRANG_BUILD_JOBS only changes how many
# compilers run at once, not what they write.
BUILD_ENVIRONMENT = ("CC", "CXX", "CPP", "CFLAGS", "CPPFLAGS", "CXXFLAGS", "LDFLAGS", "LDSHARED", "LDCXXSHARED",
                     "ARCHFLAGS", "AR", "ARFLAGS", "CCSHARED", "OPT", "BASECFLAGS", "PY_CFLAGS", "PY_LDFLAGS",
                     "PY_CPPFLAGS", "PY_CFLAGS_NODIST", "PY_LDFLAGS_NODIST", "CFLAGS_NODIST", "LDFLAGS_NODIST",
                     "MACOSX_DEPLOYMENT_TARGET", "SETUPTOOLS_USE_DISTUTILS", "_PYTHON_SYSCONFIGDATA_NAME",
                     "_PYTHON_HOST_PLATFORM", "CPATH", "C_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX",
                     "COMPILER_PATH", "KRANG_BUILD_DEBUG")
# The interpreter's own build configuration the compiler and linker commands start from.
SYSCONFIG_VARS = ("CC", "CXX", "CFLAGS", "CCSHARED", "LDSHARED", "LDCXXSHARED", "OPT", "BASECFLAGS", "AR",
                  "ARFLAGS", "EXT_SUFFIX", "SOABI")

_TOOLS: dict = {}


def _program(command: str) -> list:
    import shlex
    try:
        return shlex.split(command)
    except ValueError:
        return [command]


def compiler_identity(command: str) -> dict:
    """The program a compiler command runs (its resolved path) and the SHA-256 of its
    `--version` output with the first line for people reading a manifest; cached per
    process by the program's path, size and date."""
    import subprocess

    argv = _program(command) or ["cc"]
    path = shutil.which(argv[0]) or argv[0]
    try:
        st = os.stat(path)
        stamp = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (path, None, None)
    if stamp not in _TOOLS:
        try:
            out = subprocess.run(argv + ["--version"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL).stdout
        except (OSError, subprocess.SubprocessError):
            out = b""
        first = out.decode("utf-8", "replace").strip().splitlines()[:1]
        _TOOLS[stamp] = {"path": stamp[0], "version": first[0] if first else "",
                         "version_sha256": hashlib.sha256(out).hexdigest()}
    return _TOOLS[stamp]


def _version_of(dist: str):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001 - not installed, or broken metadata
        return None


_DESCRIBE = threading.Lock()


def describe_platform() -> dict:
    """Key parts for a compiled extension: what it was built for and with. Under a
    lock: sysconfig fills its variables on first use without one, and a second thread
    meanwhile reads None for EXT_SUFFIX (another key, another build of the same module)."""
    with _DESCRIBE:
        return _describe_platform()


def _describe_platform() -> dict:
    import platform
    import sysconfig
    try:
        import numpy
        numpy_version = numpy.__version__
    except ImportError:
        numpy_version = None
    return {"python": sys.implementation.cache_tag, "python_version": sys.version,
            "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"), "numpy": numpy_version,
            "cython": _version_of("Cython"), "setuptools": _version_of("setuptools"),
            "machine": platform.machine(), **describe_build()}


def describe_build() -> dict:
    """Key parts for the build itself: the environment variables the build reads
    (BUILD_ENVIRONMENT, unset ones left out), the interpreter's compiler
    configuration, and the identity of the compiler and of the linker it runs."""
    import sysconfig

    config = {name: sysconfig.get_config_var(name) for name in SYSCONFIG_VARS}
    env = {name: os.environ[name] for name in BUILD_ENVIRONMENT if name in os.environ}
    cc = os.environ.get("CC") or config["CC"] or "cc"
    ldshared = os.environ.get("LDSHARED") or config["LDSHARED"] or cc
    tools = {"cc": compiler_identity(cc)}
    if _program(ldshared)[:1] != _program(cc)[:1]:
        tools["ldshared"] = compiler_identity(ldshared)
    return {"build_env": env, "sysconfig": config, "compilers": tools}


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

    with _DESCRIBE:  # sysconfig's first use (see describe_platform)
        cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if tuple(cc) not in _NATIVE_TARGET:
        try:
            out = subprocess.run(cc + ["-march=native", "-dM", "-E", "-x", "c", os.devnull],
                                 capture_output=True, timeout=60, check=True).stdout
            _NATIVE_TARGET[tuple(cc)] = hashlib.sha256(b"\n".join(sorted(out.splitlines()))).hexdigest()
        except (OSError, subprocess.SubprocessError):
            _NATIVE_TARGET[tuple(cc)] = ""
    return _NATIVE_TARGET[tuple(cc)]

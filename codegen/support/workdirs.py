"""Temporary directories of a build that do not outlive their run, and the one
rule for removing those a killed run left behind.

    with build_directory() as tmp:
        ...  # Cython's C, the object files; the compiler's own temporaries too

The directory is TMPDIR/krang_pybuild_OWNER_PID_XXXX. While it is in use, TMPDIR
points into it, so that the compiler (gcc, cc1, as: they honour TMPDIR) puts its
temporaries there as well; it is removed on every exit of the block (errors,
KeyboardInterrupt, and SIGTERM/SIGHUP, which the command line turns into an
exception, codegen/support/interrupts.py). A run killed outright (SIGKILL, power loss) cannot
clean up: the next build removes it (`reap_dead`).

`reap_dead` is the only reaper of the package (this module's build directories,
the module cache's build and trash directories, the staging directories of a
commit into an output directory): a directory is a dead run's only if its name
carries this process's owner tag (`owner_tag`: host name and PID namespace), the
directory itself (not a link) belongs to this uid, and the process id in its name
is gone. A pid is only meaningful on its own host and in its own PID namespace:
a build on another NFS client or in another container is never taken for dead.

BUILD_LOCK serializes the builds of one process (threads): a build changes
process-wide state (TMPDIR here, the output capture of codegen/build/log.py).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

PREFIX = "krang_pybuild_"

BUILD_LOCK = threading.RLock()  # re-entrant: import_urdf holds it around a build that takes it again

_OWNER: list = []


def _pid_namespace() -> str:
    """The inode of this process's PID namespace ("" where the platform does not say)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except (OSError, AttributeError):
        return ""


def owner_tag() -> str:
    """This host and PID namespace as a file-name fragment ([A-Za-z0-9-]): the host
    name shortened, with a hash of the whole name (two long names with a common start
    stay apart), then the namespace; a pid in a name means something only here."""
    if not _OWNER:
        node = os.uname().nodename if hasattr(os, "uname") else "host"
        short = re.sub(r"[^A-Za-z0-9]", "-", node)[:24] or "host"
        tag = f"{short}-{hashlib.sha256(node.encode()).hexdigest()[:8]}"
        ns = _pid_namespace()
        _OWNER.append(f"{tag}-ns{ns}" if ns else tag)
    return _OWNER[0]


def _host() -> str:
    """The owner part of a build directory's name (kept under this name for its callers)."""
    return owner_tag()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, OSError, ValueError):  # PermissionError: another user's live process
        return True
    return True


def reap_dead(parent, prefix: str, finish=None) -> list:
    """Remove the directories in `parent` named prefix + PID + ('-' or '_') + ... whose
    run is dead; returns them. `prefix` must end with owner_tag() and a separator (so
    only this host's and PID namespace's runs match); the directory must be a real
    directory of this uid (lstat: a link or another user's directory is never
    followed or removed). finish(path) -> bool replaces the removal (a commit's
    recovery rolls a journal forward first); False leaves the directory."""
    mine = re.compile(re.escape(prefix) + r"(\d+)[-_]")
    uid = os.getuid() if hasattr(os, "getuid") else None
    removed = []
    try:
        entries = list(Path(parent).iterdir())
    except OSError:
        return removed
    for d in sorted(entries):
        m = mine.match(d.name)
        if not m:
            continue
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid):
            continue
        if _alive(int(m.group(1))):
            continue
        if finish is not None:
            if not finish(d):
                continue
        else:
            shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed


def remove_stale(parent=None) -> list:
    """Remove this owner's build directories (see reap_dead) whose process is gone; returns them."""
    return reap_dead(Path(parent or tempfile.gettempdir()), f"{PREFIX}{owner_tag()}_")


def fresh_directory(suffix: str = "") -> str:
    """A new temporary directory named for this host and process (after removing
    the stale ones), so that the next run removes it if this process is killed."""
    remove_stale()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{owner_tag()}_{os.getpid()}_{suffix}")


@contextmanager
def build_directory():
    """A fresh directory for one build (see the module docstring). Holds BUILD_LOCK:
    TMPDIR is the process's, so two threads' builds must not interleave here."""
    with BUILD_LOCK:
        tmp = fresh_directory()
        saved = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = tmp
        try:
            yield tmp
        finally:
            if saved is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved
            shutil.rmtree(tmp, ignore_errors=True)

"""Temporary directories of a Python module build that do not outlive their run.

    with build_directory() as tmp:
        ...  # Cython's C, the object files; the compiler's own temporaries too

The directory is TMPDIR/krang_pybuild_HOST_PID_XXXX. While it is in use, TMPDIR
points into it, so that the compiler (gcc, cc1, as: they honour TMPDIR) puts its
temporaries there as well; it is removed on every exit of the block (errors,
KeyboardInterrupt, and SIGTERM/SIGHUP, which the command line turns into an
exception, codegen/cli.py). A run killed outright (SIGKILL, power loss) cannot
clean up: the next build removes the directories of this host's and this user's
processes that are gone (`remove_stale`).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

PREFIX = "krang_pybuild_"


def _host() -> str:
    node = os.uname().nodename if hasattr(os, "uname") else "host"
    return re.sub(r"[^A-Za-z0-9]", "-", node)[:32] or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, OSError):  # PermissionError: another user's live process
        return True
    return True


def remove_stale(parent=None) -> list:
    """Remove this host's and this user's build directories whose process is gone; returns them."""
    parent = Path(parent or tempfile.gettempdir())
    mine = re.compile(re.escape(f"{PREFIX}{_host()}_") + r"(\d+)_")
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for d in entries:
        m = mine.match(d.name)
        if not m:
            continue
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if d.is_symlink() or not d.is_dir() or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            continue
        if not _alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def fresh_directory(suffix: str = "") -> str:
    """A new temporary directory named for this host and process (after removing
    the stale ones), so that the next run removes it if this process is killed."""
    remove_stale()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{_host()}_{os.getpid()}_{suffix}")


@contextmanager
def build_directory():
    """A fresh directory for one build (see the module docstring)."""
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

"""Committing generated files into an output directory: all of them replaced
together or none, also across a crash (SIGKILL, power loss) at any point.

The protocol, a journal kept in the staging directory:
 1. stage: every file is written into a fresh directory OUT/.codegen-HOST-PID-XXXX
    (the Python build adds its files there too) and synced to disk;
 2. check: every target is absent or a regular file; a directory, link or device of
    that name is the user's, and the run stops with one line, nothing moved or removed;
 3. journal: the names are written to STAGE/.commit (a temporary file, synced, then
    renamed: it exists complete or not at all). From here on the commit is decided;
 4. swap: per name, the old file moves to STAGE/.previous/NAME, the new one into place;
 5. done: the journal goes, then the staging directory with the old files.

Recovery (`recover`, at the start of every commit into OUT): a staging directory of
this host and PID namespace, of this user, whose process is gone is finished. With a
journal, step 4 is completed for every name whose new file is still staged (roll
forward: the new set is complete on disk, so the result is all new); without one,
the run died before deciding and OUT was never touched: the directory is removed.
A live run's directory, another host's, another PID namespace's or another user's
is left alone.

An error during the swap (EIO, a signal turned into an exception by the command
line) rolls back in process: each new file moves back into the stage, each old one
back into place, then the journal goes. A crash during that roll back leaves the
journal, and recovery rolls forward: either way the names are all old or all new.

Not covered: two live runs committing into the same directory at the same moment.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from glob import escape as glob_escape
from pathlib import Path

from ..support import interrupts
from ..support.workdirs import owner_tag, reap_dead

JOURNAL = ".commit"
PREVIOUS = ".previous"


def _write(path: Path, data: bytes):
    """Write and sync one staged file (one place, so that tests can make a write fail)."""
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _sync(path: Path):
    """Sync a file or a directory (its entries: the renames) to disk; best effort
    where the platform cannot open directories."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def stage_prefix() -> str:
    """Staging directories are named .codegen-OWNER-PID-XXXX (OWNER: host name and PID
    namespace, codegen.support.workdirs.owner_tag), so that a later run of the same
    owner can tell one left behind by a killed run (its process is gone)."""
    return f".codegen-{owner_tag()}-"


def _journal_names(stage: Path) -> list:
    """The names a journal lists, each a plain file name (a planted journal cannot
    name a path elsewhere); ValueError if it is not one we would write."""
    names = json.loads((stage / JOURNAL).read_text(encoding="utf-8"))["names"]
    if not isinstance(names, list) or not all(
            isinstance(n, str) and n == Path(n).name and n not in ("", ".", "..") and not n.startswith(".")
            for n in names):
        raise ValueError("not a journal of this tool")
    return names


def _swap_in(out_dir: Path, stage: Path, name: str):
    """Step 4 for one name; idempotent, so that recovery can repeat it."""
    new, old, target = stage / name, stage / PREVIOUS / name, out_dir / name
    if not os.path.lexists(new):
        return  # already in place
    if os.path.lexists(target) and not os.path.lexists(old):
        os.replace(target, old)
    os.replace(new, target)


def recover(out_dir: Path):
    """Finish or remove the staging directories of this owner's dead runs (see the
    module docstring; which runs are dead: codegen.support.workdirs.reap_dead)."""
    out_dir = Path(out_dir)

    def finish(stage: Path) -> bool:
        if (stage / JOURNAL).is_file():
            try:
                names = _journal_names(stage)
            except (OSError, ValueError, KeyError, TypeError):
                return False  # not ours to finish: leave it for a human
            (stage / PREVIOUS).mkdir(exist_ok=True)
            for name in names:
                _swap_in(out_dir, stage, name)
            _sync(out_dir)
            os.unlink(stage / JOURNAL)
        shutil.rmtree(stage, ignore_errors=True)
        return True

    reap_dead(out_dir, stage_prefix(), finish)


def _check_targets(out_dir: Path, names):
    from ..read.model import ModelError  # here: a crash test's child imports this module without SymPy

    for name in names:
        target = out_dir / name
        if os.path.lexists(target) and (target.is_symlink() or not target.is_file()):
            kind = "a link" if target.is_symlink() else "a directory" if target.is_dir() else "not a regular file"
            raise ModelError(f"--out {out_dir}: {name} is {kind}, not a file this tool wrote; "
                             f"move it away (nothing was changed)")


def _write_journal(stage: Path, names):
    tmp = stage / (JOURNAL + ".tmp")
    _write(tmp, json.dumps({"names": names}).encode())
    os.replace(tmp, stage / JOURNAL)
    _sync(stage)


def _roll_back(out_dir: Path, stage: Path, done):
    """Undo the swaps of `done` (new files back into the stage, old ones back), newest first."""
    for name in reversed(done):
        target, old = out_dir / name, stage / PREVIOUS / name
        if os.path.lexists(target) and not os.path.lexists(stage / name):
            os.replace(target, stage / name)
        if os.path.lexists(old):
            os.replace(old, target)
    os.unlink(stage / JOURNAL)


# What a Python build leaves next to NAME_kernels.h/.c (module_build): stale
# once the C is replaced by a generation without it (an old module would serve
# the old kernels next to the new header).
BUILD_PRODUCTS = (".pyx", ".pyi", ".so", ".pyd")


def stale_products(out_dir: Path, stem: str, new_names) -> list:
    """The build products of `stem` (NAME_kernels) in out_dir that a commit of new_names leaves behind."""
    found = [p.name for p in Path(out_dir).glob(f"{glob_escape(stem)}.*") if p.suffix in BUILD_PRODUCTS]
    return sorted(n for n in found if n not in set(new_names))


def write_atomically(out_dir: Path, files: dict, build=None, stale_stem=None) -> list:
    """Write `files` (name -> text) into out_dir all or nothing. `build(stage)`
    may add files to the staging directory before the commit. stale_stem
    (NAME_kernels): the build products of that name not in the new set are
    removed once the new files are in (a crash between leaves them, never a
    half-replaced set). Returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    recover(out_dir)
    stage = Path(tempfile.mkdtemp(prefix=f"{stage_prefix()}{os.getpid()}-", dir=out_dir))
    decided = False  # a journal exists: the stage must not be removed until it is settled
    try:
        for name, text in files.items():
            _write(stage / name, text.encode("utf-8"))
        if build is not None:
            build(stage)
        names = sorted(p.name for p in stage.iterdir())
        for name in names:  # the build's files too
            _sync(stage / name)
        _check_targets(out_dir, names)
        (stage / PREVIOUS).mkdir()
        interrupts.check()  # a stop the run lost in a finalizer: not committed (codegen/support/interrupts.py)
        _write_journal(stage, names)
        decided = True
        done = []
        try:
            for name in names:
                done.append(name)
                _swap_in(out_dir, stage, name)
        except BaseException:  # an error or a signal: put the old files back
            _roll_back(out_dir, stage, done)
            decided = False
            raise
        _sync(out_dir)
        os.unlink(stage / JOURNAL)
        decided = False
        for name in stale_products(out_dir, stale_stem, names) if stale_stem else ():
            os.replace(out_dir / name, stage / PREVIOUS / name)  # removed with the stage
        return [out_dir / n for n in names]
    finally:
        if not decided:
            shutil.rmtree(stage, ignore_errors=True)

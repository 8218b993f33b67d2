"""Reading an untrusted input file: regular files only, bounded, never blocking.

    read_input(path, what, limit) -> bytes

Every reader of codegen/read goes through it (URDFs, model files, parameter
files), each with its own cap. A path that names a FIFO, a device (/dev/zero,
/dev/urandom, a terminal), a directory or a socket, directly or through a
symlink, is refused at once with one ModelError: opening is non-blocking (a
FIFO without a writer would block a plain open), the type is that of the open
file descriptor (no window between a check and the read), and no more than
limit + 1 bytes are ever read (a file that grows after its size was checked is
refused too).
"""
from __future__ import annotations

import os
import stat

from .expr import ModelError

__all__ = ["read_input", "read_input_text"]

# What a path that is not a regular file is, for the message.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode, what: str, shown: str) -> ModelError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return ModelError(f"cannot read {what} {shown}: not a regular file ({kind})")


def read_input(path, what: str, limit: int) -> bytes:
    """The whole content of the regular file at `path`, at most `limit` bytes.

    `what` names the input in the message ("URDF", "model file", ...). Raises
    codegen.read.model.ModelError, one line naming `what` and `path`, when the
    path cannot be opened, is not a regular file (a FIFO, a device, a directory,
    a socket, or a symlink to one: "not a regular file", without blocking and
    without reading from it) or holds more than `limit` bytes ("larger than").

    For a cache keyed by a URDF's content: read it once with
    read_input(path, "URDF", codegen.read.urdf_parse.MAX_BYTES), the reader's
    own cap, hash those bytes, and build from the same bytes
    (codegen.read.urdf.urdf_robot(data, ...)) rather than reading the path
    again, so the key is that of what was built and a hostile path fails here,
    before any hashing or locking, as the reader itself would fail.
    """
    try:
        shown = os.fsdecode(path)
    except TypeError:
        raise ModelError(f"cannot read {what} {path!r}: not a path") from None
    try:
        # Refuse what is visibly not a file before opening it: opening some devices
        # has effects of its own (a tape rewinds, a serial line raises DTR).
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ModelError(f"cannot read {what} {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(mode, what, shown)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {what} {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        st = os.fstat(fd)  # the file actually opened (the path may have been replaced since)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(st.st_mode, what, shown)
        if st.st_size > limit:
            raise ModelError(f"cannot read {what} {shown}: larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew after fstat
            raise ModelError(f"cannot read {what} {shown}: larger than {limit} bytes")
    except OSError as exc:
        raise ModelError(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_input_text(path, what: str, limit: int) -> str:
    """read_input decoded as UTF-8 (no newline translation: a model's hash is of its file)."""
    data = read_input(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"cannot read {what} {os.fsdecode(path)}: not UTF-8 ({exc.reason} at byte {exc.start})") \
            from None

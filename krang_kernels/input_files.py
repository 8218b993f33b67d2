"""Reading an untrusted input file: regular files only, bounded, never blocking;
and a parameter file's numbers. NumPy and the standard library only: the
runtime (load_params of every module) and the generator (codegen.read, which
passes its ModelError as `error`) share these rules.

    read_input(path, what, limit) -> bytes

Every reader goes through it (URDFs, model files, parameter files: the
generator's codegen.read and the modules' load_params), each with its own cap. A path that names a FIFO, a device (/dev/zero,
/dev/urandom, a terminal), a directory or a socket, directly or through a
symlink, is refused at once with one ModelError: opening is non-blocking (a
FIFO without a writer would block a plain open), the type is that of the open
file descriptor (no window between a check and the read), and no more than
limit + 1 bytes are ever read (a file that grows after its size was checked is
refused too).
"""
from __future__ import annotations

import math
import os
import stat
from pathlib import Path


__all__ = ["read_input", "read_input_text", "parse_toml", "param_values", "load_param_values", "MAX_FILE_BYTES"]

MAX_FILE_BYTES = 1 << 20  # model and parameter files (1 MiB)
ACTUATOR = ("Ia", "Fv", "Fc")  # the actuator parameters: 0 when a parameter file omits them

# What a path that is not a regular file is, for the message.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode, what: str, shown: str, error):
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return error(f"cannot read {what} {shown}: not a regular file ({kind})")


def read_input(path, what: str, limit: int, error=ValueError) -> bytes:
    """The whole content of the regular file at `path`, at most `limit` bytes.

    `what` names the input in the message ("URDF", "model file", ...). Raises
    `error` (a ValueError; the generator passes its ModelError), one line naming `what` and `path`, when the
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
        raise error(f"cannot read {what} {path!r}: not a path") from None
    try:
        # Refuse what is visibly not a file before opening it: opening some devices
        # has effects of its own (a tape rewinds, a serial line raises DTR).
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise error(f"cannot read {what} {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(mode, what, shown, error)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise error(f"cannot read {what} {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        st = os.fstat(fd)  # the file actually opened (the path may have been replaced since)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(st.st_mode, what, shown, error)
        if st.st_size > limit:
            raise error(f"cannot read {what} {shown}: larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew after fstat
            raise error(f"cannot read {what} {shown}: larger than {limit} bytes")
    except OSError as exc:
        raise error(f"cannot read {what} {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_input_text(path, what: str, limit: int, error=ValueError) -> str:
    """read_input decoded as UTF-8 (no newline translation: a model's hash is of its file)."""
    data = read_input(path, what, limit, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} {os.fsdecode(path)}: not UTF-8 ({exc.reason} at byte {exc.start})") \
            from None


def show(name) -> str:
    """A name or value for an error message: repr (one line), not too long."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def parse_toml(text: str, source: str, error=ValueError) -> dict:
    """TOML text -> dict; one `error` line for anything it cannot be."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: not valid TOML: {exc}".replace("\n", " ")) from None
    except (RecursionError, MemoryError):  # tomllib recurses on nested arrays/tables
        raise error(f"{source}: not valid TOML: nested too deeply") from None


def _finite(v) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # a TOML int beyond the float range
        return False


def param_values(raw: dict, names, source: str, error=ValueError) -> list:
    """A parameter file's [values] table (in `raw`, the parsed TOML) as floats in
    `names` order: unknown names, values that are not finite numbers (an
    expression is text: parameter files hold numbers) and missing parameters are
    `error`s naming them; the actuator parameters (Ia, Fv, Fc) default to 0."""
    values = raw.get("values")
    if not isinstance(values, dict):
        raise error(f"{source}: needs a [values] table")
    unknown = set(values) - set(names)
    if unknown:
        shown = ", ".join(show(n) for n in sorted(unknown)[:5])
        raise error(f"{source}: {len(unknown)} unknown parameter(s): {shown}")
    out = []
    for n in names:
        if n in values:
            v = values[n]
            if isinstance(v, str):  # model files take expressions; parameter files take their values
                raise error(f"{source}: {n} = {show(v)} is not a number (parameter files hold numbers; "
                            f"an expression belongs in the model file, read by the generator: "
                            f"pip install '.[generate]')")
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise error(f"{source}: {n} = {show(v)} is not a number")
            if not _finite(v):
                raise error(f"{source}: {n} = {show(v)} is not a finite number")
            out.append(float(v))
        elif n.split("_", 1)[0] in ACTUATOR:
            out.append(0.0)
        else:
            raise error(f"{source}: missing value for {n}")
    return out


def load_param_values(path, names) -> list:
    """The values of a parameter file (TOML, a [values] table name -> number, the
    generator's format) in `names` order: read_input's rules, then param_values'.
    ValueError names the fault; physical validity is checked by the caller."""
    source = f"{Path(path).name}" if isinstance(path, (str, os.PathLike)) else repr(path)
    raw = parse_toml(read_input_text(path, "parameter file", MAX_FILE_BYTES), f"parameter file {source}")
    return param_values(raw, names, source)

"""Compiling a robot's CasADi external functions: NAME_kernels.c (its parts concurrently) and
NAME_casadi.c (codegen/emit/casadi_external.py) into one shared library, libNAME_casadi.so.

Flags: the module build's native ones (codegen/build/flags.py: -O3 -std=c99 -ffp-contract=fast,
-march=native unless portable), -fPIC, -fvisibility=hidden (only the CasADi API is exported:
the wrapper marks it) and the kernels under the symbol prefix KERNEL_PREFIX, so that the
externals NAME_forward_dynamics ... and the kernels of the same names link together. The
wrapper is compiled with -Wall -Wextra -Werror -pedantic: it is small and ours, a warning is a bug.
The library replaces out_dir/libNAME_casadi.so in one rename (a process that loaded the old one
keeps it); a library already there built from the same sources, flags and compiler is kept
(.libNAME_casadi.key beside it: the build's key and the library's SHA-256).
"""
from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..emit.casadi_external import KERNEL_PREFIX
from ..support.errors import BuildError
from .flags import FLAGS, NATIVE, X86_FLAGS

STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
_PARTS = re.compile(r"^#define KKNPARTS (\d+)$", re.M)


def library_name(prefix: str) -> str:
    return f"lib{prefix}_casadi.so"


def c_flags(native: bool = True) -> list:
    """The kernels' and the wrapper's flags (FLAGS without the portable target_clones when native)."""
    base = [f for f in FLAGS if f != "-fvisibility=hidden" and not (native and f == "-DKK_TARGET_CLONES")]
    return base + (X86_FLAGS if platform.machine() in ("x86_64", "AMD64") else []) + (NATIVE if native else []) \
        + ["-fPIC", "-fvisibility=hidden"]


def _run(command: list, cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"building the CasADi library: {' '.join(command[:2])} ... failed ({done.returncode}):\n"
                         f"{(done.stderr or done.stdout)[-4000:]}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _build_key(texts, cc: str, flags) -> str:
    """What the library is made of: the three sources, the flags and the compiler (its --version)."""
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"building the CasADi library needs a C compiler ({cc}): {exc}") from None
    parts = [t.encode("utf-8") for t in texts] + [" ".join(flags).encode(), cc.encode(), version.encode()]
    return _sha256(b"\0".join(parts))


def _up_to_date(library: Path, record: Path, key: str) -> bool:
    """The library in place was built from `key` and is the file recorded then (its SHA-256)."""
    try:
        want_key, want_sha = record.read_text(encoding="ascii").split()
        return want_key == key and _sha256(library.read_bytes()) == want_sha
    except (OSError, ValueError):
        return False


def build_casadi_library(c_text: str, h_text: str, wrapper: str, prefix: str, out_dir, native: bool = True) -> Path:
    """out_dir/libPREFIX_casadi.so from NAME_kernels.c and .h (their text) and NAME_casadi.c
    (`wrapper`); NAME_casadi.c is written beside it. Returns the library's path. Not rebuilt when
    out_dir/.libPREFIX_casadi.key says the library there was built from the same sources, flags
    and compiler and the library's bytes are still the ones recorded."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    stem = f"{prefix}_kernels"
    define = f"-D{stem}_prefix={KERNEL_PREFIX}"
    flags = c_flags(native)
    key = _build_key((c_text, h_text, wrapper), cc, flags)
    record = out_dir / f".{library_name(prefix)[:-3]}.key"
    if _up_to_date(out_dir / library_name(prefix), record, key):
        return out_dir / library_name(prefix)
    match = _PARTS.search(c_text)
    parts = list(range(1, int(match.group(1)) + 1)) if match else [None]
    with tempfile.TemporaryDirectory(prefix=".casadi-", dir=out_dir) as tmp:
        tmp = Path(tmp)
        (tmp / f"{stem}.c").write_text(c_text, encoding="utf-8")
        (tmp / f"{stem}.h").write_text(h_text, encoding="utf-8")
        (tmp / f"{prefix}_casadi.c").write_text(wrapper, encoding="utf-8")

        def part(k):
            obj = f"part{k}.o"
            _run([cc, *flags, define, *([f"-DKKPART={k}"] if k is not None else []), "-c", f"{stem}.c", "-o", obj],
                 tmp)
            return obj

        def wrap():
            _run([cc, *flags, *STRICT, define, "-c", f"{prefix}_casadi.c", "-o", "casadi.o"], tmp)
            return "casadi.o"
        jobs = max(1, min(len(parts) + 1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(wrap)] + [pool.submit(part, k) for k in parts]
            objects = [f.result() for f in futures]
        link = ["-Wl,-Bsymbolic-functions"] if sys.platform.startswith("linux") else []
        name = library_name(prefix)
        _run([cc, "-shared", *objects, "-o", name, *link, "-lm"], tmp)
        shutil.copyfile(tmp / f"{prefix}_casadi.c", tmp / "wrapper.c")
        os.replace(tmp / "wrapper.c", out_dir / f"{prefix}_casadi.c")
        (tmp / "key").write_text(f"{key} {_sha256((tmp / name).read_bytes())}\n", encoding="ascii")
        os.replace(tmp / name, out_dir / name)
        os.replace(tmp / "key", record)
    return out_dir / name


def casadi_from_directory(model, directory, name: str, kernels=None, native: bool = True) -> Path:
    """libNAME_casadi.so in `directory`, from the NAME_kernels.c and .h there (python -m codegen --out,
    codegen.export) of `model` (its records: the tree and parameters the sparsity comes from) with
    C name `name`, built with the optional kernels `kernels` (None: all)."""
    from ..emit.abi import describe
    from ..emit.casadi_external import render_casadi
    from ..emit.cnames import cnames

    names = cnames(model, name)
    abi = describe(model, names=names, kernels=kernels)
    stem = f"{names.prefix}_kernels"
    directory = Path(directory)
    wrapper = render_casadi(model, abi, names, f"{stem}.h")
    return build_casadi_library((directory / f"{stem}.c").read_text(encoding="utf-8"),
                                (directory / f"{stem}.h").read_text(encoding="utf-8"), wrapper, names.prefix,
                                directory, native)

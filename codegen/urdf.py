"""A robot's compiled dynamics module from its URDF in one call, cached.

    import codegen
    panda = codegen.import_urdf("panda.urdf", end_effectors=["panda_hand"])
    A = panda.compute_A(q)

The first call for a URDF and options generates the C, builds the Python
module (seconds for an arm, minutes for 48 DOF: docs/build_times.md) and
stores it in the per-user cache (codegen.build.cache: XDG_CACHE_HOME or
~/.cache/krang-kernels). Any later call, in any process, verifies the entry's
manifest and imports it (well under a second); the same call again in one
process returns the module already imported. The key is the URDF's content
(not its path or date), the options (UrdfOptions) and the generator's source
digest and version, so an edited URDF, another option or another generator
makes a new entry and never reuses an old one. `python -m codegen ROBOT.urdf`
uses the same cache (--no-cache bypasses it).

The build prints one summary line on stderr (codegen.read.urdf_summary: NAME,
friction, mimic joints, snapping); its warnings (no end effector) are Python warnings.
Named import_urdf, not load_urdf: codegen.read.urdf.load_urdf is the reader
(URDF -> model records), this returns an imported module.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import stat
import sys
import warnings
from pathlib import Path

from . import __version__
from .build.cache import CacheUnusable, describe_platform, get_or_build, open_verified
from .build.export import cmake_files, export
from .support.digest import source_digest
from .support.options import UrdfOptions
from .support.workdirs import BUILD_LOCK, fresh_directory

_IMPORTED: dict = {}  # cache key -> module imported by this process
_LOADED_FDS: list = []  # descriptors extensions were loaded through (see _import_entry)
EXTENSIONS = (".so", ".pyd")
# codegen.read.urdf_parse.MAX_BYTES, the reader's cap (not imported: codegen.read
# imports SymPy, which a cache hit must not; tests/test_cache_trust.py checks they agree)
URDF_CAP = 10 * 1024 * 1024


class CacheWarning(UserWarning):
    """The module cache was not used (not the user's own, read-only, full): built privately."""


def read_urdf_bytes(path) -> bytes:
    """The URDF file's bytes, read once for the key and never more than URDF_CAP + 1
    bytes: a regular file only (stat before opening, fstat after: a FIFO, /dev/zero
    or a directory is refused without reading or blocking). What is refused gets the
    reader's own one-line error (codegen.read.files.read_input, ModelError); a path
    that cannot be opened raises FileNotFoundError as before."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError, TypeError) as exc:
        raise FileNotFoundError(getattr(exc, "errno", None), f"cannot read URDF file: "
                                f"{getattr(exc, 'strerror', None) or exc}", str(path)) from None
    if stat.S_ISREG(mode):
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise FileNotFoundError(exc.errno, f"cannot read URDF file: {exc.strerror}", str(path)) from None
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                chunks, size = [], 0
                while size <= URDF_CAP and (chunk := os.read(fd, URDF_CAP + 1 - size)):
                    chunks.append(chunk)
                    size += len(chunk)
                if size <= URDF_CAP:
                    return b"".join(chunks)
        finally:
            os.close(fd)
    from .read.files import read_input  # the refusal's message (imports SymPy: only on this path)
    from .read.urdf_parse import MAX_BYTES
    return read_input(path, "URDF", MAX_BYTES)


def cache_key(data: bytes, path, options: UrdfOptions) -> tuple:
    """(key, its parts) of a URDF's content with options, for this generator and
    platform: the build environment and compiler included (codegen.build.cache.describe_platform)."""
    from .build.cache import entry_key, native_target

    parts = {"urdf_sha256": hashlib.sha256(data).hexdigest(), "options": options.key(),
             "generator": source_digest(), "version": __version__, **describe_platform()}
    if options.name is None:  # the default name comes from the file name
        parts["urdf_file_name"] = Path(path).name
    if options.native:  # built for this CPU: never served to another
        parts["native_target"] = native_target()
    return entry_key(parts), parts


def _build_into(path, options: UrdfOptions, directory: Path, quiet: bool) -> dict:
    from .pipeline import generate_urdf
    from .support.progress import silenced

    with silenced(quiet):  # quiet: no stage or compile lines either
        written, summary, warns, module = generate_urdf(path, options, directory)
    if not quiet:
        print(f"[codegen] {summary}", file=sys.stderr, flush=True)
    ext = [p.name for p in written if p.suffix in EXTENSIONS]
    if options.python and len(ext) != 1:
        raise RuntimeError(f"the build wrote {len(ext)} extension files: {ext}")
    return {"module": module, "extension": ext[0] if ext else None, "summary": summary, "warnings": warns}


def _import(module: str, path: Path, origin=None):
    loader = importlib.machinery.ExtensionFileLoader(module, str(path))
    spec = importlib.util.spec_from_file_location(module, str(path), loader=loader)
    if spec is None:
        raise ImportError(f"cannot import {module} from {origin or path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if origin is not None:  # the entry's file, for people (loaded through a descriptor)
        mod.__file__ = spec.origin = str(origin)
    return mod


def _import_entry(module: str, entry: Path, key: str, extension: str):
    """Import a cache entry's extension: the file hashed is the file loaded. It is
    opened once (no link followed, the user's own, in the user's own directories),
    hashed from that descriptor, and loaded through /proc/self/fd/N, the same open
    file: nothing can swap it between the check and dlopen. The descriptor stays
    open while the process lives (the extension stays loaded anyway): the dynamic
    loader knows a library by its path name, and a reused fd number would make it
    hand back the library loaded earlier under that name. Without /proc, the path is
    loaded after the check: the directories and file belong to the user and nobody
    else may write them, so only the user could swap it."""
    fd = open_verified(entry, key, extension)
    via = f"/proc/self/fd/{fd}"
    if not os.path.exists(via):
        os.close(fd)
        return _import(module, entry / extension)
    try:
        mod = _import(module, Path(via), origin=entry / extension)
    except BaseException:
        os.close(fd)
        raise
    _LOADED_FDS.append(fd)
    return mod


def _build_privately(path, options: UrdfOptions, quiet: bool, out=None):
    """(module, build info) built in a temporary directory of this process, removed
    afterwards (Linux: an extension stays usable after its file is unlinked; the
    directory is reaped like a build directory if this process is killed); out: its C
    library exported there first (codegen.build.export)."""
    tmp = Path(fresh_directory("import_"))
    try:
        info = _build_into(path, options, tmp, quiet)
        module = _import(info["module"], tmp / info["extension"])
        if out is not None:
            export(tmp, out)
        return module, info
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _not_cached(exc: CacheUnusable, what: str) -> str:
    return f"module cache not used: {exc}; {what} (cache=False / --no-cache skips the cache)"


def import_urdf(path, end_effectors=(), floating_base: bool = False, *, cache: bool = True, quiet: bool = False,
                out=None, casadi: bool = False, **options):
    """The compiled module NAME_kernels of the URDF file `path`, built if needed; with
    casadi=True instead the path of out/libNAME_casadi.so, CasADi's external functions of
    the robot (docs/casadi.md), built beside the module's C library in `out` (required).

    end_effectors: link names exposed to jacobian/fk (in `ee` index order); the
    other keywords are codegen.support.options.UrdfOptions' fields, with their
    defaults there, but for native (default True here: a cached module is for this
    machine):
    contacts: the links that can touch ("LINK" or "LINK:3d" a point contact, "LINK:6d" a flat
    one; in the order of the contact kernels' mask bits, docs/contact-dynamics.md);
    name: NAME (default: the URDF file name, e.g. ur5_robot.urdf -> ur5_robot); ASCII letters,
    digits and _, starting with a letter (ValueError otherwise: it names the module and the C);
    snap=False keeps rotation entries near 0/+-1 as written (agreement with
    Pinocchio ~1e-15 instead of the snapping bound in the summary line);
    friction=False makes the URDF's <dynamics> friction defaults 0 (so
    inverse_dynamics equals Pinocchio's rnea); mimic="independent" reads joints
    with <mimic> as independent coordinates (Pinocchio's default, mimic=False;
    the default "refuse" raises ModelError naming them); share_subtrees: as the
    command line's --share-subtrees; kernels: the optional kernels built
    (codegen.emit.abi.OPTIONAL names, e.g. ("inverse_dynamics_derivatives",);
    default None: all, () for none: the derivatives dominate a big robot's build);
    native (default): compiled for this machine's CPU (-march=native, a third
    of the portable build's compile time; the cache key names the CPU), False:
    the portable module `python -m codegen --python` builds; cache=False builds in a temporary
    directory and stores nothing; quiet: no summary or progress line on stderr; out: a directory that
    receives the module's C library as a CMake project (codegen.export: NAME_kernels.c and .h,
    CMakeLists.txt, find_package and pkg-config files), also when the module comes from
    the cache; not part of the cache key.

    A cache that is not the user's own (another owner, writable by others, a link)
    or cannot take the entry (read-only, full) is not used: one CacheWarning, and
    the module is built privately. Threads: one build at a time per process."""
    unknown = sorted(set(options) - {f.name for f in dataclasses.fields(UrdfOptions)} - {"python"}
                     | {"python"} & set(options))
    if unknown:
        raise TypeError(f"import_urdf() got unexpected keyword(s) {', '.join(unknown)}; the options are "
                        f"{', '.join(f.name for f in dataclasses.fields(UrdfOptions) if f.name != 'python')}")
    if casadi:
        if out is None:
            raise ValueError("import_urdf(..., casadi=True) needs out=DIR: the directory that receives the C library "
                             "and libNAME_casadi.so")
        module = import_urdf(path, end_effectors, floating_base, cache=cache, quiet=quiet, out=out, **options)
        return casadi_library(path, UrdfOptions(**{"native": True, **options, "end_effectors": end_effectors,
                                                   "floating_base": floating_base}), out, module.__name__)
    options = UrdfOptions(**{"native": True, **options, "end_effectors": end_effectors,
                             "floating_base": floating_base, "python": True})
    data = read_urdf_bytes(path)
    key, parts = cache_key(data, path, options)
    if cache and key in _IMPORTED:
        return _exported(_IMPORTED[key], out)
    with BUILD_LOCK:  # a build's output capture and TMPDIR are the process's: one at a time
        if cache and key in _IMPORTED:  # built by another thread meanwhile
            return _exported(_IMPORTED[key], out)
        if not cache:
            module, info = _build_privately(path, options, quiet, out)
        else:
            try:
                entry, info = get_or_build(key, lambda d: _build_into(path, options, d, quiet),
                                           extra={"parts": parts})
                module = _import_entry(info["module"], entry, key, info["extension"])
                if out is not None:
                    export(entry, out)
            except CacheUnusable as exc:
                warnings.warn(_not_cached(exc, "building in a private temporary directory"), CacheWarning,
                              stacklevel=2)
                module, info = _build_privately(path, options, quiet, out)
            _IMPORTED[key] = module
    for text in info.get("warnings", ()):
        warnings.warn(text, stacklevel=2)
    return module


def _exported(module, out):
    """A module imported before, its C library exported into `out` first if asked."""
    if out is not None:
        export(module, out)
    return module


def generate_urdf_cached(path, options: UrdfOptions, out_dir, cache: bool = True, cmake: bool = False) -> tuple:
    """The command line's URDF path: generate into out_dir through the cache (an
    entry's files copied into out_dir, committed all or nothing like any generation;
    cmake: with the C library's CMake project, codegen.build.export.cmake_files).
    Returns (written paths, summary line, warnings). A cache that cannot be used
    (see import_urdf) adds one warning and generates without it."""
    from .pipeline import generate_urdf

    if not cache:
        written, summary, warns, _ = generate_urdf(path, options, out_dir, cmake=cmake)
        return written, summary, warns
    from .build.commit import write_atomically

    try:
        data = read_urdf_bytes(path)
    except FileNotFoundError as exc:
        from .read.model import ModelError
        raise ModelError(f"cannot read URDF file {path}: {exc.strerror or exc}") from None
    key, parts = cache_key(data, path, options)
    with BUILD_LOCK:
        try:
            entry, info = get_or_build(key, lambda d: _build_into(path, options, d, quiet=True),
                                       extra={"parts": parts})
        except CacheUnusable as exc:
            written, summary, warns, _ = generate_urdf(path, options, out_dir, cmake=cmake)
            return written, summary, [_not_cached(exc, "generated without it")] + list(warns)
    names = sorted(info["files"])

    def copy(stage):
        for name in names:  # each file as verified, from the descriptor it was hashed through
            fd = open_verified(entry, key, name)
            with open(fd, "rb") as src:
                executable = os.fstat(src.fileno()).st_mode & stat.S_IXUSR
                # the mode the build would have given it here (the umask applies), not the cache's 0700
                out = os.open(stage / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777 if executable else 0o666)
                with open(out, "wb") as dst:
                    src.seek(0)
                    shutil.copyfileobj(src, dst)

    project = cmake_files(info["module"]) if cmake else {}
    written = write_atomically(Path(out_dir), project, copy, stale_stem=info["module"])
    return written, info["summary"], info.get("warnings", [])


def casadi_library(path, options: UrdfOptions, out_dir, stem: str) -> Path:
    """out_dir/libNAME_casadi.so (codegen.build.casadi_library) for the C library `stem`
    (NAME_kernels.c and .h) that out_dir holds, generated from the URDF `path` with `options`:
    the URDF is read again, as codegen.pipeline.generate_urdf reads it, for the tree the
    sparsity patterns come from."""
    from .build.casadi_library import casadi_from_directory
    from .read.urdf import load_urdf
    from .support.options import contact_pairs

    read = dict(name=stem[:-len("_kernels")], end_effectors=tuple(options.end_effectors))
    if options.floating_base:
        read["floating_base"] = True
    if options.mimic != "refuse":
        read["mimic"] = options.mimic
    if options.contacts:
        read["contacts"] = contact_pairs(options.contacts)
    model = load_urdf(path, snap=options.snap, **read).model
    return casadi_from_directory(model, out_dir, stem[:-len("_kernels")], options.kernels, options.native)

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
friction, snapping); its warnings (no end effector) are Python warnings.
Named import_urdf, not load_urdf: codegen.read.urdf.load_urdf is the reader
(URDF -> model records), this returns an imported module.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import tempfile
import warnings
from pathlib import Path

from . import __version__
from .build.cache import describe_platform, get_or_build
from .support.digest import source_digest
from .support.options import UrdfOptions

_IMPORTED: dict = {}  # cache key -> module imported by this process
EXTENSIONS = (".so", ".pyd")


def cache_key(data: bytes, path, options: UrdfOptions) -> tuple:
    """(key, its parts) of a URDF's content with options, for this generator and platform."""
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

    written, summary, warns, module = generate_urdf(path, options, directory)
    if not quiet:
        print(f"[codegen] {summary}", file=sys.stderr, flush=True)
    ext = [p.name for p in written if p.suffix in EXTENSIONS]
    if options.python and len(ext) != 1:
        raise RuntimeError(f"the build wrote {len(ext)} extension files: {ext}")
    return {"module": module, "extension": ext[0] if ext else None, "summary": summary, "warnings": warns}


def _import(module: str, path: Path):
    spec = importlib.util.spec_from_file_location(module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {module} from {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def import_urdf(path, end_effectors=(), floating_base: bool = False, *, name: str | None = None,
                snap: bool = True, friction: bool = True, share_subtrees=("C", "all"), kernels=None,
                native: bool = True, cache: bool = True, quiet: bool = False):
    """The compiled module NAME_kernels of the URDF file `path`, built if needed.

    end_effectors: link names exposed to jacobian/fk (in `ee` index order);
    name: NAME (default: the URDF file name, e.g. ur5_robot.urdf -> ur5_robot); ASCII letters,
    digits and _, starting with a letter (ValueError otherwise: it names the module and the C);
    snap=False keeps rotation entries near 0/+-1 as written (agreement with
    Pinocchio ~1e-15 instead of the snapping bound in the summary line);
    friction=False makes the URDF's <dynamics> friction defaults 0 (so
    inverse_dynamics equals Pinocchio's rnea); share_subtrees: as the
    command line's --share-subtrees; kernels: the optional kernels built
    (codegen.emit.abi.OPTIONAL names, e.g. ("inverse_dynamics_derivatives",);
    default None: all, () for none: the derivatives dominate a big robot's build);
    native (default): compiled for this machine's CPU (-march=native, a third
    of the portable build's compile time; the cache key names the CPU), False:
    the portable module `python -m codegen --python` builds; cache=False builds in a temporary
    directory and stores nothing; quiet: no summary line on stderr."""
    options = UrdfOptions(end_effectors=tuple(end_effectors), name=name, floating_base=bool(floating_base),
                          snap=bool(snap), friction=bool(friction), share_subtrees=tuple(share_subtrees),
                          kernels=kernels, native=bool(native),
                          python=True)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FileNotFoundError(exc.errno, f"cannot read URDF file: {exc.strerror}", str(path)) from None
    key, parts = cache_key(data, path, options)
    if cache and key in _IMPORTED:
        return _IMPORTED[key]
    if not cache:
        with tempfile.TemporaryDirectory(prefix="krang_import_urdf_") as tmp:
            info = _build_into(path, options, Path(tmp), quiet)
            module = _import(info["module"], Path(tmp) / info["extension"])  # Linux: usable after the unlink
    else:
        entry, info = get_or_build(key, lambda d: _build_into(path, options, d, quiet), extra={"parts": parts})
        module = _import(info["module"], entry / info["extension"])
        _IMPORTED[key] = module
    for text in info.get("warnings", ()):
        warnings.warn(text, stacklevel=2)
    return module


def generate_urdf_cached(path, options: UrdfOptions, out_dir, cache: bool = True) -> tuple:
    """The command line's URDF path: generate into out_dir through the cache (an
    entry's files copied into out_dir, committed all or nothing like any generation).
    Returns (written paths, summary line, warnings)."""
    if not cache:
        from .pipeline import generate_urdf
        written, summary, warns, _ = generate_urdf(path, options, out_dir)
        return written, summary, warns
    import shutil

    from .build.commit import write_atomically

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        from .read.model import ModelError
        raise ModelError(f"cannot read URDF file {path}: {exc.strerror or exc}") from None
    key, parts = cache_key(data, path, options)
    entry, info = get_or_build(key, lambda d: _build_into(path, options, d, quiet=True), extra={"parts": parts})
    names = sorted(info["files"])

    def copy(stage):
        for name in names:
            shutil.copy2(entry / name, stage / name)

    written = write_atomically(Path(out_dir), {}, copy, stale_stem=info["module"])
    return written, info["summary"], info.get("warnings", [])

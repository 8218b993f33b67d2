"""The module cache as a trust boundary (codegen/build/cache.py, codegen/urdf.py): a
cache another user can write is not used, what the cache creates is private whatever
the umask, a manifest cannot point the loader elsewhere, links are never followed,
the key covers the build environment and the compiler, a cache that cannot be written
falls back to a private build, input that is not a regular file is refused before the
key is computed, and one reaper leaves other hosts', namespaces' and users' builds alone.

The generator is replaced by a stand-in that writes a tiny real extension (compiled
once per session), so these tests build nothing of a robot."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.module

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a directory to another user needs root")

TINY_C = """
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "tiny_kernels", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_tiny_kernels(void) {
    PyObject *m = PyModule_Create(&def);
    if (m) PyModule_AddIntConstant(m, "N_DOF", 1);
    return m;
}
"""
EXT = sysconfig.get_config_var("EXT_SUFFIX")


@pytest.fixture(scope="session")
def tiny_extension(tmp_path_factory):
    """A real, minimal extension module tiny_kernels (a C compiler's second, not a robot's build)."""
    d = tmp_path_factory.mktemp("tiny_ext")
    (d / "tiny.c").write_text(TINY_C)
    so = d / f"tiny_kernels{EXT}"
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    subprocess.run(cc + ["-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(d / "tiny.c"),
                         "-o", str(so)], check=True, capture_output=True)
    return so


@pytest.fixture
def stand_in(monkeypatch, tmp_path, tiny_extension):
    """codegen.pipeline.generate_urdf replaced (both the cached build and the fallback use
    it); the cache root is this test's; returns (urdf path, list of build directories)."""
    import codegen.pipeline
    import codegen.urdf

    builds = []

    def generate_urdf(path, options, out_dir, **_):
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        builds.append(out_dir)
        written = [out_dir / "tiny_kernels.h", out_dir / "tiny_kernels.c"]
        written[0].write_text("/* header */\n")
        written[1].write_text("/* source */\n")
        if options.python:
            written.append(out_dir / tiny_extension.name)
            written[-1].write_bytes(tiny_extension.read_bytes())
        return written, "NAME=tiny (stand-in)", [], "tiny_kernels"

    monkeypatch.setattr(codegen.pipeline, "generate_urdf", generate_urdf)
    monkeypatch.setattr(codegen.urdf, "_IMPORTED", {})
    monkeypatch.setenv("KRANG_KERNELS_CACHE", str(tmp_path / "cache"))
    urdf = tmp_path / "tiny.urdf"
    urdf.write_text("<robot name='tiny'/>\n")
    return urdf, builds


def _import(urdf, **kw):
    import codegen
    return codegen.import_urdf(urdf, quiet=True, **kw)


def _entry(tmp_path, urdf, **kw):
    """The cache entry directory import_urdf uses for `urdf` with options kw."""
    from codegen.support.options import UrdfOptions
    from codegen.urdf import cache_key
    options = dict(end_effectors=(), name=None, floating_base=False, snap=True, friction=True,
                   share_subtrees=("C", "all"), kernels=None, native=True, python=True)  # import_urdf's defaults
    key, _ = cache_key(Path(urdf).read_bytes(), urdf, UrdfOptions(**{**options, **kw}))
    return tmp_path / "cache" / "v1" / key, key


def _cache_warnings(record):
    return [str(w.message) for w in record if "module cache" in str(w.message)]


# ----------------------------------------------------------------------------
# A cache someone else can write is not used
# ----------------------------------------------------------------------------

@needs_root
@pytest.mark.parametrize("where", ["root", "v1"])
def test_a_cache_owned_by_another_user_is_not_used(stand_in, tmp_path, where):
    """Someone else created the cache directory first (a shared /tmp, a team cache):
    anything in it could be theirs. One warning, a private build, nothing read from it."""
    urdf, builds = stand_in
    root = tmp_path / "cache"
    (root / "v1").mkdir(parents=True, mode=0o755)
    os.chown(root / "v1" if where == "v1" else root, NOBODY, NOBODY)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = _import(urdf)
    assert m.N_DOF == 1 and len(builds) == 1
    (line,) = _cache_warnings(record)
    assert "uid 65534" in line and "--no-cache" in line and "\n" not in line
    assert not builds[0].exists()  # the private build directory is gone
    assert [p.name for p in (root / "v1").iterdir()] == []  # nothing written into the foreign cache


@pytest.mark.parametrize("mode", [0o775, 0o777, 0o757])
def test_a_cache_others_can_write_is_not_used(stand_in, tmp_path, mode):
    urdf, builds = stand_in
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, mode)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert _import(urdf).N_DOF == 1
    (line,) = _cache_warnings(record)
    assert "writable by group or others" in line and "cache=False" in line
    assert not (root / "v1").exists()


def test_a_cache_root_that_is_a_link_is_not_used(stand_in, tmp_path):
    urdf, _ = stand_in
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "cache").symlink_to(elsewhere)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert _import(urdf).N_DOF == 1
    (line,) = _cache_warnings(record)
    assert "symbolic link" in line
    assert list(elsewhere.iterdir()) == []


@needs_root
def test_an_entry_owned_by_another_user_is_rebuilt_never_loaded(stand_in, tmp_path):
    urdf, builds = stand_in
    _import(urdf)
    entry, _ = _entry(tmp_path, urdf)
    os.chown(entry, NOBODY, NOBODY)
    import codegen.urdf
    codegen.urdf._IMPORTED.clear()
    _import(urdf)
    assert len(builds) == 2  # rebuilt
    assert os.lstat(entry).st_uid == os.getuid()


def test_a_manifest_others_can_write_is_not_trusted(stand_in, tmp_path):
    urdf, builds = stand_in
    _import(urdf)
    entry, _ = _entry(tmp_path, urdf)
    os.chmod(entry / "manifest.json", 0o666)
    import codegen.urdf
    codegen.urdf._IMPORTED.clear()
    _import(urdf)
    assert len(builds) == 2


def test_umask_000_still_makes_a_private_cache(tmp_path):
    """Every directory the cache creates is 0700 and no file is writable by others,
    whatever the umask (a process with umask 0: a service, a careless shell)."""
    code = textwrap.dedent(f"""
        import os
        from pathlib import Path
        os.umask(0)
        from codegen.build.cache import get_or_build
        def build(d):
            (d / "m.so").write_text("x")
            return {{"module": "m"}}
        get_or_build("k" * 64, build, root=Path({str(tmp_path / 'a' / 'b' / 'cache')!r}))
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                   timeout=120)
    made = [tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "cache"]
    root = made[-1] / "v1"
    made += [root, root / ("k" * 64)]
    for d in made:
        assert oct(os.lstat(d).st_mode & 0o777) == oct(0o700), d
    for f in (root / ("k" * 64)).iterdir():
        assert not os.lstat(f).st_mode & 0o077, f
    assert not os.lstat(root / f"{'k' * 64}.lock").st_mode & 0o077


# ----------------------------------------------------------------------------
# What a manifest may name; links
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("extension", ["ABSOLUTE", "../evil.so", "sub/evil.so", "not_hashed.so", ".hidden.so"])
def test_a_manifest_cannot_point_the_loader_outside_the_entry(stand_in, tmp_path, tiny_extension, extension):
    """A planted manifest (valid key and hashes) whose extension is elsewhere: never loaded, rebuilt."""
    urdf, builds = stand_in
    entry, key = _entry(tmp_path, urdf)
    entry.mkdir(parents=True, mode=0o700)
    os.chmod(entry.parent, 0o700)
    os.chmod(entry.parent.parent, 0o700)
    evil = tmp_path / "evil.so"
    evil.write_bytes(tiny_extension.read_bytes())
    if extension == "ABSOLUTE":
        extension = str(evil)
    (entry / "x.h").write_text("h")
    import hashlib
    files = {"x.h": hashlib.sha256(b"h").hexdigest()}
    if extension == "not_hashed.so":
        (entry / extension).write_bytes(tiny_extension.read_bytes())
    manifest = {"format": 1, "key": key, "files": files, "module": "tiny_kernels", "extension": extension,
                "summary": "planted", "warnings": []}
    (entry / "manifest.json").write_text(json.dumps(manifest))
    m = _import(urdf)
    assert len(builds) == 1, "the planted entry must be rebuilt"
    assert Path(m.__file__).parent == entry and m.__file__ != str(evil)


def test_an_extension_that_is_a_link_is_not_loaded(stand_in, tmp_path, tiny_extension):
    """A link with the right content's hash still names another file: refused, rebuilt."""
    urdf, builds = stand_in
    _import(urdf)
    entry, _ = _entry(tmp_path, urdf)
    so = entry / tiny_extension.name
    outside = tmp_path / "outside.so"
    outside.write_bytes(so.read_bytes())
    so.unlink()
    so.symlink_to(outside)
    import codegen.urdf
    codegen.urdf._IMPORTED.clear()
    m = _import(urdf)
    assert len(builds) == 2 and not so.is_symlink() and m.__file__ == str(so)


def test_a_lock_that_is_a_link_creates_nothing_where_it_points(tmp_path):
    from codegen.build.cache import get_or_build, read_manifest
    root = tmp_path / "cache"
    (root / "v1").mkdir(parents=True, mode=0o700)
    target = tmp_path / "victim_file"
    (root / "v1" / f"{'a' * 64}.lock").symlink_to(target)
    entry, _ = get_or_build("a" * 64, lambda d: (d / "f").write_text("x") and None, root=root)
    assert not os.path.lexists(target)
    assert read_manifest(entry, "a" * 64) is not None
    assert not (root / "v1" / f"{'a' * 64}.lock").is_symlink()


def test_a_dangling_link_entry_is_replaced(tmp_path):
    """A link where the entry should be (a half-finished cleanup, a planted link): rebuilt
    on the next call, and every call after that is a hit."""
    from codegen.build.cache import get_or_build, read_manifest
    root = tmp_path / "cache"
    (root / "v1").mkdir(parents=True, mode=0o700)
    (root / "v1" / ("b" * 64)).symlink_to(tmp_path / "nowhere")
    calls = []

    def build(d):
        calls.append(d)
        (d / "f").write_text("x")

    entry, _ = get_or_build("b" * 64, build, root=root)
    assert not entry.is_symlink() and read_manifest(entry, "b" * 64) is not None
    get_or_build("b" * 64, build, root=root)
    assert len(calls) == 1


def test_a_deeply_nested_manifest_is_a_corrupt_entry(tmp_path):
    from codegen.build.cache import get_or_build, read_manifest
    root = tmp_path / "cache"
    entry, manifest = get_or_build("c" * 64, lambda d: (d / "f").write_text("x") and None, root=root)
    manifest["extra"] = "PLACEHOLDER"
    text = json.dumps(manifest).replace('"PLACEHOLDER"', "[" * 100000 + "]" * 100000)
    (entry / "manifest.json").write_text(text)
    assert read_manifest(entry, "c" * 64) is None
    calls = []
    get_or_build("c" * 64, lambda d: calls.append(d) or (d / "f").write_text("x") and None, root=root)
    assert len(calls) == 1 and read_manifest(entry, "c" * 64) is not None


def test_a_huge_manifest_is_a_corrupt_entry(tmp_path):
    from codegen.build.cache import MAX_MANIFEST_BYTES, get_or_build, read_manifest
    root = tmp_path / "cache"
    entry, manifest = get_or_build("d" * 64, lambda d: (d / "f").write_text("x") and None, root=root)
    manifest["padding"] = "x" * MAX_MANIFEST_BYTES
    (entry / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(entry, "d" * 64) is None


# ----------------------------------------------------------------------------
# A cache that cannot be written: a private build, one clear line
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_a_read_only_or_full_cache_falls_back_to_a_private_build(stand_in, monkeypatch, code):
    from codegen.build import cache
    urdf, builds = stand_in

    real = cache.tempfile.mkdtemp
    root = str(cache.cache_root())

    def refuse(*a, **kw):  # inside the cache only: the private build's own temporaries work
        if str(kw.get("dir") or "").startswith(root):
            raise OSError(code, os.strerror(code), kw.get("dir"))
        return real(*a, **kw)

    cache.cache_root().mkdir(mode=0o700)
    monkeypatch.setattr(cache.tempfile, "mkdtemp", refuse)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert _import(urdf).N_DOF == 1
    (line,) = _cache_warnings(record)
    assert os.strerror(code) in line and "--no-cache" in line


@pytest.mark.parametrize("python", [False, True])
def test_the_command_line_on_a_read_only_cache_generates_with_one_warning(stand_in, monkeypatch, tmp_path, capsys,
                                                                          python):
    """Even C-only generation: the cache is not needed to write C, so its failure is a warning."""
    from codegen import cli
    from codegen.build import cache
    urdf, _ = stand_in

    def refuse(*a, **kw):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(cache.cache_root()))

    monkeypatch.setattr(cache, "_make_private_dirs", refuse)
    out = tmp_path / "out"
    assert cli.main([str(urdf), "--out", str(out)] + (["--python"] if python else [])) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "module cache" in ln]
    assert len(lines) == 1 and lines[0].startswith("warning: ") and "--no-cache" in lines[0], err
    assert (out / "tiny_kernels.h").is_file()


def test_a_full_disk_outside_the_cache_is_named(tmp_path, monkeypatch):
    """The build ran out of space in TMPDIR: the error says so, not "did not compile"."""
    from codegen.build import cache
    from codegen.build.log import BuildError
    root = tmp_path / "cache"

    def build(d):
        raise BuildError("the Python module x did not compile: ld: final link failed: No space left on device")

    monkeypatch.setattr(cache, "free_bytes", lambda p: 0 if str(p) == str(cache.tempfile.gettempdir()) else 1 << 40)
    with pytest.raises(RuntimeError, match=r"(?i)no space left on device in .*not in the module cache"):
        cache.get_or_build("e" * 64, build, root=root)
    monkeypatch.setattr(cache, "free_bytes", lambda p: 0)  # the cache's filesystem is full: fall back
    with pytest.raises(cache.CacheUnusable, match="(?i)no space left on device"):
        cache.get_or_build("e" * 64, build, root=root)


# ----------------------------------------------------------------------------
# The key
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("var", ["CC", "CXX", "CFLAGS", "CPPFLAGS", "CXXFLAGS", "LDFLAGS", "LDSHARED", "LDCXXSHARED",
                                 "ARCHFLAGS", "AR", "ARFLAGS", "CCSHARED", "OPT", "BASECFLAGS", "PY_CFLAGS",
                                 "PY_LDFLAGS", "KRANG_BUILD_DEBUG", "CPATH"])
def test_every_build_variable_is_in_the_key(monkeypatch, var):
    from codegen.support.options import UrdfOptions
    from codegen.urdf import cache_key
    for name in ("CC", "LDSHARED"):  # the compiler's identity: the same program either way below
        monkeypatch.delenv(name, raising=False)
    base, _ = cache_key(b"<robot/>", "r.urdf", UrdfOptions(python=True, native=False))
    value = {"CC": sysconfig.get_config_var("CC") + " ", "LDSHARED": sysconfig.get_config_var("LDSHARED") + " "}
    monkeypatch.setenv(var, value.get(var, "-DODD=1"))
    changed, parts = cache_key(b"<robot/>", "r.urdf", UrdfOptions(python=True, native=False))
    assert changed != base and parts["build_env"][var] == value.get(var, "-DODD=1")


def test_the_compilers_identity_is_in_the_key(monkeypatch, tmp_path):
    """Another compiler behind the same name (an upgrade, a wrapper earlier on PATH): another entry."""
    from codegen.support.options import UrdfOptions
    from codegen.urdf import cache_key
    monkeypatch.delenv("CC", raising=False)
    base, parts = cache_key(b"<robot/>", "r.urdf", UrdfOptions(python=True, native=False))
    cc = parts["compilers"]["cc"]
    assert os.path.isabs(cc["path"]) and cc["version"] and len(cc["version_sha256"]) == 64
    fake = tmp_path / "bin" / "cc-wrapper"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'wrapper 1.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    other, parts2 = cache_key(b"<robot/>", "r.urdf", UrdfOptions(python=True, native=False))
    assert other != base and parts2["compilers"]["cc"]["version"] == "wrapper 1.0"
    for name in ("cython", "setuptools", "numpy", "python", "ext_suffix", "generator"):
        assert parts2[name], name


def test_the_urdf_cap_is_the_readers():
    from codegen.read.urdf_parse import MAX_BYTES
    from codegen.urdf import URDF_CAP
    assert URDF_CAP == MAX_BYTES


# ----------------------------------------------------------------------------
# Input that is not a regular file, before any hashing
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
@pytest.mark.parametrize("entry", ["import_urdf", "command line"])
def test_a_device_or_fifo_urdf_is_refused_at_once(tmp_path, kind, entry):
    """Read whole (/dev/zero: until memory runs out) or blocking forever (a FIFO without a
    writer) before: now one error, without reading. Bounded: a child with a timeout and
    a memory limit."""
    path = str(tmp_path / ("zero.urdf" if kind == "dev_zero" else "pipe.urdf"))  # named as a URDF would be
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)
    if entry == "import_urdf":
        call = f"import codegen\ntry:\n    codegen.import_urdf({path!r}, quiet=True)\nexcept Exception as exc:\n" \
               f"    print(type(exc).__name__ + ': ' + str(exc)); raise SystemExit(3)"
    else:
        call = f"from codegen import cli\nraise SystemExit(cli.main([{path!r}, '--out', {str(tmp_path / 'o')!r}]))"
    code = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n" + call
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=dict(os.environ, KRANG_KERNELS_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT)))
    text = r.stdout + r.stderr
    assert r.returncode in (2, 3), text
    assert "not a regular file" in text and ("character device" in text or "FIFO" in text), text
    assert "MemoryError" not in text


# ----------------------------------------------------------------------------
# One reaper: only this host's, this PID namespace's, this user's dead runs
# ----------------------------------------------------------------------------

def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)


def test_builds_of_another_pid_namespace_or_user_are_not_reaped(tmp_path):
    """A name without this process's namespace (another container with the same host name;
    the old names carried none) or a directory of another user: a pid there means nothing
    here, so it is left alone; this owner's dead run is removed, by all three callers."""
    from codegen.build import cache, commit
    from codegen.support import workdirs
    dead = _dead_pid()
    host = os.uname().nodename
    tag = workdirs.owner_tag()
    other_ns = tag.rsplit("-ns", 1)[0] + "-ns1"
    v1 = tmp_path / "cache" / "v1"
    v1.mkdir(parents=True, mode=0o700)
    os.chmod(tmp_path / "cache", 0o700)
    keep = [v1 / f".build-{dead}-aaaa", v1 / f".build-{other_ns}-{dead}-aaaa",  # cache
            tmp_path / f"krang_pybuild_{host}_{dead}_x", tmp_path / f"krang_pybuild_{other_ns}_{dead}_x",  # workdirs
            tmp_path / f".codegen-{host}-{dead}-x", tmp_path / f".codegen-{other_ns}-{dead}-x"]  # commit
    gone = [v1 / f".build-{tag}-{dead}-bbbb", v1 / f".trash-{tag}-{dead}-bbbb",
            tmp_path / f"krang_pybuild_{tag}_{dead}_y", tmp_path / f".codegen-{tag}-{dead}-y"]
    for d in keep + gone:
        d.mkdir()
    if os.geteuid() == 0:
        theirs = [v1 / f".build-{tag}-{dead}-cccc", tmp_path / f"krang_pybuild_{tag}_{dead}_z",
                  tmp_path / f".codegen-{tag}-{dead}-z"]
        for d in theirs:
            d.mkdir()
            os.chown(d, NOBODY, NOBODY)
        keep += theirs
    cache.get_or_build("f" * 64, lambda d: (d / "f").write_text("x") and None, root=tmp_path / "cache")
    workdirs.remove_stale(tmp_path)
    commit.recover(tmp_path)
    assert [d.name for d in keep if not d.exists()] == []
    assert [d.name for d in gone if d.exists()] == []


def test_the_owner_tag_names_host_and_pid_namespace():
    from codegen.support import workdirs
    tag = workdirs.owner_tag()
    assert tag.startswith(os.uname().nodename[:8].replace(".", "-"))
    if os.path.exists("/proc/self/ns/pid"):
        assert tag.endswith(f"-ns{os.stat('/proc/self/ns/pid').st_ino}")


# ----------------------------------------------------------------------------
# Threads: a build's output capture leaves the host's output alone
# ----------------------------------------------------------------------------

def test_concurrent_captures_leave_the_hosts_output_alone(capfd):
    """Two builds' captures at once and a host thread printing and logging meanwhile:
    fds 1 and 2 still name what they did, sys.stdout is the same object and works,
    the host's lines reach the host, each build's log holds its own output only."""
    import logging

    from codegen.build.log import captured
    before = [os.fstat(fd) for fd in (1, 2)]
    stdout, stderr = sys.stdout, sys.stderr
    log = logging.getLogger("host-thread")
    handler = logging.StreamHandler(sys.stderr)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    # builds are serialized (BUILD_LOCK): build 1 waits for build 0, whose capture is
    # active while the host thread prints and logs; an Event, not a Barrier with build 1,
    # so that the test cannot deadlock on the lock it checks
    host_may_write, host_wrote = threading.Event(), threading.Event()
    texts = {}

    def build(n):
        with captured() as out:
            print(f"build {n} says")
            subprocess.run(["sh", "-c", f"echo child {n}; echo child {n} err >&2"], check=True)
            if n == 0:
                host_may_write.set()
                host_wrote.wait(30)  # the host thread wrote while this capture was active
        texts[n] = out.text

    def host():
        host_may_write.wait(30)
        print("host print", flush=True)
        log.info("host log")
        os.write(2, b"host fd 2\n")
        host_wrote.set()

    # the host thread runs before the builds start: threads a build starts are the build's
    threads = [threading.Thread(target=host)] + [threading.Thread(target=build, args=(n,)) for n in (0, 1)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        log.removeHandler(handler)
    assert [(s.st_dev, s.st_ino) for s in map(os.fstat, (1, 2))] == [(s.st_dev, s.st_ino) for s in before]
    assert sys.stdout is stdout and sys.stderr is stderr
    print("still printing")
    seen = capfd.readouterr()
    assert "host print" in seen.out and "still printing" in seen.out
    assert "host log" in seen.err and "host fd 2" in seen.err
    for n in (0, 1):
        assert f"build {n} says" in texts[n] and f"child {n}" in texts[n] and f"child {n} err" in texts[n]
        assert "host" not in texts[n] and f"build {1 - n}" not in texts[n]

"""The command line (python -m codegen) and the atomic writing of outputs.

Every failure is exactly one line `error: ...` on stderr and a non-zero exit
status, never a traceback; a failure while writing leaves the output
directory as it was (no half-written set, no temporary files).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import codegen.build.commit as commit
import codegen.pipeline as gen
from codegen.pipeline import CodegenConfig, generate_from_files
from codegen.support.options import check_robot_name as check_name

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "models" / "mini.toml"
MINI_PARAMS = ROOT / "tests" / "models" / "mini_params.toml"
PENDULUM = ROOT / "tests" / "models" / "pendulum.toml"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=300)


def assert_one_error_line(r, *fragments):
    assert r.returncode != 0, r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_help_documents_every_option():
    r = run("--help")
    assert r.returncode == 0
    for opt in ("--out", "--name", "--end-effector", "--no-snap", "--emit-model", "--python", "--no-friction",
                "--no-cache", "MODEL.toml",
                "PARAMS.toml", "ROBOT.urdf"):
        assert opt in r.stdout, opt


def test_success_writes_both_files(tmp_path):
    r = run(MINI, MINI_PARAMS, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mini_kernels.c", "mini_kernels.h"]


def test_name_option_sets_prefix(tmp_path):
    r = run(MINI, MINI_PARAMS, "--out", tmp_path, "--name", "my_robot")
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "my_robot_kernels.h").read_text()
    assert "void my_robot_compute_A(" in h and "#define MY_ROBOT_NDOF 3" in h


@pytest.mark.parametrize("name", ["my robot", "2link", "_arm", "bras_\u00e9"])
def test_name_not_an_identifier_is_one_error(tmp_path, name):
    """--name is the C prefix and the module name as given: anything else is one error line
    naming the rule and a name that would do, and nothing is written."""
    r = run(MINI, MINI_PARAMS, "--out", tmp_path / "out", "--name", name)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --name:"), r.stderr
    assert "C identifier" in lines[0] and "e.g." in lines[0]
    assert check_name(re.search(r"e\.g\. '(\w+)'", lines[0]).group(1))  # the suggestion would do
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["missing", "directory", "bad_toml", "missing_params", "params_directory",
                                  "unwritable_out", "arity", "urdf_only_option", "unknown_option",
                                  "unsupported_function", "macro_namespace", "no_args"])
def test_every_failure_is_one_error_line(tmp_path, case):
    out = tmp_path / "out"
    bad = tmp_path / "bad.toml"
    if case == "missing":
        r = run(tmp_path / "nope.toml", MINI_PARAMS, "--out", out)
    elif case == "directory":
        r = run(tmp_path, MINI_PARAMS, "--out", out)
    elif case == "bad_toml":
        bad.write_text("name = [unclosed\n")
        r = run(bad, MINI_PARAMS, "--out", out)
    elif case == "missing_params":
        r = run(MINI, tmp_path / "nope.toml", "--out", out)
    elif case == "params_directory":
        r = run(MINI, tmp_path, "--out", out)
    elif case == "unwritable_out":
        (tmp_path / "file").write_text("x")
        r = run(MINI, MINI_PARAMS, "--out", tmp_path / "file" / "sub")
    elif case == "arity":
        r = run(MINI, MINI_PARAMS, MINI, "--out", out)
    elif case == "urdf_only_option":
        r = run(MINI, MINI_PARAMS, "--out", out, "--end-effector", "ta")
    elif case == "unknown_option":
        r = run(MINI, MINI_PARAMS, "--frobnicate")
    elif case == "unsupported_function":
        bad.write_text(MINI.read_text().replace('origin = ["L2", "0", "L3"]', 'origin = ["erf(L2)", "0", "L3"]'))
        r = run(bad, MINI_PARAMS, "--out", out)
    elif case == "macro_namespace":
        r = run(MINI, MINI_PARAMS, "--out", out, "--name", "M")
    else:
        r = run()
    assert_one_error_line(r)
    assert not out.exists() or not any(out.iterdir())


def test_urdf_input_without_front_end_or_with_a_missing_file(tmp_path):
    r = run(tmp_path / "robot.urdf", "--out", tmp_path / "out")
    assert_one_error_line(r)
    import importlib.util
    if importlib.util.find_spec("codegen.read.urdf") is None:
        assert "URDF input is not available yet" in r.stderr


@pytest.mark.system
def test_python_option_is_one_error_line_or_works(tmp_path):
    import importlib.util
    r = run(MINI, MINI_PARAMS, "--out", tmp_path / "out", "--python")
    if importlib.util.find_spec("codegen.build.module") is None:
        assert_one_error_line(r, "--python is not available yet")
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    else:
        assert r.returncode == 0, r.stderr


def test_parameter_file_of_another_model_is_one_error_line(tmp_path):
    assert_one_error_line(run(PENDULUM, MINI_PARAMS, "--out", tmp_path / "out"), "unknown parameter")


# ----------------------------------------------------------------------------
# Atomic writes
# ----------------------------------------------------------------------------

def _snapshot(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in d.iterdir()}


@pytest.fixture
def old_outputs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mini_kernels.h").write_text("old header\n")
    (out / "mini_kernels.c").write_text("old source\n")
    (out / "unrelated.txt").write_text("keep me\n")
    return out


def test_failure_between_files_leaves_old_outputs(old_outputs, monkeypatch):
    before = _snapshot(old_outputs)
    calls = []
    real = commit._write

    def failing(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(commit, "_write", failing)
    with pytest.raises(OSError):
        generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs))
    assert len(calls) == 2
    assert _snapshot(old_outputs) == before  # nothing new, nothing half-written, no temporaries


def test_failure_in_a_later_stage_leaves_old_outputs(old_outputs, monkeypatch):
    before = _snapshot(old_outputs)

    def boom(*args):
        raise RuntimeError("build failed")

    monkeypatch.setattr(gen, "_python_builder", lambda *a: boom)
    with pytest.raises(RuntimeError):
        generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs, python=True))
    assert _snapshot(old_outputs) == before


def test_failure_while_renaming_restores_old_outputs(old_outputs, monkeypatch):
    before = _snapshot(old_outputs)
    import os
    real = os.replace
    moved, failed = [], []

    def flaky(src, dst):
        if Path(dst).parent == old_outputs and Path(dst).name == "mini_kernels.h" and not failed:
            failed.append(dst)  # once: the rollback's own rename then succeeds
            raise OSError(5, "Input/output error", str(dst))
        moved.append(dst)
        real(src, dst)

    monkeypatch.setattr(commit.os, "replace", flaky)
    with pytest.raises(OSError):
        generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs))
    monkeypatch.setattr(commit.os, "replace", real)
    assert moved, "the failure should come after the first file was renamed into place"
    assert _snapshot(old_outputs) == before


def test_success_replaces_outputs_and_leaves_no_temporaries(old_outputs):
    files = generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs))
    assert sorted(p.name for p in files) == ["mini_kernels.c", "mini_kernels.h"]
    after = _snapshot(old_outputs)
    assert sorted(after) == ["mini_kernels.c", "mini_kernels.h", "unrelated.txt"]
    assert after["mini_kernels.h"].startswith(b"/* mini_kernels.h")


def test_a_killed_runs_staging_directory_is_removed_by_the_next_run(old_outputs):
    import os
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()  # a process that has exited
    prefix = commit.stage_prefix()
    stale = old_outputs / f"{prefix}{dead}-abc123"
    (stale / ".previous").mkdir(parents=True)
    (stale / "mini_kernels.c").write_text("half written\n")
    live = old_outputs / f"{prefix}{os.getpid()}-def456"  # a run that is still going (this process)
    live.mkdir()
    other_host = old_outputs / f".codegen-elsewhere-{dead}-ghi789"  # shared directory, another host
    other_host.mkdir()
    generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs))
    assert not stale.exists()
    assert live.is_dir() and other_host.is_dir()


# ----------------------------------------------------------------------------
# The URDF branch, with a stand-in front end (the real one is codegen.read.urdf)
# ----------------------------------------------------------------------------

def test_urdf_branch_passes_options_and_writes_model_files(tmp_path, monkeypatch, capsys):
    import hashlib
    import types

    from codegen import cli
    from codegen.read.model import load_model, load_param_values

    urdf = tmp_path / "robot.urdf"
    urdf.write_text("<robot name='r'/>\n")
    calls = []

    def load_urdf(path, *, name=None, end_effectors=(), snap=True, floating_base=False):
        calls.append((str(path), name, tuple(end_effectors), snap, floating_base))
        model = load_model(MINI)
        return types.SimpleNamespace(model=model, values=tuple(load_param_values(MINI_PARAMS, model)),
                                     to_toml=lambda: (MINI.read_text(), MINI_PARAMS.read_text()))

    monkeypatch.setitem(sys.modules, "codegen.read.urdf", types.SimpleNamespace(load_urdf=load_urdf))
    out = tmp_path / "out"
    rc = cli.main([str(urdf), "--out", str(out), "--name", "arm_2", "--end-effector", "tool",
                   "--end-effector", "slider", "--no-snap", "--emit-model"])
    assert rc == 0, capsys.readouterr().err
    assert calls == [(str(urdf), "arm_2", ("tool", "slider"), False, False)]
    assert sorted(p.name for p in out.iterdir()) == ["arm_2.toml", "arm_2_kernels.c", "arm_2_kernels.h",
                                                     "arm_2_params.toml"]
    assert (out / "arm_2.toml").read_text() == MINI.read_text()
    header = (out / "arm_2_kernels.h").read_text()
    assert f"URDF file        {hashlib.sha256(urdf.read_bytes()).hexdigest()}" in header
    # the emitted model regenerates the same C with the TOML form
    rc = cli.main([str(out / "arm_2.toml"), str(out / "arm_2_params.toml"), "--out", str(tmp_path / "again"),
                   "--name", "arm_2"])
    assert rc == 0
    strip = lambda t: "\n".join(l for l in t.splitlines() if " file " not in l)  # noqa: E731,E741
    assert strip((tmp_path / "again" / "arm_2_kernels.c").read_text()) == strip((out / "arm_2_kernels.c").read_text())


@pytest.mark.parametrize("missing", ["sympy", "jinja2"])
def test_missing_generator_dependency_is_one_line_naming_the_extra(missing):
    """`pip install .` without [generate]: python -m codegen --help names the fix in one line
    (the missing module simulated by a None entry in sys.modules)."""
    code = (f"import runpy, sys; sys.modules[{missing!r}] = None; sys.argv = ['codegen', '--help']; "
            "runpy.run_module('codegen', run_name='__main__')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2
    assert_one_error_line(r, missing, 'pip install ".[generate]"')


# ----------------------------------------------------------------------------
# Issue 17: standard streams that cannot be written, targets the tool did not
# write, crashes during the commit, killed Python builds
# ----------------------------------------------------------------------------

def _run_streams(args, stdout, stderr):
    return subprocess.run([sys.executable, "-m", "codegen", *map(str, args)], stdout=stdout, stderr=stderr,
                          cwd=ROOT, timeout=300).returncode


@pytest.mark.parametrize("case", ["stdout closed pipe", "stdout full", "both full", "help closed pipe",
                                  "help full", "error to full stderr", "usage error to full stderr"])
def test_unwritable_standard_streams_are_one_line_and_an_exit_status(tmp_path, case):
    import os
    args = [MINI, MINI_PARAMS, "--out", tmp_path / "out"]
    err_path = tmp_path / "stderr"
    full = open("/dev/full", "w")
    with full, open(err_path, "w") as err:
        if case in ("stdout closed pipe", "help closed pipe"):
            r, w = os.pipe()
            os.close(r)  # `| head -c0`: nobody reads
            try:
                rc = _run_streams(["--help"] if case.startswith("help") else args, w, err)
            finally:
                os.close(w)
        elif case == "stdout full":
            rc = _run_streams(args, full, err)
        elif case == "both full":
            rc = _run_streams(args, full, full)
        elif case == "help full":
            rc = _run_streams(["--help"], full, err)
        elif case == "error to full stderr":
            rc = _run_streams([tmp_path / "nope.toml", MINI_PARAMS], subprocess.DEVNULL, full)
        else:
            rc = _run_streams(["--frobnicate"], subprocess.DEVNULL, full)
    text = err_path.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text, text
    if case.startswith("error") or case.startswith("usage"):
        assert rc == 2
        return
    assert rc == 1, (rc, text)
    if case != "both full":
        assert len(text.splitlines()) == 1 and text.startswith("error: cannot write") or case.startswith("help"), text
    if not case.startswith("help"):  # the files were written all the same
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mini_kernels.c", "mini_kernels.h"]


@pytest.mark.parametrize("kind", ["directory", "symlink", "fifo"])
def test_a_target_the_tool_did_not_write_is_refused_and_kept(tmp_path, kind):
    import os
    out = tmp_path / "out"
    out.mkdir()
    (out / "mini_kernels.c").write_text("old source\n")
    target = out / "mini_kernels.h"
    if kind == "directory":
        target.mkdir()
        (target / "notes.txt").write_text("mine\n")
    elif kind == "symlink":
        (tmp_path / "elsewhere.h").write_text("mine\n")
        target.symlink_to(tmp_path / "elsewhere.h")
    else:
        os.mkfifo(target)
    r = run(MINI, MINI_PARAMS, "--out", out)
    assert r.returncode == 2
    assert_one_error_line(r, "mini_kernels.h", "nothing was changed")
    assert (out / "mini_kernels.c").read_text() == "old source\n"
    if kind == "directory":
        assert (target / "notes.txt").read_text() == "mine\n"
    elif kind == "symlink":
        assert target.is_symlink() and (tmp_path / "elsewhere.h").read_text() == "mine\n"
    else:
        assert target.is_fifo()
    assert sorted(p.name for p in out.iterdir()) == ["mini_kernels.c", "mini_kernels.h"]  # no staging left


# A forked child commits NEW over OLD with os.replace and os.unlink counted as steps:
# "kill" dies (SIGKILL, no cleanup) at step k; "fail-then-kill" gets an I/O error at
# step k and dies at the next step (of its in-process roll back).
def _commit_in_a_child(out, k, mode, files) -> int:
    """The child's wait status as returncode (-9: killed; 1: an error; 0: done)."""
    import os
    import signal
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            count = [0]

            def counted(real):
                def step(*args, **kwargs):
                    count[0] += 1
                    if count[0] == k and mode == "fail-then-kill":
                        raise OSError(5, "Input/output error")
                    if count[0] >= k:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return real(*args, **kwargs)
                return step

            os.replace, os.unlink = counted(os.replace), counted(os.unlink)
            commit.write_atomically(out, files)
        except BaseException:
            os._exit(1)
        os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


OLD = {"r_kernels.h": "old header\n", "r_kernels.c": "old source\n", "r.pyi": "old stub\n"}
NEW = {"r_kernels.h": "new header\n", "r_kernels.c": "new source\n", "r.pyi": "new stub\n", "r.toml": "new\n"}


@pytest.mark.parametrize("mode", ["kill", "fail-then-kill"])
def test_the_commit_survives_a_kill_at_any_step(tmp_path, mode):
    import signal

    for k in range(1, 40):
        out = tmp_path / f"out{k}"
        out.mkdir()
        for n, t in OLD.items():
            (out / n).write_text(t)
        (out / "unrelated.txt").write_text("keep me\n")
        rc = _commit_in_a_child(out, k, mode, NEW)
        if rc == 0:
            break
        # (an I/O error on the last step, removing the journal, leaves nothing to roll back: exit 1)
        assert rc == -signal.SIGKILL or (mode == "fail-then-kill" and rc == 1), rc
        commit.recover(out)  # what the next run does first
        names = {p.name: p.read_text() for p in out.iterdir()}
        assert names.pop("unrelated.txt") == "keep me\n"
        assert names in (OLD, NEW), (k, names)  # all old or all new, nothing half, no staging left
        # and the next run's result is its own
        newer = {n: t.replace("new", "newer") for n, t in NEW.items()}
        commit.write_atomically(out, newer)
        assert {p.name: p.read_text() for p in out.iterdir() if p.name != "unrelated.txt"} == {**OLD, **newer}
    else:
        pytest.fail("the child never finished")
    assert k > 8, "the child should have been killed at every step of the commit first"


def test_recovery_leaves_other_hosts_users_and_planted_journals_alone(tmp_path):
    import json
    import os
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    planted = tmp_path / f"{commit.stage_prefix()}{dead}-evil"
    planted.mkdir()
    (planted / "x").write_text("x")
    (planted / commit.JOURNAL).write_text(json.dumps({"names": ["../victim"]}))
    (tmp_path / "victim").write_text("mine\n")
    commit.recover(tmp_path)
    assert (tmp_path / "victim").read_text() == "mine\n" and planted.is_dir()
    assert os.path.exists(planted / "x")


def _start_python_build(tmp_path, stage="build"):
    """A --python run with its own TMPDIR, once its build directory exists (mid-build), or
    with stage="emission" once the kernels' emission has started (codegen/emit/parallel.py)."""
    import os
    import signal
    import time
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "codegen", MINI, MINI_PARAMS, "--out", tmp_path / "out",
                             "--python"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)},
                            # SIGINT as a terminal delivers it, even when this suite runs in the background
                            # (a shell's `cmd &` starts it with SIGINT ignored, which children inherit)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while not [d for d in tmp.glob("krang_pybuild_*") if ("_emit_" in d.name) == (stage == "emission")]:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no build directory appeared"
        time.sleep(0.02)
    time.sleep(1.0 if stage == "build" else 0.1)  # into Cython or the compiler; into an emitting child
    assert proc.poll() is None, "the build finished before it could be interrupted"
    return proc, tmp


def _settled_listing(d, seconds=30):
    """d's entries once a compiler that outlived its parent has finished."""
    import time
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        now = sorted(p.name for p in d.iterdir())
        if now == last:
            return now
        last = now
        time.sleep(1.0)
    return last


@pytest.mark.system
@pytest.mark.parametrize("sig,stage", [("SIGTERM", "build"), ("SIGINT", "build"), ("SIGINT", "emission")])
def test_an_interrupted_python_build_removes_its_temporaries(tmp_path, sig, stage):
    import signal

    from codegen.emit import parallel as parallel_emit
    if stage == "emission" and parallel_emit.jobs(50) == 1:
        pytest.skip("emission runs in this process (one CPU or no fork)")
    proc, tmp = _start_python_build(tmp_path, stage)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=120)
    # SIGINT: 130, or death by SIGINT once the one-line report is out (CPython re-raises the
    # signal at exit after a KeyboardInterrupt passed through compiled code); a shell sees 130 either way
    expected = (130, -signal.SIGINT) if sig == "SIGINT" else (128 + signal.SIGTERM,)
    assert proc.returncode in expected, err
    # besides progress lines ("[codegen] stage: s", printed for stages over 2 s: a loaded machine)
    report = [ln for ln in err.strip().splitlines() if not ln.startswith("[codegen] ")]
    assert len(report) == 1 and report[0].startswith("error: "), err
    assert _settled_listing(tmp) == []  # no krang_pybuild_*, no compiler temporaries
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing committed


@pytest.mark.system
def test_a_killed_python_builds_temporaries_are_removed_by_the_next_build(tmp_path):
    import signal

    from codegen.support import workdirs as build_dir
    proc, tmp = _start_python_build(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    stale = [p for p in tmp.iterdir() if p.name.startswith("krang_pybuild_")]
    assert stale, "SIGKILL leaves the build directory (no cleanup can run)"
    _settled_listing(tmp)
    alive = tmp / f"krang_pybuild_{build_dir._host()}_1_x"  # pid 1 is alive: not ours to remove
    alive.mkdir()
    assert sorted(build_dir.remove_stale(tmp)) == sorted(stale)  # what every build does first
    assert sorted(p.name for p in tmp.iterdir()) == [alive.name]
    commit.recover(tmp_path / "out")  # and the killed run's staging directory goes with the next commit
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _urdf_chain(n, inertia='ixx="0.3" iyy="0.25" izz="0.2"', declaration='<?xml version="1.0"?>'):
    links = "".join(f'<link name="l{i}"><inertial><mass value="1"/><inertia {inertia} ixy="0" ixz="0" iyz="0"/>'
                    f'</inertial></link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>' for i in range(1, n + 1))
    return f'{declaration}<robot name="chain">{links}{joints}</robot>'


@pytest.mark.parametrize("case", ["200 joints", "65 end effectors", "UTF-7 declaration", "negative inertia",
                                  "name with spaces"])
def test_hostile_urdfs_are_one_line_exit_2_before_any_derivation(tmp_path, case):
    import time
    urdf, extra = tmp_path / "r.urdf", []
    if case == "200 joints":
        urdf.write_text(_urdf_chain(200))
    elif case == "65 end effectors":
        urdf.write_text(_urdf_chain(3))
        for _ in range(65):
            extra += ["--end-effector", "l3"]
    elif case == "UTF-7 declaration":
        urdf.write_text(_urdf_chain(2, declaration='<?xml version="1.0" encoding="UTF-7"?>'))
    elif case == "negative inertia":
        urdf.write_text(_urdf_chain(2, inertia='ixx="-0.3" iyy="0.25" izz="0.2"'))
    else:
        urdf.write_text(_urdf_chain(2).replace('name="j1"', 'name=" j1"'))
    t0 = time.perf_counter()
    r = run(urdf, "--out", tmp_path / "out", *extra)
    assert r.returncode == 2, r.stderr
    assert_one_error_line(r)
    assert time.perf_counter() - t0 < 60  # the 200-joint chain derived for minutes before
    assert not (tmp_path / "out").exists()


@pytest.mark.system
def test_kernels_option_reaches_a_urdf_build(tmp_path):
    """--kernels core on a URDF: no derivative kernels in the header (it was ignored)."""
    urdf = Path(__file__).resolve().parent / "models" / "floating_tiny.urdf"
    from codegen import cli

    assert cli.main([str(urdf), "--out", str(tmp_path / "core"), "--end-effector", "foot", "--no-cache",
                     "--kernels", "core"]) == 0
    assert cli.main([str(urdf), "--out", str(tmp_path / "all"), "--end-effector", "foot", "--no-cache"]) == 0
    core = (tmp_path / "core" / "floating_tiny_kernels.h").read_text()
    full = (tmp_path / "all" / "floating_tiny_kernels.h").read_text()
    assert "_inverse_dynamics_derivatives(" in full and "_inverse_dynamics_derivatives(" not in core
    assert "_compute_A(" in core


def test_unknown_kernel_name_is_an_error(tmp_path):
    from codegen.pipeline import CodegenConfig, generate_from_files
    from codegen.read.model import ModelError

    with pytest.raises(ModelError, match="optional kernels"):
        generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=tmp_path, kernels=("compute_A",)))
    assert not any(tmp_path.iterdir())


def test_an_empty_output_directory_is_refused(tmp_path, capsys):
    """--out "" would write into the current directory: one error line, nothing written."""
    from codegen import cli
    assert cli.main([str(MINI), str(MINI_PARAMS), "--out", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "empty" in err


def test_urdf_with_a_mimic_joint_refused_by_default_read_with_mimic_independent(tmp_path):
    """Issue #38: a mimic joint never becomes an extra coordinate unsaid: refused in one line naming
    it and the option, or read as independent coordinates with --mimic independent, said by the
    summary line."""
    inertial = ('<inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
                'izz="0.01"/></inertial>')
    limit = '<limit lower="0" upper="0.04" velocity="0.2" effort="20"/>'
    urdf = tmp_path / "gripper.urdf"
    urdf.write_text(
        f'<robot name="gripper"><link name="base"/><link name="left">{inertial}</link>'
        f'<link name="right">{inertial}</link>'
        f'<joint name="finger_joint1" type="prismatic"><parent link="base"/><child link="left"/>'
        f'<axis xyz="0 1 0"/>{limit}</joint>'
        f'<joint name="finger_joint2" type="prismatic"><parent link="base"/><child link="right"/>'
        f'<axis xyz="0 -1 0"/>{limit}<mimic joint="finger_joint1"/></joint></robot>')
    r = run(urdf, "--out", tmp_path / "refused", "--no-cache")
    assert r.returncode == 2
    assert_one_error_line(r, "'finger_joint2' (mimics 'finger_joint1')", "--mimic independent")
    assert not (tmp_path / "refused").exists()
    assert_one_error_line(run(urdf, "--out", tmp_path / "bad", "--mimic", "modelled"), "--mimic", "invalid choice")
    r = run(urdf, "--out", tmp_path / "out", "--mimic", "independent", "--kernels", "core", "--no-cache")
    assert r.returncode == 0, r.stderr
    assert ("mimic joints as independent coordinates (--mimic independent, Pinocchio's mimic=False): "
            "finger_joint2 (mimics finger_joint1)") in r.stdout
    assert "#define GRIPPER_NDOF 2" in (tmp_path / "out" / "gripper_kernels.h").read_text()

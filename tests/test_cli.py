"""The command line (python -m codegen) and the atomic writing of outputs.

Every failure is exactly one line `error: ...` on stderr and a non-zero exit
status, never a traceback; a failure while writing leaves the output
directory as it was (no half-written set, no temporary files).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import codegen.generate as gen
from codegen.generate import CodegenConfig, generate_from_files

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
    r = run(MINI, MINI_PARAMS, "--out", tmp_path, "--name", "my robot")
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "my_robot_kernels.h").read_text()
    assert "void my_robot_compute_A(" in h and "#define MY_ROBOT_NDOF 3" in h


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


def test_python_option_is_one_error_line_or_works(tmp_path):
    import importlib.util
    r = run(MINI, MINI_PARAMS, "--out", tmp_path / "out", "--python")
    if importlib.util.find_spec("codegen.emit.python_module") is None:
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
    real = gen._write

    def failing(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(gen, "_write", failing)
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

    monkeypatch.setattr(gen.os, "replace", flaky)
    with pytest.raises(OSError):
        generate_from_files(MINI, MINI_PARAMS, CodegenConfig(out_dir=old_outputs))
    monkeypatch.setattr(gen.os, "replace", real)
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
    prefix = gen._stage_prefix()
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
    rc = cli.main([str(urdf), "--out", str(out), "--name", "arm 2", "--end-effector", "tool",
                   "--end-effector", "slider", "--no-snap", "--emit-model"])
    assert rc == 0, capsys.readouterr().err
    assert calls == [(str(urdf), "arm 2", ("tool", "slider"), False, False)]
    assert sorted(p.name for p in out.iterdir()) == ["arm_2.toml", "arm_2_kernels.c", "arm_2_kernels.h",
                                                     "arm_2_params.toml"]
    assert (out / "arm_2.toml").read_text() == MINI.read_text()
    header = (out / "arm_2_kernels.h").read_text()
    assert f"URDF file        {hashlib.sha256(urdf.read_bytes()).hexdigest()}" in header
    # the emitted model regenerates the same C with the TOML form
    rc = cli.main([str(out / "arm_2.toml"), str(out / "arm_2_params.toml"), "--out", str(tmp_path / "again"),
                   "--name", "arm 2"])
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

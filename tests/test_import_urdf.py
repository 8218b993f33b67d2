"""codegen.import_urdf and the module cache (codegen.build.cache, codegen.urdf):
a second process imports in under a second without the generator, a corrupt
entry is rebuilt, two concurrent processes build once, new options or a new
URDF make a new entry; the command line shares the cache; --no-friction
matches Pinocchio's rnea and the default includes the URDF's <dynamics>."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
# Two revolute joints, one with <dynamics>, a 1.5707963268 rpy that snapping rounds to pi/2.
URDF = """<?xml version="1.0"?>
<robot name="two_link_description">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.02 0.01 0.15" rpy="0.1 0.2 0.3"/><mass value="3.0"/>
    <inertia ixx="0.03" ixy="0.001" ixz="0.002" iyy="0.035" iyz="0.0" izz="0.01"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.2 0 0.0" rpy="0 0 0"/><mass value="2.0"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.25" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/><dynamics damping="0.7" friction="0.3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.1 0 0.3" rpy="1.5707963268 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <joint name="flange" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="0.4 0 0"/></joint>
</robot>
"""
DAMPING, COULOMB = np.array([0.7, 0.0]), np.array([0.3, 0.0])


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A cache of this module's own, and the URDF; the first build happens here."""
    base = tmp_path_factory.mktemp("import_urdf")
    urdf = base / "two_link.urdf"
    urdf.write_text(URDF)
    env = dict(os.environ, KRANG_KERNELS_CACHE=str(base / "cache"), PYTHONPATH=str(ROOT))
    return base, urdf, env


def child(env, code, timeout=600):
    """Run Python code in a fresh process; (stdout's last line as JSON, stderr)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


IMPORT = """
import json, sys, time
import numpy  # imported by every module anyway; ~0.2 s alone, several on a loaded machine
t0 = time.perf_counter()
import codegen
m = codegen.import_urdf({urdf!r}, end_effectors=["tool"]{extra})
dt = time.perf_counter() - t0
q = [0.3, -0.7]
print(json.dumps(dict(seconds=dt, sympy="sympy" in sys.modules, name=m.__name__, file=m.__file__,
                      A=m.compute_A(q).tolist(), J=m.jacobian(q, "tool").tolist())))
"""


def entries(base):
    root = base / "cache" / "v1"
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


def test_build_then_hit_in_a_second_process_under_a_second(env):
    base, urdf, e = env
    first, err = child(e, IMPORT.format(urdf=str(urdf), extra=""))
    assert "[codegen] NAME=two_link (module two_link_kernels)" in err  # built: the summary line
    assert first["name"] == "two_link_kernels"  # from the file name, not <robot name>
    hits = [child(e, IMPORT.format(urdf=str(urdf), extra="")) for _ in range(2)]
    for hit, err in hits:
        assert "[codegen]" not in err  # not rebuilt
        assert not hit["sympy"]  # the hit path does not import the generator
        assert hit["A"] == first["A"] and hit["J"] == first["J"] and hit["file"] == first["file"]
    seconds = min(h["seconds"] for h, _ in hits)
    print(f"cache hit in a new process: import codegen + import_urdf {seconds * 1e3:.0f} ms (after numpy)")
    assert seconds < 1.0
    assert len(entries(base)) == 1


def test_same_process_returns_the_imported_module(env, monkeypatch):
    base, urdf, e = env
    monkeypatch.setenv("KRANG_KERNELS_CACHE", e["KRANG_KERNELS_CACHE"])
    import codegen
    m = codegen.import_urdf(urdf, end_effectors=["tool"])
    t0 = time.perf_counter()
    again = codegen.import_urdf(urdf, end_effectors=["tool"])
    assert again is m and time.perf_counter() - t0 < 0.5


def test_corrupt_entry_is_rebuilt_never_used(env):
    base, urdf, e = env
    child(e, IMPORT.format(urdf=str(urdf), extra=""))
    (entry,) = [base / "cache" / "v1" / n for n in entries(base)]
    so = next(p for p in entry.iterdir() if p.suffix == ".so")
    good = so.read_bytes()
    # a truncated extension (importing it could crash). Written as a new file: this test
    # process has the entry's module mapped (test_same_process...), and truncating a mapped
    # file in place is SIGBUS for its users (the cache itself never rewrites a file in place)
    (entry / "cut").write_bytes(good[:len(good) // 2])
    os.replace(entry / "cut", so)
    again, err = child(e, IMPORT.format(urdf=str(urdf), extra=""))
    assert "[codegen] NAME=two_link" in err, "a corrupt entry must be rebuilt"
    assert again["file"] == str(so)  # the same entry (same key), rebuilt in place
    assert len(so.read_bytes()) > len(good) // 2 and again["A"] is not None  # a new, whole extension
    assert len(entries(base)) == 1  # other damage (missing file, bad manifest): tests/test_build_cache.py


def test_two_concurrent_processes_build_once(tmp_path, env):
    _, urdf, e = env
    e = dict(e, KRANG_KERNELS_CACHE=str(tmp_path / "cache"))
    code = textwrap.dedent(IMPORT.format(urdf=str(urdf), extra=""))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=e, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    built = [err.count("[codegen] NAME=") for _, err in outs]
    assert sorted(built) == [0, 1], built  # one built, the other waited and imported it
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert results[0]["A"] == results[1]["A"] and results[0]["file"] == results[1]["file"]
    assert not list((tmp_path / "cache" / "v1").glob(".build-*"))


@pytest.mark.system
def test_options_and_content_make_new_entries_and_friction_is_stated(env, tmp_path):
    """friction=False: a new entry, inverse_dynamics equal to Pinocchio's rnea; the default
    adds the URDF's damping dq + friction sign(dq); an edited URDF: another entry."""
    pin = pytest.importorskip("pinocchio")
    base, urdf, e = env
    code = IMPORT.replace("print(json.dumps(dict(", "print(json.dumps(dict(tau=m.inverse_dynamics(q, dq, "
                          "ddq).tolist(), ").replace("q = [0.3, -0.7]", "q, dq, ddq = [0.3, -0.7], [0.5, -1.1], "
                                                                     "[0.2, 0.4]")
    on, _ = child(e, code.format(urdf=str(urdf), extra=""))  # the default entry, whichever test ran first
    before = set(entries(base))
    off, err_off = child(e, code.format(urdf=str(urdf), extra=", friction=False"))
    assert "friction: off" in err_off
    assert len(set(entries(base)) - before) == 1
    model = pin.buildModelFromUrdf(str(urdf))
    q, dq, ddq = np.array([0.3, -0.7]), np.array([0.5, -1.1]), np.array([0.2, 0.4])
    rnea = pin.rnea(model, model.createData(), q, dq, ddq)
    # snapping moved j2's rotation by ~3e-11: agreement to that order, not 1e-15
    np.testing.assert_allclose(off["tau"], rnea, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.array(on["tau"]) - rnea, DAMPING * dq + COULOMB * np.sign(dq), rtol=0, atol=1e-9)
    edited = tmp_path / "two_link.urdf"
    edited.write_text(URDF.replace('mass value="2.0"', 'mass value="2.5"'))
    again, _ = child(e, IMPORT.format(urdf=str(edited), extra=""))
    assert len(set(entries(base)) - before) == 2
    assert again["A"] != on["A"]


@pytest.mark.system
def test_command_line_shares_the_cache_and_removes_stale_products(env, tmp_path):
    base, urdf, e = env
    out = tmp_path / "out"
    run = lambda *a: subprocess.run([sys.executable, "-m", "codegen", str(urdf), "--out", str(out), *a],  # noqa: E731
                                    env=e, capture_output=True, text=True, timeout=900, cwd=ROOT)
    r = run("--end-effector", "tool", "--python")
    assert r.returncode == 0, r.stderr
    assert "NAME=two_link (module two_link_kernels)" in r.stdout and "friction: from URDF <dynamics> on 1" in r.stdout
    assert "snapping: " in r.stdout and "entries moved" in r.stdout
    so = [p.name for p in out.iterdir() if p.suffix == ".so"]
    assert len(so) == 1
    before = entries(base)
    r = run("--end-effector", "tool", "--python")  # the same options as import_urdf(..., ["tool"]): one entry
    assert r.returncode == 0 and entries(base) == before
    # regenerating without --python: the old module must not stay next to the new header
    r = run("--end-effector", "tool")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["two_link_kernels.c", "two_link_kernels.h"]
    # --no-cache: no new entry
    before = entries(base)
    r = run("--end-effector", "tool", "--no-snap", "--no-cache")
    assert r.returncode == 0 and entries(base) == before and "snapping: off" in r.stdout


def test_no_end_effector_warns_and_jacobian_says_there_are_none(env):
    _, urdf, e = env
    code = """
    import json, warnings
    import codegen
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m = codegen.import_urdf({urdf!r}, quiet=True)
    try:
        m.jacobian([0.1, 0.2], 0)
        msg = None
    except ValueError as exc:
        msg = str(exc)
    print(json.dumps(dict(warnings=[str(x.message) for x in w], msg=msg)))
    """
    res, _ = child(e, code.format(urdf=str(urdf)))
    assert any("no end effector given" in w and "l2" in w for w in res["warnings"]), res
    assert res["msg"] and "no end effectors" in res["msg"]


@pytest.mark.parametrize("name", ["two link", "2link", "_two", "two-link", "tw\u00f6", ""])
def test_name_not_an_identifier_is_one_clear_error(tmp_path, monkeypatch, name):
    """name= is the module name and the C prefix as given: anything else raises one ValueError
    before any work (no cache entry, no build), naming the rule and a name that would do."""
    import codegen
    from codegen.support.options import check_robot_name as check_name

    monkeypatch.setenv("KRANG_KERNELS_CACHE", str(tmp_path / "cache"))
    urdf = tmp_path / "two_link.urdf"
    urdf.write_text(URDF)
    with pytest.raises(ValueError) as info:
        codegen.import_urdf(urdf, end_effectors=["tool"], name=name, quiet=True)
    msg = str(info.value)
    assert "\n" not in msg and "C identifier / Python module name" in msg and repr(name) in msg
    assert check_name(msg.split("e.g. '")[1].split("'")[0])  # the suggestion would do
    assert not (tmp_path / "cache").exists()


def test_native_builds_are_keyed_by_the_cpu_and_compiled_once_per_kernel(tmp_path, monkeypatch):
    """import_urdf's default (native) entry differs from the portable one, and its key
    changes with what -march=native means to the compiler; the native flags build
    one copy of each kernel (no target_clones), the portable ones keep them."""
    from codegen.build import cache as build_cache
    from codegen.build.module import compile_flags
    from codegen.urdf import cache_key
    from codegen.support.options import UrdfOptions

    data = URDF.encode()
    native, parts = cache_key(data, "two_link.urdf", UrdfOptions(native=True))
    portable, pparts = cache_key(data, "two_link.urdf", UrdfOptions(native=False))
    assert native != portable and "native_target" in parts and "native_target" not in pparts
    assert len(parts["native_target"]) == 64  # this machine's compiler answered
    monkeypatch.setattr(build_cache, "_NATIVE_TARGET", {k: "0" * 64 for k in build_cache._NATIVE_TARGET})
    assert cache_key(data, "two_link.urdf", UrdfOptions(native=True))[0] != native  # another CPU: another entry
    assert "-march=native" in compile_flags(True) and "-DKK_TARGET_CLONES" not in compile_flags(True)
    assert "-march=native" not in compile_flags(False) and "-DKK_TARGET_CLONES" in compile_flags(False)


@pytest.mark.parametrize("kernels, error", [("forward_dynamics_derivatives", TypeError),
                                            (["inverse_dynamics_derivatives"] * 2, ValueError)])
def test_kernels_option_is_a_list_of_distinct_names(kernels, error):
    from codegen.support.options import UrdfOptions

    with pytest.raises(error):
        UrdfOptions(kernels=kernels)
    assert UrdfOptions(kernels=["inverse_dynamics_derivatives", "forward_dynamics_derivatives"]).kernels == \
        UrdfOptions(kernels=("forward_dynamics_derivatives", "inverse_dynamics_derivatives")).kernels


def test_the_codegen_package_sizes_sympys_cache_before_sympy_loads():
    """codegen/__init__.py: import_urdf and generate() get the CLI's large SymPy cache."""
    env = {k: v for k, v in os.environ.items() if k != "SYMPY_CACHE_SIZE"}
    code = "import codegen.pipeline, sympy.core.cache as c; print(c.SYMPY_CACHE_SIZE)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout
    assert out.strip() == "100000"


def test_a_build_reports_each_compiled_part_unless_quiet(env):
    """One line per compiled part as it finishes (the longest step of a big robot's build), on the
    real stderr though the build's own output is captured; none with quiet=True. The suite turns
    timing lines off (tests/conftest.py): this child turns them back on."""
    base, urdf, e = env
    loud = {k: v for k, v in e.items() if k != "KRANG_CODEGEN_PROGRESS"}
    code = IMPORT.format(urdf=str(urdf), extra=', cache=False, kernels=(), name="parts_shown"{quiet}')
    _, err = child(loud, code.replace("{quiet}", ""))
    parts = [ln for ln in err.splitlines() if ln.startswith("[codegen] compiled ")]
    assert len(parts) >= 2 and parts[-1].endswith(" s"), err
    n = int(parts[0].split(" of ")[1].split(")")[0])
    assert [int(ln.split("(")[1].split(" of ")[0]) for ln in parts] == list(range(1, n + 1)), err
    _, err = child(loud, code.replace("{quiet}", ", quiet=True"))
    assert err == "", err

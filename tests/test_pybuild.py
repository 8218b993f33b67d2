"""The Python module of a robot that is not Krang, built from the templates.

tests/models/mini.toml -> codegen.pipeline (C) -> codegen.emit.python_module and module_build
(.pyx/.pyi, Cython + setuptools) -> an importable `mini_kernels` in a
temporary directory, checked against Pinocchio (reference/pin_reference.py, built
from the same frame table) and the numpy reference for friction; its stub
parses and lists the whole public API; krang_kernels' committed module is
what the template renders today.
"""
from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from codegen.derive.base_parameters import base_set
from codegen.emit.abi import describe
from codegen.pipeline import generate_from_files
from codegen.read.model import load_model, load_param_values
from codegen.build.log import BuildError
from codegen.build.module import FLAGS, X86_FLAGS, build_python_module, compile_module
from codegen.emit.python_module import write_python_module

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODEL_PATH = HERE / "models" / "mini.toml"
PARAMS_PATH = HERE / "models" / "mini_params.toml"
TOL = 1e-10


def _test_helper(name):
    """A shared reference (reference/: pin_reference, reference_fk), imported on first use
    (pin_reference needs Pinocchio)."""
    return importlib.import_module(f"reference.{name}")


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """mini's C and Python module, built once; the module imported from its file."""
    out = tmp_path_factory.mktemp("mini_py")
    model = load_model(MODEL_PATH)
    values = load_param_values(PARAMS_PATH, model)
    generate_from_files(MODEL_PATH, PARAMS_PATH, out)
    # an unknown config attribute is ignored
    so = build_python_module(describe(model), model, values, out, SimpleNamespace(name=None, colour="blue"))
    assert so.parent == out.resolve() and so.name.startswith("mini_kernels.")
    spec = importlib.util.spec_from_file_location("mini_kernels", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return SimpleNamespace(dir=out, so=so, mod=mod, model=model, values=np.array(values))


def test_metadata(mini):
    mk, model = mini.mod, mini.model
    assert mk.N_DOF == model.ndof == 3
    assert mk.N_PARAMS == len(model.param_names)
    assert mk.JOINT_NAMES == model.joint_names
    assert mk.PARAM_NAMES == model.param_names
    assert mk.END_EFFECTORS == model.ee_names == ("tool", "slider")
    # the defaults are the parameter file's values, bit for bit
    assert mk.default_params().tobytes() == mini.values.tobytes()
    assert set(mk.JOINT_LIMITS) == {"lower", "upper", "velocity", "effort"}
    for key, arr in mk.JOINT_LIMITS.items():
        want = [np.nan if getattr(f.limits, key, None) is None else getattr(f.limits, key) for f in model.joints]
        np.testing.assert_array_equal(arr, want)
        assert not arr.flags.writeable
    with pytest.raises(TypeError):
        mk.JOINT_LIMITS["lower"] = None


def test_matches_pinocchio(mini):
    pytest.importorskip("pinocchio")
    pr, fk = _test_helper("pin_reference"), _test_helper("reference_fk")
    mk, model = mini.mod, mini.model
    rng = np.random.default_rng(7)
    sets = [mini.values, fk.random_physical_params(model, rng), fk.random_physical_params(model, rng)]
    worst = 0.0
    for p in sets:
        pm, _ = pr.build_pin_model(model, p)
        data = pm.createData()
        num = fk.NumericModel(model, p)
        qs, dqs = fk.random_states(rng, 8, model.ndof)
        for q, dq in zip(qs, dqs):
            ref = pr.pin_reference(pm, data, q, dq)
            got = {"A": mk.compute_A(q, p), "C": mk.compute_C(q, dq, p), "Q": mk.compute_Q(q, p)}
            for i, ee in enumerate(mk.END_EFFECTORS):
                for frame in ("world", "local"):
                    got[f"J_{ee}_{frame}"] = mk.jacobian(q, ee, frame, p)
                    # by index: the very same numbers
                    assert mk.jacobian(q, i, frame, p).tobytes() == got[f"J_{ee}_{frame}"].tobytes()
            for key, value in got.items():
                worst = max(worst, fk.rel_err(value, ref[key]))
            assert fk.rel_err(mk.friction(dq, p), num.friction(dq)) <= TOL
            allr = mk.compute_all(q, dq, p)
            assert sorted(allr) == sorted(["A", "C", "Q", "friction"] + [f"J_{e}" for e in mk.END_EFFECTORS])
            assert allr["friction"].tobytes() == mk.friction(dq, p).tobytes()
            for key in ("A", "C", "Q"):
                worst = max(worst, fk.rel_err(allr[key], ref[key]))
            for ee in mk.END_EFFECTORS:
                worst = max(worst, fk.rel_err(allr[f"J_{ee}"], ref[f"J_{ee}_world"]))
    assert worst <= TOL, worst


def test_controller_api_and_batches(mini):
    """Another robot's module has the controller functions (per end effector
    through the dispatchers) and batches: vs Pinocchio, and batch == per state."""
    pin = pytest.importorskip("pinocchio")
    pr, fk = _test_helper("pin_reference"), _test_helper("reference_fk")
    mk, model = mini.mod, mini.model
    assert {"inverse_dynamics", "bias", "forward_dynamics", "fk", "jdot_qdot"} <= set(mk.__all__)
    assert not any(n.startswith(("fk_", "jdot_qdot_", "jacobian_")) for n in mk.__all__)
    rng = np.random.default_rng(8)
    n = model.ndof
    for p in (mini.values, fk.random_physical_params(model, rng)):
        pm, frame_ids = pr.build_pin_model(model, p)
        data = pm.createData()
        num = fk.NumericModel(model, p)
        qs, dqs = rng.uniform(-3, 3, (5, n)), rng.uniform(-2, 2, (5, n))
        ddqs, taus = rng.uniform(-3, 3, (5, n)), rng.uniform(-5, 5, (5, n))
        batch = {"tau": mk.inverse_dynamics(qs, dqs, ddqs, p), "h": mk.bias(qs, dqs, p),
                 "ddq": mk.forward_dynamics(qs, dqs, taus, p)}
        for k, (q, dq, ddq, tau) in enumerate(zip(qs, dqs, ddqs, taus)):
            fr = num.friction(dq)
            one = {"tau": mk.inverse_dynamics(q, dq, ddq, p), "h": mk.bias(q, dq, p),
                   "ddq": mk.forward_dynamics(q, dq, tau, p)}
            # the batch kernels (SIMD across states) equal the scalar ones to the rounding of
            # the multiply-adds the compiler contracts in other places
            assert all(fk.rel_err(batch[key][k], one[key]) <= 1e-14 for key in one)
            assert fk.rel_err(one["tau"], pin.rnea(pm, data, q, dq, ddq) + fr) <= TOL
            assert fk.rel_err(one["h"], pin.nonLinearEffects(pm, data, q, dq)) <= TOL
            assert fk.rel_err(one["ddq"], pin.aba(pm, data, q, dq, tau - fr)) <= TOL
            pin.forwardKinematics(pm, data, q, dq, np.zeros(n))
            pin.updateFramePlacements(pm, data)
            for i, ee in enumerate(mk.END_EFFECTORS):
                fid = frame_ids[ee]
                acc = pin.getFrameClassicalAcceleration(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
                T = mk.fk(q, ee, p)
                assert fk.rel_err(T, data.oMf[fid].homogeneous) <= TOL
                assert mk.fk(q, i, p).tobytes() == T.tobytes()
                assert mk.fk(qs, ee, p)[k].tobytes() == T.tobytes()
                a = mk.jdot_qdot(q, dq, ee, p)
                assert fk.rel_err(a, np.concatenate([acc.linear, acc.angular])) <= TOL
                assert mk.jdot_qdot(qs, dqs, i, p)[k].tobytes() == a.tobytes()


def test_input_checks_are_shared(mini):
    """The generated module has krang_kernels' checks: byte order, out=, ee, params."""
    mk = mini.mod
    q = np.array([0.3, -1.2, 0.05])
    ref = mk.compute_Q(q)
    assert mk.compute_Q(q.astype(">f8")).tobytes() == ref.tobytes()
    with pytest.raises(TypeError, match=r"\bout\b"):
        mk.compute_Q(q, out=np.zeros(3, dtype=">f8"))
    with pytest.raises(ValueError, match=r"\bee\b.*'tool', 'slider'"):
        mk.jacobian(q, "left")
    with pytest.raises(ValueError, match=r"\bq\[1\]"):
        mk.compute_A([0.0, np.nan, 0.0])
    with pytest.raises(TypeError, match="m_a"):
        mk.params_from_dict({"m_a": "2.0"})
    assert mk.params_from_dict({"m_a": 2})[mk.PARAM_NAMES.index("m_a")] == 2.0


def test_stub_lists_the_public_api(mini):
    stub = (mini.dir / "mini_kernels.pyi").read_text()
    tree = ast.parse(stub)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    names = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    mk = mini.mod
    public = set(mk.__all__)
    assert {n for n in public if callable(getattr(mk, n))} == functions
    assert public == functions | names
    (stub_all,) = [ast.literal_eval(n.value) for n in tree.body
                   if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"]
    assert stub_all == mk.__all__
    # every stub signature names the module's actual parameters, in order
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = [a.arg for a in node.args.args + node.args.kwonlyargs]
            code = getattr(mk, node.name)
            sig = inspect.signature(code)
            assert args == list(sig.parameters), node.name


def test_importable_from_its_directory(mini):
    """The user's way: a fresh interpreter with cwd=out_dir, or PYTHONPATH=out_dir."""
    code = "import mini_kernels as m; print(m.N_DOF, m.END_EFFECTORS[1], m.compute_Q([0, 0, 0]).shape)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", code], cwd=mini.dir, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "slider", "(3,)"]
    env["PYTHONPATH"] = str(mini.dir)
    r = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_build_needs_the_c_sources(tmp_path):
    model = load_model(MODEL_PATH)
    with pytest.raises(FileNotFoundError, match="mini_kernels.c"):
        build_python_module(describe(model), model, [], tmp_path, SimpleNamespace(name="mini"))


def test_committed_krang_module_is_current(tmp_path):
    """krang_kernels/_kernels.pyx and .pyi are exactly what the template renders."""
    model = load_model(ROOT / "models" / "krang.toml")
    values = load_param_values(ROOT / "models" / "krang_params.toml", model)
    # as `make generate` renders it: with the base parameters the generator chooses
    written = write_python_module(describe(model, nbase=base_set(model, values).nbase), model, values, tmp_path,
                                  "_kernels")
    for path in written:
        committed = ROOT / "krang_kernels" / path.name
        assert committed.read_bytes() == path.read_bytes(), f"{committed.name}: run `make generate`"
        assert "DO NOT EDIT" in "".join(committed.read_text().splitlines()[:5])
    assert (ROOT / "krang_kernels" / "py.typed").is_file()


def test_setup_uses_the_same_flags():
    """setup.py loads codegen/build/flags.py by its path (the one place of the flags)."""
    helpers = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_helpers")
    for name, want in (("FLAGS", FLAGS), ("X86_FLAGS", X86_FLAGS)):
        assert helpers[name] == want
    assert "FLAGS = [" not in (ROOT / "setup.py").read_text()  # no second copy


def test_setup_compiles_every_part_of_the_committed_c_once(tmp_path):
    """setup.py compiles generated/krang_kernels.c as its parts (concurrently):
    one file per part 1..KKNPARTS, each defining its own KKPART, the part of the
    kernel with the most operations (or of its batch form) first."""
    kernel_parts = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_helpers")["kernel_parts"]
    c_file = ROOT / "generated" / "krang_kernels.c"
    text = c_file.read_text()
    n = int(re.search(r"^#define KKNPARTS (\d+)$", text, re.M)[1])
    files = [Path(f) for f in kernel_parts(c_file, tmp_path)]
    defined = [int(re.search(r"^#define KKPART (\d+)$", f.read_text(), re.M)[1]) for f in files]
    assert sorted(defined) == list(range(1, n + 1))
    assert all('#include "krang_kernels.c"' in f.read_text() for f in files)
    ops = {m[1]: int(m[2]) for m in re.finditer(r"^ \*   krang_(\w+) +(\d+)$", text, re.M)}
    heaviest = max(ops, key=ops.get)
    first_part = re.search(rf"^ \*   {defined[0]} [^\n]*:\n((?: \*     [^\n]*\n)+)", text, re.M)[1]
    # a batch kernel weighs twice the kernel it reprints (codegen.pipeline.part_weights): the
    # heaviest kernel's batch form (that of its form without fext, which forwards to it) goes first
    assert {heaviest, heaviest.removesuffix("_fext") + "_batch"} & set(re.findall(r"\w+", first_part))
    assert kernel_parts(c_file, tmp_path) == list(map(str, files))  # rerun: the same files, unchanged


# ---------------------------------------------------------------------------
# build output: quiet on success, one line on failure
# ---------------------------------------------------------------------------

# A tiny module (fast to build) whose C source draws a warning gcc gives by
# default (-Wdiv-by-zero), and the same with a C error or a Cython error.
TINY_PYX = 'cdef extern from "tiny.h":\n    int tiny_one()\n\ndef one():\n    return tiny_one()\n'
TINY_C = "#include \"tiny.h\"\nint tiny_one(void) { int zero = 0; (void)zero; return 1 + 0 * (1 / 0); }\n"


def _tiny(dest: Path, pyx_extra: str = "", c_extra: str = ""):
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "tiny.h").write_text("int tiny_one(void);\n")
    (dest / "tiny_impl.c").write_text(TINY_C + c_extra)
    (dest / "tiny.pyx").write_text(TINY_PYX + pyx_extra)
    return dest / "tiny.pyx", [dest / "tiny_impl.c"], [dest]


def _one_error_line(message: str, *needles):
    assert "\n" not in message and message.startswith("the Python module tiny did not compile: ")
    assert len(message) < 1200, message
    for needle in needles:
        assert needle in message, message


def test_successful_build_prints_nothing(tmp_path, capfd):
    """No gcc warning (the tiny source draws one), no progress line."""
    pyx, c_sources, include = _tiny(tmp_path)
    so = compile_module("tiny", pyx, c_sources, include, tmp_path)
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed
    spec = importlib.util.spec_from_file_location("tiny", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.one() == 1


def test_c_error_is_one_line_with_the_first_compiler_errors(tmp_path, capfd):
    pyx, c_sources, include = _tiny(tmp_path, c_extra="int kk_broken(void) { return undeclared_thing + ; }\n")
    with pytest.raises(BuildError) as info:
        compile_module("tiny", pyx, c_sources, include, tmp_path)
    _one_error_line(str(info.value), "tiny_impl.c:", "error:", "undeclared_thing")
    assert str(tmp_path) not in str(info.value)  # directories dropped
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed


def test_cython_error_is_one_line(tmp_path, capfd):
    pyx, c_sources, include = _tiny(tmp_path, pyx_extra="\ndef broken(:\n    pass\n")
    with pytest.raises(BuildError) as info:
        compile_module("tiny", pyx, c_sources, include, tmp_path)
    _one_error_line(str(info.value), "tiny.pyx:")
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed


def test_cli_build_failure_exit_1_one_line(tmp_path, capsys, monkeypatch):
    """A compile failure of generated code is an internal error (exit 1),
    its one line carrying the compiler's first error."""
    from codegen import cli
    from codegen.build import module as module_build

    monkeypatch.setattr(module_build, "FLAGS", [*FLAGS, "-fno-such-flag-krang"])
    rc = cli.main([str(MODEL_PATH), str(PARAMS_PATH), "--out", str(tmp_path / "out"), "--python"])
    err = capsys.readouterr().err
    assert rc == 1, err
    lines = [ln for ln in err.splitlines() if not ln.startswith("[codegen]")]  # progress lines of slow steps
    assert len(lines) == 1 and lines[0].startswith("error: internal error (BuildError): the Python module "
                                                   "mini_kernels did not compile: "), err
    assert "-fno-such-flag-krang" in lines[0], err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("mini_kernels*")), "nothing committed"

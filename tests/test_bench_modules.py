"""The benchmark package's pure parts: the end-effector adapter, row keys, the robot header the
C harness includes, the dump layout, the report text, and the Pinocchio models' end-effector
frames. Nothing is timed and no Pinocchio C++ is compiled here."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import crocoddyl_quadruped, docs_tables, efficiency, pin_model
from benchmarks.build import tick_code
from benchmarks.python_level import pin_ees, python_pin_outputs
from benchmarks.report import report_text
from benchmarks.robot import (EE, end_effectors, group_key, group_label, kernel_set, robot_header_text,
                              tick_group)
from benchmarks.timing import compare, read_dump
from codegen.read.model import load_model, load_param_values

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "models" / "mini.toml"


def test_end_effector_adapter_reads_pairs_and_records():
    pairs = SimpleNamespace(end_effectors=(("left", "10l"), ("right", "10r")))
    assert end_effectors(pairs) == [EE("left", "10l"), EE("right", "10r")]
    rec = SimpleNamespace(name="tool", frame="7", rotation=None, origin=(0, 0, 0.1))
    assert end_effectors(SimpleNamespace(end_effectors=(rec,))) == [EE("tool", "7", (0, 0, 0.1))]


def test_row_keys():
    assert (group_key(["left", "right"]), group_label(["left", "right"]), tick_group(["left", "right"])) == \
        ("J_both", "J_left + J_right", "J_left+J_right")
    assert group_key(["a", "b", "c"]) == "J_all"


def _fake_kernels(tmp_path, direct=True):
    fns = ["void bot_compute_A(const double *q, const double *p, double *A);",
           "void bot_jacobian(const double *q, const double *p, int ee, int frame, double *J);",
           "void bot_compute_all(const double *q, const double *dq, const double *p, double *A, double *C, "
           "double *Q, double *J_a, double *J_b, double *J_c);"]
    if direct:
        fns += [f"void bot_jacobian_{n}_world(const double *q, const double *p, double *J);" for n in "abc"]
    (tmp_path / "bot_kernels.h").write_text("\n".join(fns) + "\n")
    (tmp_path / "bot_kernels.c").write_text("")
    return kernel_set(tmp_path, "bot", ("a", "b", "c"))


def test_robot_header_names_every_end_effector(tmp_path):
    ks = _fake_kernels(tmp_path)
    assert ks.direct == ("bot_jacobian_a_world", "bot_jacobian_b_world", "bot_jacobian_c_world")
    assert ks.has_all and not ks.has_friction
    text = robot_header_text(ks)
    assert '#define BR_EE_NAMES {"a", "b", "c"}' in text
    assert "bot_jacobian_b_world(q, p, J[1]); BENCH_MARK(5); bot_jacobian_c_world(q, p, J[2])" in text
    assert "bot_compute_all(q, dq, p, A, C, Q, J[0], J[1], J[2])" in text
    assert "left" not in text and "krang" not in text
    (tmp_path / "plain").mkdir()
    plain = robot_header_text(_fake_kernels(tmp_path / "plain", direct=False))
    assert "bot_jacobian(q, p, 2, BR_WORLD, J[2])" in plain and "BR_HAVE_DIRECT 0" in plain


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_bench_c_compiles_against_the_krang_kernels(tmp_path):
    ks = kernel_set(ROOT / "generated", "krang", ("left", "right"))
    (tmp_path / "bench_robot.h").write_text(robot_header_text(ks))
    harness = ROOT / "benchmarks" / "harness"
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{ks.gen_dir}",
                        f"-I{tmp_path}", f"-I{harness}", str(harness / "bench_c.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_read_dump_layout(tmp_path):
    nd, ees = 3, ["a", "b"]
    per = 2 * nd * nd + nd + 6 * nd * len(ees)
    np.arange(2 * per, dtype="<f8").tofile(tmp_path / "d.bin")
    d = read_dump(tmp_path / "d.bin", nd, 2, ees)
    assert d[1]["A"][0, 0] == per and d[1]["Q"][0] == per + 2 * nd * nd
    assert d[0]["J_b"][0, 0] == 2 * nd * nd + nd + 6 * nd and d[0]["J_b"].shape == (6, nd)
    res = compare(d, d, [np.ones(nd)] * 2)
    assert set(res) == {"A", "C", "Q", "J_a", "J_b", "C*dq"} and max(res.values()) == 0


def _stats(v):
    return dict(median=v, lo=v, hi=v, n=1)


def test_report_tables_from_a_synthetic_summary():
    ees = ("left", "right")
    ours = {"A": 250.0, "C": 700.0, "Q": 60.0, "J_left": 50.0, "J_right": 55.0, "J_both": 110.0, "all": 1500.0}
    pin = {"A": 1000.0, "C": 4000.0, "Q": 1200.0, "J_left": 500.0, "J_right": 480.0, "J_both": 990.0,
           "J_both_alljac": 850.0, "J_both_framejac": 950.0}
    summary = {"ours": {k: _stats(v) for k, v in ours.items()}, "pin": {k: _stats(v) for k, v in pin.items()}}
    info = dict(date="2030-01-02T03:04:05", cpu="Test CPU", flags_ours="-O3")
    agreement = {"ours vs pin C++": {"A": 1e-16, "C": 2e-15, "Q": 3e-16, "J_left": 4e-16, "J_right": 5e-16,
                                     "C*dq": 6e-16}}
    text, rows = report_text(info, summary, agreement, [], "skipped", [], "not measured", ees)
    assert "| A | 250 | 1,000 | 0.25 | n/a | crba (upper triangle, Convention::LOCAL) |" in text
    assert ("| J_left + J_right | 110 | 850 | 0.129 | n/a | fastest of three: computeJointJacobians + "
            "2 getJointJacobian(LOCAL_WORLD_ALIGNED) |") in text
    # the sum of Pinocchio's four: A + C + Q + the fastest Jacobian pair
    assert "| compute_all vs sum of pin's four | 1,500 | 7,050 |" in text
    assert "| pair | A | C | C*dq | Q | J_left | J_right |" in text
    assert rows[0][:3] == ("A", 250.0, 1000.0)
    # docs_tables copies the first table under the C / C++ heading
    table = docs_tables.first_table(text, "## C / C++ level")
    assert table[0].startswith("| kernel | ours ns") and len(table) == 2 + len(rows)


def test_end_effector_frames_agree_between_the_two_pinocchio_models(tmp_path):
    """mini's 'tool' sits on a fixed frame; an extra offset moves it off every joint axis. The
    axis-aligned URDF model and the frame-table model must give the same world Jacobians."""
    pytest.importorskip("pinocchio")
    model = load_model(MINI)
    params = load_param_values(ROOT / "tests" / "models" / "mini_params.toml", model)
    rec = SimpleNamespace(name="tool", frame="ta", rotation=None, origin=(0.1, -0.2, 0.3))
    model = dataclasses.replace(model, end_effectors=(rec, *model.end_effectors[1:]))
    frames = [(e.name, pin_model.ee_frame_name(e.name)) for e in end_effectors(model)]
    ali = pin_model.build_aligned(model, params, tmp_path / "mini.urdf")
    una = pin_model.build_unaligned(model, params)
    rng = np.random.default_rng(3)
    q, dq = rng.uniform(-3, 3, (4, model.ndof)), rng.uniform(-2, 2, (4, model.ndof))
    outs = [python_pin_outputs(m, pin_model.q_permutation(m, model), pin_ees(m, frames), q, dq) for m in (ali, una)]
    assert np.abs(outs[1][0]["J_tool"][:3]).max() > 0.1  # the offset shows in the linear rows
    assert max(compare(*outs, dq).values()) < 1e-12
    text = pin_model.harness_model_text(ali, model, tmp_path / "mini.urdf")
    assert text.count("\nee ") == 2 and "\ngroup J_both J_tool+J_slider\n" in text


@pytest.mark.skipif(not all(shutil.which(t) for t in ("gcc", "nm", "objdump")), reason="needs gcc and binutils")
def test_tick_code_follows_calls_into_the_kernel_objects(tmp_path):
    """Code per tick: the tick's functions and, once each, the helpers of the kernel objects they call;
    not the kernel objects' other functions, not the harness's."""
    (tmp_path / "k.c").write_text(
        "__attribute__((noinline)) static double helper(double x) { return x * x + 1.0; }\n"
        "double kern_a(double x) { return helper(x) + 2.0; }\n"
        "double kern_b(double x) { return helper(x) * 3.0; }\n"
        "double unused(double x) { return x - 1.0; }\n")
    (tmp_path / "main.c").write_text(
        "double kern_a(double); double kern_b(double); double unused(double);\n"
        "int main(int argc, char **argv) { (void)argv; return (int)(kern_a(argc) + kern_b(argc)); }\n")
    obj, exe = tmp_path / "k.o", tmp_path / "main"
    subprocess.run(["gcc", "-O2", "-c", str(tmp_path / "k.c"), "-o", str(obj)], check=True)
    subprocess.run(["gcc", "-O2", str(tmp_path / "main.c"), str(obj), "-o", str(exe)], check=True)
    code, = tick_code(exe, [obj], ["kern_a", "kern_b", "not_there"])
    names = [f for f, _ in code]
    assert names[:2] == ["kern_a", "kern_b"] and sorted(names[2:]) in (["helper"], [])
    assert all(b > 0 for _, b in code)
    # helper is inlined or called, never counted twice; the objects' other functions never
    assert "unused" not in names and "main" not in names and len(names) == len(set(names))
    r = subprocess.run(["objdump", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
    assert ("<helper>:" in r) == ("helper" in names)
    # several ticks from one disassembly: each its own roots
    only_a, only_b = tick_code(exe, [obj], ["kern_a"], ["kern_b"])
    assert [f for f, _ in only_a][0] == "kern_a" and [f for f, _ in only_b][0] == "kern_b"
    assert "kern_b" not in [f for f, _ in only_a]


def test_efficiency_figures_from_a_synthetic_run(tmp_path):
    ks = _fake_kernels(tmp_path)
    ours = {"A": 250.0, "C": 700.0, "Q": 60.0, "J_a": 50.0, "J_b": 40.0, "J_c": 30.0, "J_all": 120.0}
    clones = {k: v * 1.1 for k, v in ours.items()}
    summary = {"ours": {k: _stats(v) for k, v in ours.items()},
               "ours-clones": {k: _stats(v) for k, v in clones.items()}}
    tick = {"ours": {"warm": {"tick": _stats(1500.0), "tick_all": _stats(1200.0)},
                     "flush": {"tick": _stats(30000.0), "tick_all": _stats(8000.0)}},
            "pin": {"warm": {"tick": _stats(7500.0)}, "flush": {"tick": _stats(20000.0)}},
            "ours-clones": {"warm": {"tick": _stats(1650.0)}, "flush": {"tick": _stats(33000.0)}}}
    ops = {"bot_compute_A": 2000, "bot_compute_C": 7000, "bot_jacobian_a_world": 200}
    fma = efficiency.fma_fractions(ks, summary, ops, 2.0)
    # floor: ops / 4 cycles at 2 GHz
    assert fma["A"] == (2000, 250.0, 250.0, 1.0) and fma["C"][3] == pytest.approx(875 / 700)
    assert set(fma) == {"A", "C", "J_a"}  # no op count: no fraction
    batch = {64: {"A": 250.0, "A_batch": 62.5, "C": 700.0, "C_batch": 350.0}}
    portable = efficiency.portable_rows(ks, summary, tick)
    assert portable[0] == ("A", 250.0, pytest.approx(275.0)) and portable[-1] == ("whole tick, flush", 30000.0, 33000.0)
    code = [("bot_compute_A", 30000), ("sincos_q", 2000)]
    code_all = [("bot_compute_all", 36000), ("sincos_q", 2000)]
    rows = efficiency.summary_rows(ks, summary, tick, code, fma, batch, portable, code_all)
    text = "\n".join(efficiency.section({"flags_portable": "-O3"}, rows, ["a note"]))
    table = docs_tables.first_table(text, "## Efficiency")
    assert table[0] == "| figure | value | target | how |" and len(table) == 2 + len(rows)
    got = {r.figure: r.value for r in rows}
    assert got["code per tick"] == "32,000 B (0.80 x target)"
    assert got["code per tick, one compute_all call"] == "38,000 B (0.95 x target)"
    assert got["whole tick (flush), ours / Pinocchio"] == "1.5" and got["whole tick (warm), ours / Pinocchio"] == "0.2"
    # the compute_all tick against the same Pinocchio tick
    assert got["whole tick (flush, one compute_all call), ours / Pinocchio"] == "0.4"
    assert got["whole tick (warm, one compute_all call), ours / Pinocchio"] == "0.16"
    assert got["A batch speed-up per state, N = 64"] == "4" and got["C batch speed-up per state, N = 64"] == "2"
    assert got["A: fraction of the FMA floor"] == "100%" and got["A: portable / native"] == "1.1"
    assert "whole tick (cold), ours / Pinocchio" not in got  # not measured: no row


def test_efficiency_batch_figures_call_benchmarks_batch_as_it_is(monkeypatch):
    """make bench's batch rows come from benchmarks.batch: the calls must fit its real
    signatures (a mismatch once left the rows empty with "benchmarks.batch failed")."""
    import inspect

    from benchmarks import batch, copies, efficiency

    real_compile, real_run = inspect.signature(batch.compile_copies), inspect.signature(batch.run)
    calls = []

    def compile_copies(*args, **kw):
        bound = real_compile.bind(*args, **kw)
        return [f"exe{c}" for c in range(bound.arguments.get("copies", copies.DEFAULT_COPIES))]

    def run(*args, **kw):
        real_run.bind(*args, **kw)
        calls.append(args)
        k = len(calls)
        return {64: dict(A=2.0 * k, A_batch=1.0, C=3.0, C_batch=1.0)}

    monkeypatch.setattr(batch, "compile_copies", compile_copies)
    monkeypatch.setattr(batch, "run", run)
    res, how = efficiency.batch_figures(None, rounds=3, builds=("native",), copies=1)
    assert {k: res[64][k] for k in ("A", "A_batch", "C", "C_batch")} == dict(A=4.0, A_batch=1.0, C=3.0, C_batch=1.0), how
    assert res[64]["A_up"].median == 4.0  # medians over the 3 runs
    assert [c[0] for c in calls] == ["exe0"] * 3
    # by default the portable build too, its runs alternating with the native ones
    calls.clear()
    res, how = efficiency.batch_figures(None, rounds=3, copies=1)
    assert len(calls) == 6 and "clones" in how, how
    assert res[64]["A"] == 6.0 and res[64]["A_batch_clones"] == 1.0, res  # native: runs 1, 3, 5 (A = 2, 6, 10)
    rows = {r.figure: r.value for r in efficiency.summary_rows(None, {}, {}, (), {}, res, [])}
    assert rows["A batch, N = 64: portable / native"] == "1"
    # copies: every copy of every build in each round; a copy's figure from its own rounds
    calls.clear()
    res, how = efficiency.batch_figures(None, rounds=2, builds=("native",))
    assert [c[0] for c in calls] == [f"exe{c}" for c in range(copies.DEFAULT_COPIES)] * 2, calls
    assert len(res[64]["A_up"].per_copy) == copies.DEFAULT_COPIES and "copies" in how


def test_batch_driver_prints_what_run_parses(tmp_path, monkeypatch):
    """The batch driver compiles against the Krang kernels without warnings, and the line it
    prints per size (scalar and batch of A and C, the memset floor) is the one `run` reads."""
    from benchmarks import batch

    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    src = tmp_path / "driver.c"
    src.write_text(batch.DRIVER.replace("@SIZES@", "8").replace("REPEATS", "1"))
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", str(batch.GEN),
                    str(src)], check=True)
    assert batch.DRIVER.count("best[") >= 5 and "memset(out" in batch.DRIVER

    def fake(*args, **kw):
        return SimpleNamespace(stdout="64 200.0 100.0 700.0 200.0 30.0 0\n")

    monkeypatch.setattr(batch.subprocess, "run", fake)
    got = batch.run(Path("exe"))
    assert got == {64: dict(A=200.0, A_batch=100.0, C=700.0, C_batch=200.0, write=30.0)}
    rows = efficiency.summary_rows(None, {}, {}, (), {}, got, [])
    assert "memset of the outputs alone 30.0" in rows[0].how and rows[0].value == "2"


def test_generation_figures_compile_the_parts_or_report_a_failure(tmp_path):
    """make bench-robots times the parts of a generated .c compiled concurrently, as the module
    build does: every part must compile, and one that fails leaves no time (not a short one)."""
    from benchmarks.build import generation_figures

    golden = Path(__file__).parent / "golden"
    for f in ("mini_kernels.c", "mini_kernels.h"):
        shutil.copy(golden / f, tmp_path / f)
    (c,) = [f for f in generation_figures(tmp_path, "cc", True, by_parts=True) if f["file"].endswith(".c")]
    assert c["compile_s"] > 0 and c["compile_cpu_s"] > 0
    src = tmp_path / "mini_kernels.c"
    text = src.read_text()
    last = text.rindex("#if KKIN(11)")
    src.write_text(text[:last] + "#if KKIN(11)\n#error broken part\n#endif\n" + text[last:])
    (c,) = [f for f in generation_figures(tmp_path, "cc", True, by_parts=True) if f["file"].endswith(".c")]
    assert c["compile_s"] is None and c["compile_cpu_s"] is None


def test_robot_sections_copy_each_table_under_its_title_without_targets():
    """docs_tables.robots: each table of robots.md, titled by its heading after the first; the
    Targets and Missed lines and other notes stay in the results file."""
    text = "\n".join([
        "# Kernels", "", "Machine: X, 2 cores; compiler: gcc; flags: `-O3`; date: 2030-01-01T00:00:00.", "",
        "| robot | A |", "|---|---|", "| panda | **0.2** |", "", "Targets: A <= 0.3", "", "Missed: none", "",
        "Notes not copied.", "",
        "## Identification: the regressor", "", "| robot | regressor |", "|---|---|", "| panda | **0.1** |", "",
        "Targets: regressor <= 0.3", "", "Missed (identification): none", "",
        "## Derivatives of the dynamics", "", "| robot | FD derivatives |", "|---|---|", "| panda | **0.4** |", "",
        "Target: <= 0.3", "", "Missed (derivatives): panda FD_derivatives: 0.4", ""])
    out = docs_tables.robot_sections(text)
    assert out == ["| robot | A |", "|---|---|", "| panda | **0.2** |", "",
                   "**Identification: the regressor**", "", "| robot | regressor |", "|---|---|", "| panda | **0.1** |",
                   "", "**Derivatives of the dynamics**", "", "| robot | FD derivatives |", "|---|---|",
                   "| panda | **0.4** |"]
    assert not [ln for ln in out if ln.startswith(("Target", "Missed", "Notes"))]


def _copied(tmp_path, monkeypatch, job, results_name, results_text, page_attr, marker) -> str:
    """docs_tables.<job> run on results_text (as results_name) into a page of one `marker` block between
    two lines of text: those lines stay, the block starts with the results' provenance line; its body."""
    (tmp_path / results_name).write_text(results_text)
    page = tmp_path / "page.md"
    page.write_text(f"before\n<!-- {marker}:start -->\nold\n<!-- {marker}:end -->\nafter\n")
    monkeypatch.setattr(docs_tables, "RESULTS", tmp_path)
    monkeypatch.setattr(docs_tables, page_attr, page)
    getattr(docs_tables, job)()
    text = page.read_text()
    assert text.startswith(f"before\n<!-- {marker}:start -->\nMachine: X, 2 cores;") and text.endswith("after\n")
    body = text.split(f"<!-- {marker}:start -->\n")[1].split(f"<!-- {marker}:end -->")[0]
    assert "old" not in body
    return body


def test_layout_copies_the_batch_layout_table_with_its_provenance_and_legend(tmp_path, monkeypatch):
    """docs_tables.layout: batch_layout.md's provenance line, the legend under it and its table,
    between the page's batch_layout markers; the text around them stays."""
    body = _copied(tmp_path, monkeypatch, "layout", "batch_layout.md", "\n".join([
        "# Row-major vs lane-interleaved", "", "Machine: X, 2 cores; compiler: gcc; flags: `-O3`; date: 2030-01-01T00:00:00.",
        "Load average at the start: 1.00. ns per state.", "", "| N | A |", "|---:|---:|", "| 8 | 1.0 |", "",
        "Not copied."]), "C_ABI_PAGE", "batch_layout")
    assert body.splitlines()[1:6] == ["Load average at the start: 1.00. ns per state.", "", "| N | A |", "|---:|---:|",
                                      "| 8 | 1.0 |"]
    assert "Not copied" not in body


def test_crocoddyl_copies_the_table_with_its_provenance_line(tmp_path, monkeypatch):
    """docs_tables.crocoddyl: crocoddyl_quadruped.md's provenance line and table (benchmarks.crocoddyl_quadruped's
    report on a hand-made round), not the paragraphs between them, and where the full report is."""
    rounds = [crocoddyl_quadruped.Round(2.0, 3.0, 3.0, 4.0, (50.0, 80.0, 2.0), (100.0, 150.0, 7.0), (30.0, 60.0),
                                        (70.0, 90.0))]
    report = crocoddyl_quadruped.report(rounds, "Machine: X, 2 cores; compiler: gcc; flags: `-O3`; date: 2030-01-01T00:00:00.",
                                        ["Versions and the agreement: not copied."])
    body = _copied(tmp_path, monkeypatch, "crocoddyl", "crocoddyl_quadruped.md", report, "CONTACT_PAGE",
                   "crocoddyl_quadruped")
    assert body.splitlines()[2:4] == crocoddyl_quadruped.table(rounds)[:2]
    assert "not copied" not in body and "make bench-crocoddyl" in body

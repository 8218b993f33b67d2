"""benchmarks/copies.py's rule on hand-made numbers: a figure measured on several copies of a
binary (the same objects, code placed differently) is the median over the copies, printed only
where the copies agree within copies.THRESHOLD, else their range, marked. No compiler, nothing
timed."""
from __future__ import annotations

import pytest

from benchmarks import batch, batch_dynamics, copies, efficiency

pytestmark = pytest.mark.unit


def test_the_figure_is_the_median_over_copies_of_each_copys_median():
    fig = copies.summarize([[2.0, 2.2, 1.8], [2.1, 2.1, 2.1], [3.0, 2.9, 3.1]])
    assert fig.per_copy == [2.0, 2.1, 3.0]
    assert fig.median == 2.1 and (fig.lo, fig.hi) == (2.0, 3.0)
    assert fig.spread == pytest.approx(1.0 / 2.1)
    assert fig.within == pytest.approx(0.4 / 2.0)  # the worst copy's (max - min) / median over its rounds
    assert not fig.trusted
    assert copies.fmt(fig, unit="x") == f"2-3x {copies.MARK}"  # the range, not a figure
    assert copies.fmt_spread(fig) == "3 copies 2-3 (48%), rounds 20%"


def test_a_figure_is_printed_where_the_copies_agree():
    fig = copies.summarize([[2.0], [2.2], [2.1]])
    assert fig.trusted and fig.spread == pytest.approx(0.2 / 2.1)
    assert copies.fmt(fig, unit="x") == "2.1x"
    # at the threshold still a figure, just above it the range
    assert copies.summarize([[1.0], [1.25]], threshold=0.25 / 1.125).trusted
    assert not copies.summarize([[1.0], [1.26]], threshold=0.25 / 1.125).trusted
    assert copies.THRESHOLD == 0.25


def test_one_copy_has_no_spread_between_copies_and_no_values_is_an_error():
    fig = copies.summarize([[4.0, 5.0, 6.0]])
    assert fig.median == 5.0 and fig.spread == 0.0 and fig.trusted and fig.within == pytest.approx(0.4)
    assert copies.fmt_spread(fig) == "1 copy, rounds 40%"
    with pytest.raises(ValueError):
        copies.summarize([[], []])


def test_the_padding_moves_code_by_non_multiples_of_64_and_4096():
    assert copies.pad_bytes(0) == 0
    for k in range(1, 64):
        n = copies.pad_bytes(k)
        assert n % 16 == 0, "gcc's .text sections are 16-aligned: the linker would round the rest away"
        assert n % 64 and n % 4096
    assert [copies.pad_bytes(k) for k in (1, 2, 3)] == [1104, 2208, 3312]
    src = copies.pad_source(1104)
    assert ".skip 1104, 0x90" in src and ".text" in src


def test_moved_refuses_copies_that_did_not_move(monkeypatch):
    table = {"c0": {"f": 0x1000, "g": 0x2000}, "c1": {"f": 0x1450, "g": 0x2450}, "c2": {"f": 0x2000, "g": 0x3000}}
    monkeypatch.setattr(copies, "symbol_addresses", lambda exe, names: table[exe])
    shifts = copies.moved(["c0", "c1"], ["f", "g"])
    assert shifts == [{"f": 0, "g": 0}, {"f": 0x450, "g": 0x450}]
    assert "copy 1: +1104 B (mod 64: 16, mod 4096: 1104)" in copies.describe_shifts(shifts)
    with pytest.raises(ValueError, match="did not move"):
        copies.moved(["c0", "c2"], ["f", "g"])
    with pytest.raises(ValueError, match="no symbol"):
        copies.moved(["c0", "c1"], ["h"])


def _round(a, ab, c=3.0, cb=1.0):
    return {64: dict(A=a, A_batch=ab, C=c, C_batch=cb, write=0.5)}


def test_batch_speed_ups_over_copies():
    # copy 0 twice 2x, copy 1 4x: per copy the median of its rounds' speed-ups
    runs = [[_round(2.0, 1.0), _round(4.0, 2.0)], [_round(4.0, 1.0), _round(4.0, 1.0)], [_round(3.0, 1.0)]]
    times, ups = batch.median_copies(runs)
    assert ups[64]["A"].per_copy == [2.0, 4.0, 3.0] and ups[64]["A"].median == 3.0
    assert not ups[64]["A"].trusted and ups[64]["C"].trusted and ups[64]["C"].median == 3.0
    assert times[64]["A"] == 3.0 and times[64]["A_batch"] == 1.0  # median of the copies' medians (3, 4, 3)
    rows = {r.figure: r for r in efficiency.summary_rows(None, {}, {}, (), {}, {64: dict(times[64], A_up=ups[64]["A"],
                                                                                          C_up=ups[64]["C"])}, [])}
    assert rows["A batch speed-up per state, N = 64"].value == f"2-4 {copies.MARK}"
    assert rows["C batch speed-up per state, N = 64"].value == "3"
    assert "3 copies 3-3 (0%)" in rows["C batch speed-up per state, N = 64"].how


def test_time_copies_runs_every_copy_of_every_build_each_round():
    seen = []
    got = batch.time_copies({"native": ["n0", "n1"], "avx2": ["a0", "a1"]}, 2, None,
                            lambda exe, cpu: seen.append(exe) or exe)
    assert seen == ["n0", "n1", "a0", "a1"] * 2
    assert got == {"native": [["n0", "n0"], ["n1", "n1"]], "avx2": [["a0", "a0"], ["a1", "a1"]]}


def test_batch_dynamics_reports_per_kernel_figures_over_copies():
    def rnd(up):
        return {n: {k: (up, 1.0, 2.0) for k in batch_dynamics.KERNELS + batch_dynamics.DERIVATIVES} for n in batch.SIZES}

    s, bt, up = batch_dynamics.figures([[rnd(3.0), rnd(3.2)], [rnd(3.1)], [rnd(6.0)]], batch.SIZES[0], "bias")
    assert (s, bt) == (3.1, 1.0) and up.per_copy == [3.1, 3.1, 6.0] and not up.trusted
    ft, fup = batch_dynamics.first_call([[rnd(3.0), rnd(3.2)], [rnd(3.1)], [rnd(6.0)]], batch.SIZES[0], "bias")
    assert ft == 2.0 and fup == 1.55  # the first call's figures: the third time of each kernel


def test_batch_dynamics_table_states_provenance_and_load(monkeypatch):
    def rnd(up):
        return {n: {k: (up, 1.0, 1.5) for k in batch_dynamics.KERNELS} for n in batch.SIZES}

    monkeypatch.setattr(batch_dynamics.os, "getloadavg", lambda: (9.5, 0.0, 0.0))
    text = batch_dynamics.table({"avx2": [[rnd(3.0)], [rnd(3.0)]]}, "krang", batch_dynamics.KERNELS, 1, 200, 8.25)
    assert "Machine:" in text and "Load average 8.25 before, 9.50 after" in text
    rows = [line for line in text.splitlines() if line.startswith("| avx2 |")]
    assert len(rows) == len(batch.SIZES) * len(batch_dynamics.KERNELS)
    assert all(row.endswith("| 1.5 | 2x |") for row in rows)  # first call: 1.5 ns, scalar / first = 2
    assert batch_dynamics.out_path("krang").name == "batch_dynamics.md"
    assert batch_dynamics.out_path("panda").name == "batch_dynamics_panda.md"


def test_tick_ratio_figures_pair_each_copy_with_pinocchio_round_by_round():
    tick = {"pin": {"warm": {"tick": [100.0, 200.0]}},
            "ours": {"warm": {"tick": [10.0, 20.0], "tick_all": [5.0, 10.0]}},
            "ours-pad1": {"warm": {"tick": [12.0, 24.0]}},
            "ours-pad2": {"warm": {"tick": [30.0, 60.0]}}}
    figs = efficiency.tick_ratio_figures(tick, ["ours", "ours-pad1", "ours-pad2"])
    ratio, ns = figs["warm"]["tick"]
    assert ratio.per_copy == [0.1, 0.12, 0.3] and ratio.median == 0.12 and not ratio.trusted
    assert ns.median == 18.0
    assert "tick_all" not in figs["warm"]  # not in every copy: no figure over copies
    one = efficiency.tick_ratio_figures(tick, ["ours"])["warm"]["tick_all"][0]  # against Pinocchio's whole tick
    assert one.per_copy == [0.05] and one.trusted
    tsum = {"pin": {"warm": {"tick": {"median": 150.0}}}, "ours": {"warm": {"tick": {"median": 15.0}}}}
    rows = {r.figure: r for r in efficiency.summary_rows(None, {}, tsum, (), {}, None, [], (), figs)}
    row = rows["whole tick (warm), ours / Pinocchio"]
    assert row.value == f"0.1-0.3 {copies.MARK}" and "18 vs 150 ns; 3 copies" in row.how
    # without copies: the ratio of the medians, as before
    rows = {r.figure: r for r in efficiency.summary_rows(None, {}, tsum, (), {}, None, [])}
    assert rows["whole tick (warm), ours / Pinocchio"].value == "0.1"
    assert efficiency.tick_ratio_figures(tick, ["ours"], ref="pin-lib") == {}


def test_pruning_old_builds_keeps_other_builds_whose_name_starts_with_a_hex_digit(tmp_path):
    """The copies and the clones harness share a stem with `ours`: pruning `ours`' older digests
    must not delete them (`-clones` starts with c, `-pad1` does not)."""
    from benchmarks.build import _prune
    names = ["bench_c_k-0a1b2c", "bench_c_k-9f8e7d", "bench_c_k-clones-0a1b", "bench_c_k-clones", "bench_c_k-pad1-0a"]
    for name in names:
        (tmp_path / name).write_text("")
    _prune(tmp_path, "bench_c_k-[0-9a-f]*", tmp_path / "bench_c_k-9f8e7d")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])

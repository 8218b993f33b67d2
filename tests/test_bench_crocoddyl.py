"""benchmarks/crocoddyl_quadruped.py's table on hand-made rounds (medians over the rounds, their spread,
ours / native of the medians); docs_tables.crocoddyl's copy of it is tested with the other copies in
test_bench_modules.py. Nothing timed, no Crocoddyl."""
from __future__ import annotations

import pytest

from benchmarks import crocoddyl_quadruped as cq

pytestmark = pytest.mark.unit


def _round(native_cpu, ours_cpu, node_diff):
    return cq.Round(native_cpu, ours_cpu, native_cpu + 1.0, ours_cpu + 1.0, (50.0, 80.0, 2.0), node_diff,
                    (30.0, 60.0), (70.0, 90.0))


def _rows(lines):
    return {c[0]: c[1:] for c in ([x.strip() for x in ln.strip("|").split("|")] for ln in lines[2:])}


def test_each_row_is_the_median_over_rounds_with_its_spread_and_the_ratio_of_the_medians():
    rounds = [_round(2.0, 3.0, (100.0, 150.0, 7.0)), _round(4.0, 3.5, (120.0, 140.0, 9.0)),
              _round(3.0, 9.0, (110.0, 160.0, 6.0))]
    lines = cq.table(rounds)
    assert lines[0].startswith("| what | unit | native median |") and len(lines) == 2 + len(cq.ROWS)
    rows = _rows(lines)
    # per iteration: native 2, 4, 3 -> median 3; ours 3, 3.5, 9 -> median 3.5 (not the mean, 5.17)
    assert rows["FDDP, time per iteration (process CPU)"] == ["ms", "3", "2..4", "3.5", "3..9", "1.17", ""]
    assert rows["FDDP, time per iteration (wall)"][1:6:2] == ["4", "4.5", "1.12"]
    diff = rows["contact node (four feet): calcDiff"]
    assert diff == ["µs", "110", "100..120", "150", "140..160", "1.36", "`constrained_dynamics_derivatives` 7"]
    assert rows["contact node (four feet): calc"][-1] == "`constrained_dynamics` 2"
    assert rows["touchdown (two feet): calc"][1:6:2] == ["30", "60", "2.00"]


def test_an_even_number_of_rounds_takes_the_middle_two_and_no_round_is_an_error():
    assert cq.median_spread([1.0, 2.0, 4.0, 10.0]) == (3.0, "1..10")
    with pytest.raises(ValueError):
        cq.median_spread([])
    with pytest.raises(SystemExit):  # before anything is imported or timed
        cq.main(["--rounds", "0"])


"""The time limit holds on the space-sharing path too: 300 jobs whose equal-scale pairs give
more pair columns than the full LP takes (column generation on HiGHS, CBC refuses)."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.timeshare import TimeshareInstance, generate_custom
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.exact import FULL_PAIR_COLUMNS
from tests.timing import promised_s


@pytest.fixture(scope="module")
def paired() -> TimeshareInstance:
    inst = generate_custom(300, seed=4, pairs=True)
    assert len(build_data(inst).pair_columns()) > FULL_PAIR_COLUMNS
    return inst


@pytest.mark.parametrize("method", ["milp:highs", "milp:cbc", "heuristic:isolated", "auto"])
@pytest.mark.parametrize("limit", [0.2, 2.0])
def test_pairs_keep_the_time_limit(paired: TimeshareInstance, method: str, limit: float) -> None:
    started = time.perf_counter()
    result = schedopt.solve(paired, method, time_limit_s=limit)
    assert time.perf_counter() - started <= promised_s(limit)
    if result.status is Status.OPTIMAL:
        assert result.best_bound == pytest.approx(result.objectives[0], rel=1e-6)
    if method == "milp:cbc":  # refused before building, saying why
        assert result.status is Status.NO_SOLUTION and "milp:highs prices" in result.explanation


def test_pairs_priced_in_reach_the_whole_lps_optimum() -> None:
    """Column generation (HiGHS, beyond FULL_PAIR_COLUMNS) and the whole LP (below it, and
    CBC) agree: the same instance solved both ways."""
    from schedopt.problems.timeshare import exact

    inst = generate_custom(60, seed=5, pairs=True)
    whole = schedopt.solve(inst, "milp:highs")
    assert whole.stats.get("pair_columns") is None  # the whole LP
    saved = exact.FULL_PAIR_COLUMNS
    exact.FULL_PAIR_COLUMNS = 0
    try:
        priced = schedopt.solve(inst, "milp:highs")
    finally:
        exact.FULL_PAIR_COLUMNS = saved
    assert priced.stats["pair_columns"] > priced.stats["pair_columns_added"]
    assert priced.status is whole.status is Status.OPTIMAL
    assert priced.objectives == pytest.approx(whole.objectives, rel=1e-6)

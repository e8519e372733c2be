"""A time limit is a promise: every method returns within it plus the documented overhead."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt import TIME_LIMIT_OVERHEAD_S
from schedopt.core.status import Status
from schedopt.problems.admission import generate


@pytest.fixture(scope="module")
def large():
    return generate("large", 0)  # 1,024 GPUs, 1,000 jobs, 12 slots


@pytest.mark.parametrize("method", ["auto", "cpsat", "milp:highs", "milp:cbc"])
@pytest.mark.parametrize("limit", [0.5, 3.0])
def test_large_instance_returns_within_the_limit(large, method: str, limit: float) -> None:
    started = time.perf_counter()
    result = schedopt.solve(large, method, time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= limit + TIME_LIMIT_OVERHEAD_S, (elapsed, result.stats)
    assert result.wall_s <= elapsed
    if method == "auto":
        # The heuristics always have an answer on this instance, so auto must return one.
        assert result.status is Status.FEASIBLE
        assert result.solution is not None
    else:
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)
    if result.status is Status.NO_SOLUTION:
        assert result.explanation or result.best_bound is not None or result.stats


def test_auto_falls_back_to_the_heuristics_when_the_model_is_too_large() -> None:
    from schedopt.problems.admission import generate_custom

    inst = generate_custom(hosts=1, jobs=400, slots=3000, seed=0, slot_s=60.0)
    with pytest.raises(schedopt.ModelTooLargeError):
        schedopt.solve(inst, "cpsat", time_limit_s=5)
    result = schedopt.solve(inst, "auto", time_limit_s=20)
    assert result.status is Status.FEASIBLE and result.solution is not None
    assert "variables" in result.explanation

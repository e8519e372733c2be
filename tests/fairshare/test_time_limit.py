"""A time limit is a promise: every method returns within it plus the documented overhead."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt import TIME_LIMIT_OVERHEAD_S
from schedopt.core.status import Status
from schedopt.problems.fairshare import generate_custom


@pytest.fixture(scope="module")
def large():
    # 4,096 GPUs (H100/A100/V100), 100 tenants, 5,000 jobs: the largest shape.
    return generate_custom(gpus=4096, tenants=100, jobs=5000, seed=0)


@pytest.mark.parametrize("method", ["auto", "cpsat", "milp:highs", "milp:cbc"])
@pytest.mark.parametrize("limit", [0.5, 3.0])
def test_large_instance_returns_within_the_limit(large, method: str, limit: float) -> None:
    started = time.perf_counter()
    result = schedopt.solve(large, method, time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= limit + TIME_LIMIT_OVERHEAD_S, (elapsed, result.stats)
    assert result.wall_s <= elapsed
    if method == "auto":
        # The heuristics always have an answer here, so auto must return one.
        assert result.status is Status.FEASIBLE or result.status is Status.OPTIMAL
        assert result.solution is not None
    else:
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.OPTIMAL)
    if result.status is Status.NO_SOLUTION:
        assert result.explanation or result.best_bound is not None or result.stats


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round"])
def test_heuristics_keep_a_short_limit(large, method: str) -> None:
    started = time.perf_counter()
    result = schedopt.solve(large, method, time_limit_s=0.5)
    assert time.perf_counter() - started <= 0.5 + TIME_LIMIT_OVERHEAD_S
    assert result.status is Status.FEASIBLE

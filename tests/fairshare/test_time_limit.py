"""A time limit is a promise: every method returns within it plus the documented overhead."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.fairshare import generate_custom
from tests.timing import promised_s, quiet_s

pytestmark = pytest.mark.slow

#: A limit at which an answer is expected even on a loaded 2-core machine. At 0.5 s the method
#: has about 0.1 s once validation's reserve (70 µs a job) is kept back: enough on a quiet
#: machine (FEASIBLE in 0.37 s), not beside two busy processes, where building the data alone
#: took longer (NO_SOLUTION, "the time limit was reached while building the model data").
ENOUGH_S = 3.0


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
    assert elapsed <= promised_s(limit), (elapsed, promised_s(limit), result.stats)
    assert result.wall_s <= elapsed
    if method == "auto" and quiet_s(limit) >= ENOUGH_S:
        # The heuristics always have an answer here, so auto must return one given the time.
        assert result.status is Status.FEASIBLE or result.status is Status.OPTIMAL
        assert result.solution is not None
    else:
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.OPTIMAL)
    if result.status is Status.NO_SOLUTION:
        assert result.explanation or result.best_bound is not None or result.stats


@pytest.mark.parametrize("limit", [1.0, ENOUGH_S])
def test_auto_through_the_decomposition_keeps_the_limit(large, limit: float) -> None:
    # 5,000 jobs: auto runs decomp first (MethodSpec.decomposition), the heuristics only if
    # it answers nothing; either way within the promise, B3L's search included
    started = time.perf_counter()
    result = schedopt.solve(large, "auto", time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(limit), (elapsed, promised_s(limit), result.stats)
    assert result.method.startswith("auto(decomp"), result.method
    if quiet_s(limit) >= ENOUGH_S:
        assert result.solution is not None
        assert result.best_bound is not None and result.best_bound >= result.objective - 1e-9


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round"])
@pytest.mark.parametrize("limit", [0.5, ENOUGH_S])
def test_heuristics_keep_a_short_limit(large, method: str, limit: float) -> None:
    started = time.perf_counter()
    result = schedopt.solve(large, method, time_limit_s=limit)
    assert time.perf_counter() - started <= promised_s(limit)
    if quiet_s(limit) >= ENOUGH_S:
        assert result.status is Status.FEASIBLE
    else:  # the promise is the time; an answer in 0.5 s is a speed, measured in benchmarks/
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)
        assert result.solution is not None or "time limit" in (result.explanation or "")


@pytest.fixture(scope="module")
def largest():
    # 16,384 GPUs, 200 tenants, 20,000 jobs (#16 item 1): HiGHS's MIP setup partitioned L2's
    # 64,112 objective binaries into cliques for 70.8 s on a 10 s limit, unchecked.
    return generate_custom(gpus=16384, tenants=200, jobs=20000, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["milp:highs", "auto", "cpsat", "milp:cbc"])
def test_the_largest_instance_returns_within_the_limit(largest, method: str) -> None:
    limit = 10.0
    started = time.perf_counter()
    result = schedopt.solve(largest, method, time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(limit), (elapsed, promised_s(limit), result.stats)
    if method == "auto":
        assert result.solution is not None

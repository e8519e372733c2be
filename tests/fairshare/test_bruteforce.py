"""The exact back-ends reach the true optimum of L1 on tiny rounds (brute force)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.status import Status
from schedopt.problems.fairshare.strategies import instances

from .bruteforce import assert_exact, best_min_share

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("method", ["cpsat", "milp:highs", "milp:cbc"])
@SETTINGS
@given(inst=instances(max_jobs=3))
def test_exact_matches_brute_force(method: str, inst) -> None:
    truth = best_min_share(inst)
    result = schedopt.solve(inst, method, time_limit_s=30)
    if truth is None:
        assert result.status is Status.INFEASIBLE
        assert result.explanation
        return
    assert_exact(result, method, truth)
    assert result.objective <= truth + 1e-9  # never above the true optimum
    assert result.best_bound >= truth - 1e-7


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round"])
@SETTINGS
@given(inst=instances(max_jobs=4))
def test_heuristics_never_beat_the_optimum(method: str, inst) -> None:
    truth = best_min_share(inst)
    result = schedopt.solve(inst, method, time_limit_s=5)
    assert result.status is not Status.OPTIMAL
    if result.objective is not None:
        assert truth is not None
        assert result.objective <= truth + 1e-9
    if result.best_bound is not None and truth is not None:
        assert truth <= result.best_bound + 1e-7  # the Gavel LP bound is a relaxation

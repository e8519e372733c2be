"""The exact back-ends reach the true optimum of the first objective on tiny instances."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.status import Status
from schedopt.problems.admission.strategies import instances

from .bruteforce import best_first_level

SETTINGS = settings(
    derandomize=True,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
)
EXACT = ["cpsat", "milp:highs", "milp:cbc"]


@pytest.mark.parametrize("method", EXACT)
@SETTINGS
@given(inst=instances(max_jobs=4, max_slots=3))
def test_exact_matches_brute_force(method: str, inst) -> None:
    truth = best_first_level(inst)
    result = schedopt.solve(inst, method, time_limit_s=20)
    if truth is None:
        assert result.status is Status.INFEASIBLE
        assert result.explanation
    else:
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(truth)
        assert result.best_bound == pytest.approx(truth)


@pytest.mark.parametrize("method", ["heuristic:edf", "heuristic:slack"])
@SETTINGS
@given(inst=instances(max_jobs=5, max_slots=4))
def test_heuristics_never_beat_the_optimum(method: str, inst) -> None:
    truth = best_first_level(inst)
    result = schedopt.solve(inst, method, time_limit_s=5)
    assert result.status is not Status.OPTIMAL  # heuristics prove nothing
    if result.objective is not None:
        assert truth is not None
        assert result.objective <= truth + 1e-9


@SETTINGS
@given(inst=instances(max_jobs=6, max_slots=4, allow_admitted=False))
def test_six_jobs_four_slots(inst) -> None:
    truth = best_first_level(inst)
    result = schedopt.solve(inst, "milp:highs", time_limit_s=20)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth)

"""Hypothesis properties: every method's answer is valid and honest; bad input is refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.solve import lex_better
from schedopt.core.status import Status
from schedopt.problems.fairshare import SPEC
from schedopt.problems.fairshare.data import SHARE_SCALE
from schedopt.problems.fairshare.strategies import instances

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow]
)
METHODS = [
    "cpsat",
    "milp:highs",
    "milp:cbc",
    "heuristic:astraea",
    "heuristic:gavel-round",
    "auto",
]


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(inst=instances(max_jobs=5))
def test_every_solution_is_valid_and_honest(method: str, inst) -> None:
    result = schedopt.solve(inst, method, time_limit_s=10)
    if result.solution is not None:
        assert SPEC.validate(inst, result.solution) == []  # solve() checked; check again
        assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
        if result.best_bound is not None:
            assert result.objective <= result.best_bound + 1e-7  # maximisation
        if result.status is Status.OPTIMAL:  # a proof: its bound meets its objective
            # (CP-SAT proves optimality on shares floored to 1/SHARE_SCALE; its bound is the
            # next grid point, so it meets the objective within one grid step; auto uses CP-SAT)
            grid = 1.0 / SHARE_SCALE if method in ("cpsat", "auto") else 0.0
            assert result.best_bound is not None, result.stats
            assert result.best_bound == pytest.approx(result.objective, rel=1e-6, abs=1e-6 + grid)
        assert set(result.metrics) >= {"effective_throughput", "gpus_allocated"}
    else:
        assert result.status in (Status.INFEASIBLE, Status.NO_SOLUTION)
        assert result.explanation
    if method.startswith("heuristic:"):
        assert result.status is not Status.OPTIMAL


@SETTINGS
@given(inst=instances(max_jobs=5))
def test_no_heuristic_beats_a_proven_optimum(inst) -> None:
    exact = schedopt.solve(inst, "milp:highs", time_limit_s=10)
    if exact.status is not Status.OPTIMAL:
        return
    for name in ("heuristic:astraea", "heuristic:gavel-round"):
        h = schedopt.solve(inst, name, time_limit_s=5)
        if h.objectives is not None:
            assert not lex_better(h.objectives, exact.objectives, SPEC.terms, rel_tol=1e-6)


@SETTINGS
@given(inst=instances(max_jobs=5, options=False))
def test_without_hard_options_every_method_finds_a_solution(inst) -> None:
    # Leaving every job idle is feasible without guarantees or a preemption cap. (A generous
    # limit: once, on a loaded machine, a CBC process took over 5 s on such a tiny model.)
    for method in METHODS:
        assert schedopt.solve(inst, method, time_limit_s=30).status.has_solution, method

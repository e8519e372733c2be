"""Hypothesis properties: every method's answer is valid and honest; bad input is refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.solve import lex_better
from schedopt.core.status import Status
from schedopt.problems.moe_placement import SPEC
from schedopt.problems.moe_placement.strategies import instances

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow]
)
METHODS = [
    "cpsat",
    "milp:highs",
    "milp:cbc",
    "milp:scenario",
    "heuristic:eplb",
    "heuristic:local-search",
    "auto",
]
HEURISTICS = ("heuristic:eplb", "heuristic:local-search", "milp:scenario")


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(inst=instances())
def test_every_solution_is_valid_and_honest(method: str, inst) -> None:
    result = schedopt.solve(inst, method, time_limit_s=10)
    if result.solution is not None:
        assert SPEC.validate(inst, result.solution) == []
        assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
        if result.best_bound is not None:  # minimisation: never below the bound
            assert result.objective >= result.best_bound - 1e-6 * max(1.0, abs(result.best_bound))
        if result.status is Status.OPTIMAL:  # a proof: its bound meets its objective
            assert result.best_bound is not None, result.stats
            assert result.best_bound == pytest.approx(result.objective, rel=1e-6, abs=1e-6)
    else:
        assert result.status in (Status.INFEASIBLE, Status.NO_SOLUTION)
    if method in HEURISTICS:
        assert result.status is not Status.OPTIMAL


@SETTINGS
@given(inst=instances())
def test_no_heuristic_beats_a_proven_optimum(inst) -> None:
    exact = schedopt.solve(inst, "milp:highs", time_limit_s=10)
    if exact.status is not Status.OPTIMAL:
        return
    for name in HEURISTICS:
        h = schedopt.solve(inst, name, time_limit_s=5)
        if h.objectives is not None:
            assert not lex_better(h.objectives, exact.objectives, SPEC.terms, rel_tol=1e-6)


@pytest.mark.parametrize("method", ["milp:highs", "milp:cbc", "cpsat"])
@SETTINGS
@given(inst=instances(max_layers=2, max_experts=3))
def test_exact_never_worse_than_the_greedy_hint(method: str, inst) -> None:
    greedy = schedopt.solve(inst, "heuristic:eplb", time_limit_s=5)
    if greedy.solution is None:
        return
    exact = schedopt.solve(inst, method, time_limit_s=10, hint=greedy.solution)
    assert exact.objectives is not None
    assert not lex_better(greedy.objectives, exact.objectives, SPEC.terms)

"""Validity and honesty of every method of every problem on hypothesis-generated instances
(``schedopt.problems.<problem>.strategies.instances()``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.registry import MethodKind
from schedopt.core.status import Status

from .support import (
    COMPARED_LEVELS,
    cases,
    exact,
    heuristics,
    is_heuristic,
    lex_better,
    not_better_than,
    resolution,
    spec,
    strategies,
    tol,
)

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow]
)


def _hinted(problem: str) -> list[str]:
    return [m for m in exact(problem) if spec(problem).method(m).supports_hint]


@pytest.mark.parametrize(("problem", "method"), cases(lambda p: list(spec(p).methods), auto=True))
@SETTINGS
@given(data=st.data())
def test_every_solution_is_valid_and_honest(problem: str, method: str, data) -> None:
    s = spec(problem)
    inst = data.draw(strategies(problem).instances(), label="instance")
    result = schedopt.solve(inst, method, time_limit_s=10)
    assert result.problem == problem
    assert result.terms == s.terms
    # solve() drops a bound on the wrong side of the answer (stats["bound_discarded"]): the
    # check below would never see it, so a method that proved a false bound fails here
    assert "bound_discarded" not in result.stats, result.stats
    sense = s.terms[0].sense
    if result.solution is not None:
        # solve() validated it already; check again from the outside.
        assert s.validate(inst, result.solution) == []
        assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
        assert result.objectives == pytest.approx(s.evaluate(inst, result.solution), rel=1e-9)
        assert set(result.metrics) >= set(s.metrics(inst, result.solution))
        if result.best_bound is not None:  # the objective never beats its own bound
            assert not_better_than(result.objective, result.best_bound, sense), (
                result.objective,
                result.best_bound,
            )
        if result.status is Status.OPTIMAL:  # a proof: its bound meets its objective
            assert result.best_bound is not None, result.stats
            slack = resolution(problem, method)
            assert abs(result.best_bound - result.objective) <= tol(result.objective) + slack
    else:
        assert result.status in (Status.INFEASIBLE, Status.NO_SOLUTION)
        assert result.objectives is None
        assert result.explanation
    if is_heuristic(problem, method):
        # A heuristic proves no optimum; an infeasibility it reports (a model over the same
        # constraints may find one) must be confirmed by the exact method auto runs.
        assert result.status is not Status.OPTIMAL
        if result.status is Status.INFEASIBLE:
            confirmed = schedopt.solve(inst, s.auto_exact, time_limit_s=10)
            assert confirmed.status is Status.INFEASIBLE, confirmed.status


@pytest.mark.parametrize(("problem", "method"), cases(exact))
@SETTINGS
@given(data=st.data())
def test_no_heuristic_beats_a_proven_optimum(problem: str, method: str, data) -> None:
    s = spec(problem)
    inst = data.draw(strategies(problem).instances(), label="instance")
    proven = schedopt.solve(inst, method, time_limit_s=10)
    if proven.status is Status.INFEASIBLE:
        for name in heuristics(problem):
            assert schedopt.solve(inst, name, time_limit_s=5).solution is None, name
        return
    if proven.status is not Status.OPTIMAL:
        return
    slack = resolution(problem, method)
    for name in heuristics(problem):
        h = schedopt.solve(inst, name, time_limit_s=5)
        if h.objectives is not None:
            levels = COMPARED_LEVELS.get((problem, method))
            assert not lex_better(h.objectives, proven.objectives, s.terms, slack, levels), (
                name,
                h.objectives,
                proven.objectives,
            )


@pytest.mark.parametrize(("problem", "method"), cases(_hinted))
@SETTINGS
@given(data=st.data())
def test_a_hint_never_makes_the_answer_worse(problem: str, method: str, data) -> None:
    """Each heuristic's answer, passed as ``hint=``, is never better than what comes back."""
    s = spec(problem)
    inst = data.draw(strategies(problem).instances(), label="instance")
    for heuristic in heuristics(problem):
        hint = schedopt.solve(inst, heuristic, time_limit_s=5)
        if hint.solution is None:
            continue
        result = schedopt.solve(inst, method, time_limit_s=10, hint=hint.solution)
        assert result.solution is not None, (heuristic, result.status, result.explanation)
        assert not lex_better(
            s.evaluate(inst, hint.solution),
            s.evaluate(inst, result.solution),
            s.terms,
            resolution(problem, method),
            COMPARED_LEVELS.get((problem, method)),
        ), (heuristic, hint.objectives, result.objectives)


def test_every_problem_has_exact_and_heuristic_methods() -> None:
    for problem in schedopt.problem_names():
        kinds = {m.kind for m in spec(problem).methods.values()}
        assert kinds == set(MethodKind), problem
        assert spec(problem).auto_exact in exact(problem)
        assert set(spec(problem).auto_heuristics) <= set(heuristics(problem))

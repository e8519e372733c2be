"""Core types: gaps, lexicographic comparison, result summaries, options, registry errors."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.result import ObjectiveTerm, Result, Sense, lex_better, relative_gap
from schedopt.core.status import Status

MAX, MIN = Sense.MAXIMIZE, Sense.MINIMIZE
TERMS = (ObjectiveTerm("value", MAX), ObjectiveTerm("changes", MIN, "GPUs"))


def test_relative_gap() -> None:
    assert relative_gap(90.0, 100.0, MAX) == pytest.approx(0.1)
    assert relative_gap(110.0, 100.0, MIN) == pytest.approx(10 / 110)
    assert relative_gap(100.0, 100.0, MAX) == 0.0
    assert relative_gap(0.0, 0.0, MAX) == 0.0
    assert relative_gap(None, 1.0, MAX) is None
    assert relative_gap(1.0, None, MAX) is None
    assert relative_gap(5.0, float("inf"), MAX) is None


def test_lex_better_respects_order_and_sense() -> None:
    assert lex_better((2, 9), (1, 0), TERMS)  # first level decides
    assert lex_better((1, 3), (1, 5), TERMS)  # tie, then fewer changes wins
    assert not lex_better((1, 5), (1, 5), TERMS)
    assert not lex_better((1, 5), (1, 3), TERMS)


def _result(status: Status, objectives, bound) -> Result:
    return Result(
        problem="p",
        status=status,
        method="m",
        terms=TERMS,
        objectives=objectives,
        best_bound=bound,
        solution=None,
        seed=0,
        build_s=0.1,
        solve_s=0.2,
        wall_s=0.3,
        time_limit_s=1.0,
        explanation="why",
    )


def test_summary_names_status_objectives_bound_gap() -> None:
    text = _result(Status.FEASIBLE, (90.0, 4.0), 100.0).summary()
    assert "FEASIBLE" in text and "value" in text and "changes" in text
    assert "10.00%" in text and "why" in text


def test_raise_for_status() -> None:
    ok = _result(Status.FEASIBLE, (1.0, 1.0), None)
    assert ok.raise_for_status() is ok
    with pytest.raises(schedopt.InfeasibleError, match="why"):
        _result(Status.INFEASIBLE, None, None).raise_for_status()
    with pytest.raises(schedopt.NoSolutionError):
        _result(Status.NO_SOLUTION, None, None).raise_for_status()


@pytest.mark.parametrize(
    "kwargs", [{"time_limit_s": 0}, {"mip_gap": -0.1}, {"mip_gap": 1.0}, {"threads": 0}]
)
def test_bad_options_are_refused(kwargs) -> None:
    with pytest.raises(ValueError):
        schedopt.SolveOptions(**kwargs)


def test_unknown_method_and_problem() -> None:
    inst = schedopt.load("instances/admission/small-s0.json")
    with pytest.raises(schedopt.UnknownMethodError, match="known: auto, cpsat"):
        schedopt.solve(inst, "gurobi")
    with pytest.raises(schedopt.UnknownProblemError):
        schedopt.get_problem("nope")
    # Bad input, like any other: InvalidInstanceError (it was a TypeError before issue 7).
    with pytest.raises(schedopt.InvalidInstanceError, match="not an instance of any registered"):
        schedopt.solve({"problem": "admission"})
    assert "admission" in schedopt.problem_names()


def test_a_hint_of_the_wrong_type_is_refused() -> None:
    inst = schedopt.load("instances/admission/small-s0.json")
    with pytest.raises(
        schedopt.InvalidInstanceError,
        match="hint: must be a solution of this problem, AdmissionSolution",
    ):
        schedopt.solve(inst, "cpsat", hint={"plans": []})


def test_validation_failure_is_raised_not_returned() -> None:
    from schedopt.core.registry import Outcome
    from schedopt.core.solve import _finish
    from schedopt.problems.admission import SPEC

    inst = schedopt.load("instances/admission/small-s0.json")
    good = schedopt.solve(inst, "heuristic:edf").solution
    broken = good.model_copy(update={"plans": good.plans[1:]})
    outcome = Outcome(Status.FEASIBLE, solution=broken)
    with pytest.raises(schedopt.ValidationFailedError, match="V1"):
        _finish(SPEC, inst, "heuristic:edf", outcome, schedopt.SolveOptions(), 0.0)


def test_a_bound_on_the_wrong_side_of_the_solution_is_discarded() -> None:
    from schedopt.core.registry import Outcome
    from schedopt.core.solve import _finish
    from schedopt.problems.admission import SPEC

    inst = schedopt.load("instances/admission/small-s0.json")
    good = schedopt.solve(inst, "heuristic:edf")
    outcome = Outcome(Status.FEASIBLE, solution=good.solution, bound=good.objective - 10)
    result = _finish(SPEC, inst, "heuristic:edf", outcome, schedopt.SolveOptions(), 0.0)
    assert result.best_bound is None and result.gap is None
    assert result.stats["bound_discarded"] == good.objective - 10


def test_a_copy_with_changed_fields_computes_its_derived_views_again() -> None:
    """pydantic's model_copy(update=...) kept functools.cached_property values: a copy with
    fewer jobs answered with the original's job index (found in reconfig's slow factors)."""
    from schedopt.problems.timeshare import generate_custom

    inst = generate_custom(6, seed=1)
    assert len(inst.job_index) == 6  # computed and kept on inst
    fewer = inst.model_copy(update={"jobs": inst.jobs[:3]})
    assert set(fewer.job_index) == {j.id for j in inst.jobs[:3]}
    assert len(inst.job_index) == 6
    same = inst.model_copy()
    assert same.job_index == inst.job_index


def test_a_derived_view_is_made_once_per_instance_and_travels_empty() -> None:
    """FrozenModel.derived: one view per instance and key, made once; another instance (even an
    equal one) and a copy with changed fields make their own; instances with views still
    compare by their fields; a pickled or deep-copied instance carries no view."""
    import copy
    import pickle

    import numpy as np

    from schedopt.problems.timeshare import generate_custom

    inst = generate_custom(4, seed=1)
    calls: list[int] = []

    def make(n: int):
        calls.append(n)
        return np.arange(n)  # an array: equality of two instances must not compare it

    first = inst.derived("test.view", lambda: make(3))
    assert inst.derived("test.view", lambda: make(5)) is first and calls == [3]
    twin = type(inst).model_validate(inst.model_dump())
    assert twin.derived("test.view", lambda: make(4)).tolist() == [0, 1, 2, 3]
    assert twin == inst and "test.view" in inst.derived_views
    fewer = inst.model_copy(update={"jobs": inst.jobs[:2]})
    assert "test.view" not in fewer.derived_views
    for other in (pickle.loads(pickle.dumps(inst)), copy.deepcopy(inst)):
        assert other == inst and "test.view" not in other.derived_views
    assert calls == [3, 4]

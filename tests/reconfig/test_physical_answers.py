"""``decomp:physical`` answers whenever it has a template answer, and says why when it has none
(#17: on a busy machine its template share once passed while the data were built, and ``auto``
returned the Oobleck plan, 27.16 s against 12.4-18.5 s, after 4.2 s of a 10 s limit)."""

from __future__ import annotations

import dataclasses

import pytest

import schedopt
from schedopt.bench.runner import _stats
from schedopt.core.errors import ModelTooLargeError
from schedopt.core.status import Status
from schedopt.core.stopping import DeadlineReached
from schedopt.problems.reconfig import SPEC, decomp, generate_custom, physical
from schedopt.problems.reconfig.decomp import NO_ANSWER, PHYSICAL
from schedopt.problems.reconfig.instance import ReconfigInstance


@pytest.fixture(scope="module")
def inst() -> ReconfigInstance:
    return generate_custom(8, 8, "llama2-70b", 128, 2, 2, seed=0)  # (at 64 GPUs: infeasible)


@pytest.fixture(scope="module")
def start(inst: ReconfigInstance) -> schedopt.Result:
    result = schedopt.solve(inst, "heuristic:oobleck", time_limit_s=60)
    assert result.solution is not None and result.objectives is not None
    return result


def _no_worse(result: schedopt.Result, inst: ReconfigInstance, start: schedopt.Result) -> None:
    assert result.method == PHYSICAL  # its own answer (not the caller's hint, kept)
    assert result.solution is not None and result.objectives is not None, result.explanation
    assert not SPEC.validate(inst, result.solution)
    assert start.objectives is not None
    assert result.objectives[0] <= start.objectives[0] + 1e-9


def test_a_template_share_gone_before_the_data_are_built_still_answers(
    monkeypatch: pytest.MonkeyPatch, inst: ReconfigInstance, start: schedopt.Result
) -> None:
    # a share of 0 stands in for a machine so busy that the template step's share passes
    # while the data are built: they are built by the whole deadline, and the start (the best
    # of the heuristics' plans) is the template answer, widened in the time left
    monkeypatch.setattr(decomp, "TEMPLATE_SHARE", 0.0)
    result = schedopt.solve(inst, PHYSICAL, time_limit_s=3)
    _no_worse(result, inst, start)
    assert NO_ANSWER not in result.stats


def test_a_deadline_after_the_template_answer_keeps_it(
    monkeypatch: pytest.MonkeyPatch, inst: ReconfigInstance, start: schedopt.Result
) -> None:
    # a phase after the template answer stopped by its deadline with nothing of its own: the
    # template answer stands (it was thrown away with the exception), with its bound's space
    def stopped(*args: object, **kwargs: object) -> None:
        raise DeadlineReached("widening the plan")

    monkeypatch.setattr(physical, "widen", stopped)
    result = schedopt.solve(inst, PHYSICAL, time_limit_s=3, hint=start.solution)
    _no_worse(result, inst, start)
    assert "widening the plan" in str(result.stats["cut_short"])
    assert result.stats["plan_space"] == "templates"
    assert result.status is Status.FEASIBLE  # (the hand-over, which could prove it, never ran)
    if result.best_bound is not None:  # a bound over the template space says so
        assert result.stats["proven_over"] in ("template plan space", "physical plan space")


def test_no_data_by_the_deadline_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    # nothing to answer with: an honest NO_SOLUTION, and the stats say which phase ran out
    def starved(*args: object, **kwargs: object) -> None:
        raise DeadlineReached("building the reconfiguration data (templates, packings)")

    monkeypatch.setattr(decomp, "data_of", starved)
    inst = generate_custom(8, 8, "llama2-70b", 128, 2, 2, seed=0)
    result = schedopt.solve(inst, PHYSICAL, time_limit_s=3)
    assert result.status is Status.NO_SOLUTION and result.solution is None
    assert "building the reconfiguration data" in str(result.stats[NO_ANSWER])
    assert _stats(result.stats)[NO_ANSWER] == result.stats[NO_ANSWER]  # kept in a bench row


@pytest.mark.parametrize("refused", [False, True], ids=["answers-nothing", "too-large"])
def test_auto_gives_the_time_left_to_the_heuristics_when_the_exact_method_answers_nothing(
    monkeypatch: pytest.MonkeyPatch, inst: ReconfigInstance, refused: bool
) -> None:
    # auto's heuristics share passed after the first answer (a share of 0 stands in for a busy
    # machine), then the exact method answered nothing at once (or was refused for its size
    # before it was built): the heuristics cut off run in the time left, and the best of all
    # of them is the answer (with the exact method's label when it ran)
    from schedopt.core import auto
    from schedopt.core.registry import Outcome

    ran: list[str] = []

    def counted(name: str) -> object:
        run = SPEC.methods[name].run

        def wrapped(*args: object) -> Outcome:
            ran.append(name)
            return run(*args)

        return wrapped

    def nothing(*args: object) -> Outcome:
        if refused:
            raise ModelTooLargeError("size", "the model over the limit (a stand-in)")
        return Outcome(Status.NO_SOLUTION, explanation="nothing found (a stand-in)")

    exact = SPEC.auto_exact_for(inst)
    monkeypatch.setattr(auto, "AUTO_HEURISTIC_SHARE", 0.0)
    monkeypatch.setitem(SPEC.methods, exact, dataclasses.replace(SPEC.methods[exact], run=nothing))
    for name in SPEC.auto_heuristics:
        monkeypatch.setitem(
            SPEC.methods, name, dataclasses.replace(SPEC.methods[name], run=counted(name))
        )
    result = schedopt.solve(inst, "auto", time_limit_s=60)
    assert ran == list(SPEC.auto_heuristics)  # every one, once
    assert result.solution is not None and result.objectives is not None
    assert not SPEC.validate(inst, result.solution)
    assert result.status is Status.FEASIBLE
    if refused:
        assert result.method in {f"auto({name})" for name in SPEC.auto_heuristics}
        assert "a stand-in" in (result.explanation or "")
    else:
        assert result.method.startswith(f"auto({exact} < ")
    for name in SPEC.auto_heuristics:  # the best of them (they are deterministic)
        theirs = schedopt.solve(inst, name, time_limit_s=60)
        if theirs.objectives is not None:
            assert result.objectives[0] <= theirs.objectives[0] + 1e-9, name

"""A current pipeline whose TP degree the instance no longer allows (#16 items 2 and 4): the
instance is valid, so no method may crash on it. V2 holds for every pipeline, kept ones too
(formulations/reconfig.md, "Recovery"): such a pipeline is not keepable, and is rebuilt."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import ReconfigInstance, ReconfigSolution, generate
from schedopt.problems.reconfig.validate import validate


def _tiny(**update: object) -> ReconfigInstance:
    doc = generate("tiny", 0).model_dump(mode="json")
    assert {len(s["gpus"]) for p in doc["current_plan"] for s in p["stages"]} == {4}
    return ReconfigInstance.model_validate({**doc, **update})


def _heads_two() -> ReconfigInstance:
    doc = generate("tiny", 0).model_dump(mode="json")
    doc["model"] = {**doc["model"], "heads": 2}
    return ReconfigInstance.model_validate(doc)


CASES = {"tp_sizes [1, 2]": lambda: _tiny(tp_sizes=[1, 2]), "heads 2": _heads_two}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(
    "method",
    ["cpsat", "milp:highs", "milp:cbc", "auto", "heuristic:keep_shrink", "heuristic:oobleck"],
)
def test_a_current_pipeline_at_a_disallowed_tp_degree_crashes_no_method(
    case: str, method: str
) -> None:
    inst = CASES[case]()
    result = schedopt.solve(inst, method, time_limit_s=20)
    if method == "heuristic:keep_shrink":  # nothing to keep: no plan, not a crash
        assert result.status is Status.NO_SOLUTION, result.status
        return
    assert result.status.has_solution, (result.status, result.explanation)
    assert isinstance(result.solution, ReconfigSolution)
    assert validate(inst, result.solution) == []


def test_the_current_pipeline_itself_breaks_v2() -> None:
    inst = _tiny(tp_sizes=[1, 2])
    assert inst.current_plan is not None
    pipe = inst.current_plan[0]
    sol = ReconfigSolution(pipelines=(pipe.model_copy(update={"micro_batches": 8}),))
    assert any(v.constraint_id == "V2" for v in validate(inst, sol))

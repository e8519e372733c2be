"""Results say where their proof holds: the template plan space and its limits."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import (
    Pipeline,
    ReconfigInstance,
    ReconfigSolution,
    SlowGpu,
    Stage,
    model_config,
)
from schedopt.problems.reconfig.generate import generate_custom
from schedopt.problems.reconfig.validate import evaluate, validate
from schedopt.topology import Cluster


def test_an_optimum_names_the_slow_gpus_it_leaves_out() -> None:
    # a host's 4th slow GPU is in no packing: a valid plan on all four beats the model's optimum,
    # so "optimal over the template plan space" must say that space uses at most three of them
    inst = ReconfigInstance(
        cluster=Cluster.dgx(nodes=1, gpus_per_node=4, memory_gib=80),
        model=model_config("toy"),
        global_batch=4,
        tp_sizes=(1,),
        slow_gpus=tuple(SlowGpu(gpu=f"h0/g{i}", speed_factor=0.5) for i in range(4)),
    )
    four = ReconfigSolution(
        pipelines=tuple(
            Pipeline(
                stages=(Stage(layer_start=0, layer_end=4, gpus=(f"h0/g{i}",)),), micro_batches=1
            )
            for i in range(4)
        )
    )
    assert validate(inst, four) == []
    for method in ("cpsat", "milp:highs"):
        result = schedopt.solve(inst, method, time_limit_s=20)
        assert result.status is Status.OPTIMAL and result.objectives is not None
        assert evaluate(inst, four)[0] < result.objectives[0]  # outside the space it proves
        assert "at most 3 slow GPUs of a host" in (result.explanation or "")


def _with_failed(inst: ReconfigInstance, gpu: str) -> ReconfigInstance:
    doc = inst.model_dump(mode="json")
    doc["failed_gpus"] = [*doc["failed_gpus"], gpu]
    doc["slow_gpus"] = [s for s in doc["slow_gpus"] if s["gpu"] != gpu]
    return ReconfigInstance.model_validate(doc)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["milp:highs", "cpsat", "milp:cbc"])
def test_a_hint_that_breaks_the_instance_proves_nothing(method: str) -> None:
    # C12 cuts every plan worse than the hint's first level: a hint with too few micro-batches,
    # or last round's plan on a GPU that has since failed, once made every back-end answer
    # INFEASIBLE on a feasible instance
    inst = generate_custom(2, 4, "toy", 8, fail_stop=1, fail_slow=1, seed=1, memory_gib=8.0)
    plain = schedopt.solve(inst, method, time_limit_s=20)
    assert plain.status is Status.OPTIMAL and plain.solution is not None
    short = plain.solution.model_copy(
        update={
            "pipelines": tuple(
                p.model_copy(update={"micro_batches": 1}) for p in plain.solution.pipelines
            )
        }
    )
    assert validate(inst, short)  # not a plan of this instance
    hinted = schedopt.solve(inst, method, time_limit_s=20, hint=short)
    assert hinted.status is Status.OPTIMAL, hinted.explanation
    assert hinted.objectives == plain.objectives
    used = plain.solution.pipelines[0].stages[0].gpus[0]
    later = _with_failed(inst, used)
    fresh = schedopt.solve(later, method, time_limit_s=20)
    again = schedopt.solve(later, method, time_limit_s=20, hint=plain.solution)
    assert again.status is fresh.status, again.explanation
    assert again.objectives == fresh.objectives

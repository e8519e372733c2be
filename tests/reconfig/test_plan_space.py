"""Results say where their proof holds: the template plan space and its limits."""

from __future__ import annotations

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

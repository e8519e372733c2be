"""Numbers the solvers cannot represent are refused on load, naming the field: the models hold
times in whole µs, so a tiny efficiency or slow factor once reached CP-SAT as an integer of
300 digits (a TypeError from ortools) or an int64 overflow (a RuntimeError)."""

from __future__ import annotations

from typing import Any

import pytest

import schedopt
from schedopt import InvalidInstanceError
from schedopt.core.status import Status
from schedopt.problems.reconfig import ReconfigInstance, model_config
from schedopt.topology import Cluster


def _doc(**fields: Any) -> dict[str, Any]:
    return {
        "problem": "reconfig",
        "cluster": Cluster.dgx(nodes=2, gpus_per_node=8).to_dict(),
        "model": model_config("toy").model_dump(),
        "global_batch": 8,
        **fields,
    }


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"compute_efficiency": 1e-300}, "model"),
        ({"compute_efficiency": 1e-12}, "model"),
        ({"slow_gpus": [{"gpu": "h0/g3", "speed_factor": 1e-300}]}, "slow_gpus[0].speed_factor"),
        ({"slow_gpus": [{"gpu": "h0/g3", "speed_factor": 5e-324}]}, "slow_gpus[0].speed_factor"),
        (
            {
                "gpu_peak_tflops": 1e-3,
                "model": model_config("toy", layers=1024).model_dump(),
                "global_batch": 65536,
            },
            "model",
        ),
    ],
)
def test_times_beyond_the_solvers_are_refused(fields: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        ReconfigInstance.model_validate(_doc(**fields))
    assert err.value.path == path, err.value
    assert "µs" in err.value.reason


def test_a_rate_beyond_the_solvers_is_refused() -> None:
    doc = _doc(gpu_peak_tflops=1e-2, global_batch=65536, restart_s=1e9)
    planned = schedopt.solve(ReconfigInstance.model_validate(doc), "heuristic:megatron")
    assert planned.solution is not None
    plan = [p.model_dump() for p in planned.solution.pipelines]
    ReconfigInstance.model_validate({**doc, "current_plan": plan})  # fine without a rate
    with pytest.raises(InvalidInstanceError) as err:
        ReconfigInstance.model_validate({**doc, "current_plan": plan, "failure_rate_per_hour": 1e3})
    assert err.value.path == "failure_rate_per_hour"


@pytest.mark.parametrize("method", ["cpsat", "milp:highs"])
def test_slow_hardware_within_the_range_solves(method: str) -> None:
    # 1 GFLOP/s GPUs and 65,536 micro-batches: an iteration of 4.9e7 s, still whole µs in int64
    inst = ReconfigInstance.model_validate(
        _doc(
            gpu_peak_tflops=1e-3,
            model=model_config("toy", layers=64).model_dump(),
            global_batch=65536,
            max_stages=4,
        )
    )
    result = schedopt.solve(inst, method, time_limit_s=20)
    assert result.status is Status.OPTIMAL
    assert result.objectives is not None and result.objectives[0] > 1e7

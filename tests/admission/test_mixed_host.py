"""A host may hold GPUs of more than one type (issue 7, item 5): one A100 among H100s.

Before the fix every method failed its own validator: the models counted all of a host's GPUs
as the type of its first GPU, so the A100 became H100 capacity (V4) and a gang wider than a host
was expected to take the A100 too (V7). A host is now one group per GPU type (C3, placement,
V4, V7).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.problems.admission import SPEC, AdmissionInstance
from schedopt.topology import Cluster


def _cluster(variant: str) -> Cluster:
    spec = Cluster.dgx(nodes=2, gpus_per_node=8).to_dict()
    if variant == "replaced":  # h1 holds 7 H100 and 1 A100
        spec["gpus"][15]["gpu_type"] = "A100"
    else:  # h1 holds 8 H100 and a 9th GPU, an A100
        spec["gpus"].append({**spec["gpus"][15], "id": "h1/g8", "gpu_type": "A100"})
        spec["links"] += [{**link, "a": "h1/g8"} for link in spec["links"] if link["a"] == "h1/g7"]
    return Cluster.from_dict(spec)


def _instance(variant: str) -> AdmissionInstance:
    h100 = {"1": 1.0, "2": 1.9, "8": 7.0, "16": 13.0}
    jobs = [
        {
            "id": "slo",
            "kind": "strict_slo",
            "remaining_iterations": 400,
            "throughput_by_type": {"H100": {"1": 1.0, "2": 2.0}},
            "deadlines": [{"deadline_s": 600, "value": 10}],
        },
        # no job lists A100 (the case) ...
        {"id": "wide", "kind": "best_effort", "remaining_iterations": 9000,
         "throughput_by_type": {"H100": h100}},
        {"id": "eight", "kind": "best_effort", "remaining_iterations": 9000,
         "throughput_by_type": {"H100": {"8": 7.0}}},
        # ... and one that runs on any type
        {"id": "any", "kind": "best_effort", "remaining_iterations": 500, "throughput": {"1": 1.0}},
    ]  # fmt: skip
    doc = {"cluster": _cluster(variant), "slots": 8, "slot_s": 100.0, "jobs": jobs}
    return AdmissionInstance.model_validate(doc)


@pytest.mark.parametrize("variant", ["replaced", "extra"])
@pytest.mark.parametrize("method", ["auto", *SPEC.methods])
def test_every_method_validates_on_a_mixed_host(variant: str, method: str) -> None:
    inst = _instance(variant)
    result = schedopt.solve(inst, method, time_limit_s=5)  # raises ValidationFailedError on a bug
    assert result.solution is not None
    assert SPEC.validate(inst, result.solution) == []
    assert result.solution.plan("slo").admitted
    a100 = {g for g in inst.cluster.gpus() if inst.cluster.gpu(g).gpu_type == "A100"}
    for job_id, gpus in result.solution.placement.items():
        plan = result.solution.plan(job_id)
        assert {inst.cluster.gpu(g).gpu_type for g in gpus} == {plan.gpu_types[0]}
        if job_id != "any":
            assert not a100 & set(gpus)


def test_the_shipped_small_instance_with_a_foreign_gpu_on_a_host() -> None:
    """The case fair share refuses (tests/io/test_hostile_input.py): admission solves it."""
    root = Path(__file__).resolve().parents[2]
    doc = json.loads((root / "instances" / "admission" / "small-s0.json").read_text())
    doc["cluster"]["gpus"][1]["gpu_type"] = "X1"
    inst = schedopt.io.parse_instance(doc)
    for method in ("auto", *SPEC.methods):
        result = schedopt.solve(inst, method, time_limit_s=5)
        assert result.solution is not None and SPEC.validate(inst, result.solution) == []

"""Brute force on tiny instances (≤ 2 hosts, ≤ 6 layers) equals the exact models' first level
over the documented plan space (formulations/reconfig.md)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import ReconfigInstance
from schedopt.problems.reconfig.strategies import instance_dicts

from .bruteforce import best_iteration_us


def _no_plan(doc: dict) -> ReconfigInstance:
    doc = {**doc, "global_batch": min(doc["global_batch"], 4 * doc["micro_batch"])}
    doc.pop("current_plan", None)
    doc.pop("failure_rate_per_hour", None)
    return ReconfigInstance.model_validate(doc)


@pytest.mark.parametrize("method", ["milp:highs", "cpsat"])
@settings(derandomize=True, deadline=None, max_examples=20, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=6))
def test_exact_first_level_equals_brute_force(method: str, doc: dict) -> None:
    inst = _no_plan(doc)
    usable = len(inst.cluster.gpus()) - len(inst.failed_gpus)
    assume(usable <= 6)
    brute = best_iteration_us(inst)
    result = schedopt.solve(inst, method, time_limit_s=30)
    if brute is None:
        assert result.status is Status.INFEASIBLE, result.status
        return
    assert result.status is Status.OPTIMAL, (result.status, result.explanation)
    assert round(result.objectives[0] * 1e6) == brute, (result.objectives, brute)

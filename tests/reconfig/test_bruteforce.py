"""Brute force on tiny instances (≤ 2 hosts, ≤ 6 layers) equals the exact models' first level
over the documented plan space (formulations/reconfig.md)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

import schedopt
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.reconfig import ReconfigInstance
from schedopt.problems.reconfig.data import build_data
from schedopt.problems.reconfig.plan import first_level_us, realise
from schedopt.problems.reconfig.rate import search
from schedopt.problems.reconfig.strategies import instance_dicts
from schedopt.problems.reconfig.validate import validate

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


@settings(derandomize=True, deadline=None, max_examples=30, suppress_health_check=list(HealthCheck))
@given(doc=instance_dicts(max_hosts=2, max_layers=6))
def test_the_fixed_time_decomposition_reaches_the_brute_force_first_level(doc: dict) -> None:
    # decomp:rate (R1-R4) proves L1 over the template space: its bound is never above the
    # brute-force optimum, and with no practical limit it meets it
    inst = _no_plan(doc)
    usable = len(inst.cluster.gpus()) - len(inst.failed_gpus)
    assume(usable <= 6)
    brute = best_iteration_us(inst)
    result = schedopt.solve(inst, "decomp:rate", time_limit_s=60)
    if brute is None:  # proven by R2's LP or by R3 where every pipeline holds M (R4)
        assert result.status is Status.INFEASIBLE, (result.status, result.explanation)
        assert result.stats["proven_over"] == "template plan space"
        return
    assert result.objectives is not None and result.best_bound is not None
    assert round(result.best_bound * 1e6) <= brute
    assert round(result.objectives[0] * 1e6) == brute, (result.objectives, brute)
    assert result.stats["first_level_proven"] == 1.0
    # and from no start at all: the plan is the fixed-time MILPs' own (R3)
    data = build_data(inst)
    raw, bound, _ = search(data, None, Deadline.after(60))
    assert raw is not None and bound is not None
    assert bound <= brute == first_level_us(data, raw)
    sol = realise(data, raw)
    assert sol is not None and validate(inst, sol) == []

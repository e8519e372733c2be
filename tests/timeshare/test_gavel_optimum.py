"""Gavel's policies: schedopt's optimum equals an independent one (tests/timeshare/reference.py,
dense LPs from Gavel's code solved by scipy) to 1e-6, for every policy and exact back-end, with
priority weights, scale factors, zero throughputs and co-located pairs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.problems.timeshare import Policy, TimeshareInstance, generate_custom
from schedopt.problems.timeshare.strategies import instances

from . import reference

EXACT = ("milp:highs", "milp:cbc")


def gavel_value(inst: TimeshareInstance, method: str) -> float:
    """The policy's value in Gavel's terms, from schedopt's result."""
    result = schedopt.solve(inst, method, time_limit_s=30)
    assert result.status is Status.OPTIMAL, (result.status, result.explanation)
    if inst.policy is Policy.MIN_MAKESPAN:
        return result.metrics["makespan_s"]
    if inst.policy is Policy.FINISH_TIME_FAIRNESS:
        return result.metrics["max_finish_time_ratio"]
    return result.objectives[0]


@pytest.mark.parametrize("method", EXACT)
@pytest.mark.parametrize("policy", list(Policy))
@pytest.mark.parametrize("pairs", [False, True])
def test_generated_rounds_match_the_reference(policy: Policy, pairs: bool, method: str) -> None:
    if pairs and not policy.takes_pairs:
        pytest.skip("the throughput-blind policy takes no pairs")
    for seed in range(3):
        inst = generate_custom(8, seed=seed, policy=policy, pairs=pairs)
        assert gavel_value(inst, method) == pytest.approx(reference.policy_value(inst), rel=1e-6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_jobs=4), method=st.sampled_from(EXACT))
def test_hypothesis_rounds_match_the_reference(inst: TimeshareInstance, method: str) -> None:
    assert gavel_value(inst, method) == pytest.approx(reference.policy_value(inst), rel=1e-6)


def test_priority_weight_and_scale_factor_by_hand() -> None:
    """Two jobs, 2 V100s and 2 K80s; job b has priority 2 and runs on 2 GPUs.

    Both run only on V100 (K80 throughput 0), so max-min gives each ρ/(π p) equal: p_a =
    p_b·(same rates) and the V100 pool of 2 GPUs holds x_a + 2 x_b ≤ 2. With T = 1 per s on
    V100: p = 1·2/4 = 0.5; a: 1·x_a/(1·0.5) = 2 x_a, b: 2·x_b/(2·0.5) = 2 x_b, so
    x_a = x_b = 2/3 and the optimum is 4/3."""
    inst = TimeshareInstance.model_validate(
        {
            "policy": "max_min_fairness_perf",
            "workers": {"v100": 2, "k80": 2},
            "jobs": [
                {"id": "a", "throughput": {"v100": 1.0, "k80": 0.0}},
                {
                    "id": "b",
                    "throughput": {"v100": 1.0, "k80": 0.0},
                    "scale_factor": 2,
                    "priority_weight": 2.0,
                },
            ],
        }
    )
    for method in EXACT:
        assert gavel_value(inst, method) == pytest.approx(4 / 3, rel=1e-6)
    assert reference.policy_value(inst) == pytest.approx(4 / 3, rel=1e-9)

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
@pytest.mark.parametrize(
    ("policy", "pairs"),
    [(p, False) for p in Policy] + [(p, True) for p in Policy if p.takes_pairs],
)
def test_generated_rounds_match_the_reference(policy: Policy, pairs: bool, method: str) -> None:
    for seed in range(3):
        inst = generate_custom(8, seed=seed, policy=policy, pairs=pairs)
        assert gavel_value(inst, method) == pytest.approx(reference.policy_value(inst), rel=1e-6)


@pytest.mark.slow
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


@pytest.mark.parametrize("method", ("auto", *EXACT))
@pytest.mark.parametrize("policy", list(Policy))
def test_a_zero_rate_last_gpu_type_is_solved_by_every_method(policy: Policy, method: str) -> None:
    """One job that cannot run on the last type: its column is left out, the model's last row
    has no terms, and ``auto`` crashed mapping the hint onto the model (np.add.reduceat on an
    empty last row, #16) while milp:highs solved it."""
    job: dict = {"id": "j0", "throughput": {"a": 1.0, "b": 0.0}}
    if policy.needs_remaining_steps:
        job["remaining_steps"] = 100.0
    inst = TimeshareInstance.model_validate(
        {"policy": policy.value, "workers": {"a": 1, "b": 1}, "jobs": [job]}
    )
    assert gavel_value(inst, method) == pytest.approx(reference.policy_value(inst), rel=1e-6)


def _typed_round(policy: Policy, jobs: int = 24) -> TimeshareInstance:
    """Jobs drawn from three job types, as Gavel's rounds draw from its 26: many identical."""
    types = [
        {"v100": 6.0, "p100": 3.0, "k80": 1.0},
        {"v100": 2.0, "p100": 1.8, "k80": 1.5},
        {"v100": 4.0, "p100": 2.0, "k80": 0.0},
    ]
    doc_jobs = []
    for i in range(jobs):
        job = {"id": f"j{i}", "throughput": types[i % 3], "priority_weight": 1.0 + (i % 2)}
        if policy.needs_remaining_steps:
            job["remaining_steps"] = 1000.0 * (1 + i % 2)
        doc_jobs.append(job)
    return TimeshareInstance.model_validate(
        {"policy": policy.value, "workers": {"v100": 3, "p100": 3, "k80": 3}, "jobs": doc_jobs}
    )


@pytest.mark.parametrize("policy", list(Policy))
def test_identical_jobs_share_one_row_and_keep_the_optimum(policy: Policy) -> None:
    """data.aggregate: 24 jobs are 6 classes; the optimum is the reference's, every job gets
    its own shares, and the solution is valid for the round as given."""
    from schedopt.problems.timeshare.data import aggregate, build_data

    inst = _typed_round(policy)
    assert aggregate(build_data(inst)).num_jobs == 6
    for method in EXACT:
        assert gavel_value(inst, method) == pytest.approx(reference.policy_value(inst), rel=1e-6)
    result = schedopt.solve(inst, "milp:highs")
    assert {s.job for s in result.solution.shares} == {j.id for j in inst.jobs}


def _colocated_round(policy: Policy, jobs: int = 14, lopsided: bool = False) -> TimeshareInstance:
    """``_typed_round``'s jobs with job types and a co-location table over every type pair
    (``lopsided``: a type with itself has two different rates)."""
    inst = _typed_round(policy, jobs)
    names = ("resnet", "lm", "rl")
    doc = inst.model_dump(mode="json")
    for i, job in enumerate(doc["jobs"]):
        job["job_type"] = names[i % 3]
    rates = {
        ("resnet", "resnet"): {"v100": [3.5, 2.0 if lopsided else 3.5], "k80": [0.6, 0.6]},
        ("resnet", "lm"): {"v100": [4.0, 1.5], "p100": [2.0, 1.0]},
        ("lm", "rl"): {"v100": [1.2, 3.0], "k80": [1.0, 0.0]},
        ("rl", "rl"): {"v100": [2.5, 2.5], "p100": [1.4, 1.4]},
    }
    doc["colocation"] = [{"job_types": list(k), "throughput": v} for k, v in rates.items()]
    return TimeshareInstance.model_validate(doc)


def _as_pairs(inst: TimeshareInstance) -> TimeshareInstance:
    """The same round with every implied pair written out (reference.py's expansion)."""
    doc = inst.model_dump(mode="json")
    doc["colocation"] = []
    doc["pairs"] = [
        {"jobs": list(members), "throughput": {w: list(r) for w, r in rates.items()}}
        for members, rates, _ in reference._combos(inst)
        if len(members) == 2
    ]
    return TimeshareInstance.model_validate(doc)


@pytest.mark.parametrize("lopsided", [False, True])
@pytest.mark.parametrize("policy", [p for p in Policy if p.takes_pairs])
def test_colocation_by_job_type_keeps_the_optimum_of_the_pairs_it_implies(
    policy: Policy, lopsided: bool
) -> None:
    """14 jobs of 3 types with a co-location table: the model has class pairs of classes of 2
    and 3 jobs (a class with itself among them, or, when a type's rates with itself differ,
    its jobs kept apart), and its optimum is the reference's over the 91 pairs written out,
    and the pair round's."""
    from schedopt.problems.timeshare.data import aggregate, build_data

    inst = _colocated_round(policy, lopsided=lopsided)
    data = aggregate(build_data(inst))
    assert data.num_jobs == (9 if lopsided else 6)  # resnet's 5 jobs apart when lopsided
    assert max(data.counts) == 3  # classes of 2 and 3 jobs
    pairs = _as_pairs(inst)
    expected = reference.policy_value(inst)
    for method in EXACT:
        assert gavel_value(inst, method) == pytest.approx(expected, rel=1e-6)
        assert gavel_value(pairs, method) == pytest.approx(expected, rel=1e-6)
    result = schedopt.solve(inst, "milp:highs")
    from schedopt.problems.timeshare.validate import validate

    assert validate(inst, result.solution) == []
    assert any(s.with_job is not None for s in result.solution.shares)
    assert result.objectives[1] == pytest.approx(
        schedopt.solve(pairs, "milp:highs").objectives[1], rel=1e-6
    )

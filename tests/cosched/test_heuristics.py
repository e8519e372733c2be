"""The heuristics: RollMux's two baselines and the packing heuristic."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.cosched import SPEC, BaselineParams, PackingParams, generate

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "cosched"


def _pools(inst, sol) -> dict[str, set[str]]:
    plans = {p.job_id: p for p in sol.plans}
    return {
        j.id: {
            ph.options[pp.option].pool for ph, pp in zip(j.phases, plans[j.id].phases, strict=True)
        }
        for j in inst.jobs
    }


@pytest.mark.parametrize("params", [BaselineParams, PackingParams])
def test_params_are_tunable(params) -> None:
    names = {f.name for f in dataclasses.fields(params)}
    assert set(params.SPACE) == names
    for low, high in params.SPACE.values():
        assert low < high


def test_baselines_give_every_job_its_own_group() -> None:
    inst = generate("small", 0)
    for method in ("heuristic:disaggregated", "heuristic:colocated"):
        r = schedopt.solve(inst, method, time_limit_s=10)
        assert r.status is Status.FEASIBLE, r.explanation
        assert all(len(g.members) == 1 for g in r.solution.groups)
    spread = _pools(inst, schedopt.solve(inst, "heuristic:disaggregated", time_limit_s=10).solution)
    tight = _pools(inst, schedopt.solve(inst, "heuristic:colocated", time_limit_s=10).solution)
    assert all(len(spread[j]) >= len(tight[j]) for j in spread)
    assert any(len(spread[j]) > len(tight[j]) for j in spread)


def test_packing_shares_a_group_between_complementary_jobs() -> None:
    inst = schedopt.load(INSTANCES / "complementary-2j.json")
    r = schedopt.solve(inst, "heuristic:packing", time_limit_s=10)
    assert r.status is Status.FEASIBLE
    assert len(r.solution.groups) == 1
    assert r.objectives[0] == pytest.approx(28.52)  # the golden optimum
    assert r.metrics["cost_efficiency_vs_disaggregated"] == pytest.approx(2.0)


def test_packing_is_never_dearer_than_the_baselines() -> None:
    for seed in range(3):
        inst = generate("small", seed)
        costs = {
            m: schedopt.solve(inst, m, time_limit_s=10).objectives
            for m in ("heuristic:packing", "heuristic:disaggregated", "heuristic:colocated")
        }
        packed = costs.pop("heuristic:packing")
        assert packed is not None
        for other in costs.values():
            assert other is None or packed[0] <= other[0] + 1e-9, (seed, packed, costs)


def test_too_few_hosts_for_one_group_per_job_is_no_solution_not_infeasible() -> None:
    doc = schedopt.load(INSTANCES / "complementary-2j.json").model_dump(mode="json")
    for pool in doc["pools"]:
        pool["hosts"] = 1
    inst = SPEC.instance_type.model_validate(doc)
    r = schedopt.solve(inst, "heuristic:disaggregated", time_limit_s=5)
    assert r.status is Status.NO_SOLUTION and "hosts" in r.explanation
    assert schedopt.solve(inst, "heuristic:packing", time_limit_s=5).status is Status.FEASIBLE


def test_heuristics_report_an_honest_bound() -> None:
    inst = generate("small", 1)
    exact = schedopt.solve(inst, "milp:highs", time_limit_s=30)
    for method in ("heuristic:packing", "heuristic:disaggregated", "heuristic:colocated"):
        r = schedopt.solve(inst, method, time_limit_s=5)
        assert r.best_bound is not None and r.best_bound <= r.objectives[0]
        if exact.status is Status.OPTIMAL:
            assert r.best_bound <= exact.objectives[0] + 1e-6


def test_heuristic_bound_under_the_chance_constraint_is_below_the_optimum() -> None:
    """The heuristics plan every option at its longest scenario (robust), but the exact model
    may miss a scenario in ε of them: four 2 ms jobs that last 10 ms in one of two scenarios
    (ε = 0.5) share one 1-device host (optimum $1/h), so a bound on the robust durations
    (4 × 10/10 devices = $4/h) is on the wrong side."""
    job = {
        "slo_ms": 10,
        "phases": [
            {
                "name": "rollout",
                "options": [{"pool": "r", "gpus": 1, "duration_ms": 2, "samples_ms": [2, 10]}],
            }
        ],
    }
    inst = SPEC.instance_type.model_validate(
        {
            "pools": [
                {
                    "name": "r",
                    "hosts": 4,
                    "gpus_per_host": 1,
                    "host_memory_gib": 8.0,
                    "price_per_gpu_hour": 1.0,
                }
            ],
            "jobs": [{**job, "id": f"j{i}"} for i in range(4)],
            "chance": {"epsilon": 0.5, "scenarios": 2},
        }
    )
    exact = schedopt.solve(inst, "cpsat", time_limit_s=20)
    assert exact.status is Status.OPTIMAL and exact.objectives[0] == pytest.approx(1.0)
    for method in ("heuristic:packing", "heuristic:disaggregated", "heuristic:colocated"):
        r = schedopt.solve(inst, method, time_limit_s=5)
        assert r.status is Status.FEASIBLE
        assert "bound_discarded" not in r.stats
        assert r.best_bound is not None and r.best_bound <= exact.objectives[0] + 1e-9, method


def test_a_heuristic_does_not_claim_that_no_plan_exists() -> None:
    """Under C13 the heuristics plan every option at its longest scenario: a job whose rollout
    lasts 20 ms in one of two scenarios (SLO 10 ms, ε = 0.5) has no robust plan, yet CP-SAT
    proves a $1/h optimum. The heuristics said "no plan meets 'a''s SLO alone"."""
    option = {"pool": "r", "gpus": 1, "duration_ms": 2, "samples_ms": [2, 20]}
    inst = SPEC.instance_type.model_validate(
        {
            "pools": [
                {
                    "name": "r",
                    "hosts": 1,
                    "gpus_per_host": 1,
                    "host_memory_gib": 8.0,
                    "price_per_gpu_hour": 1.0,
                }
            ],
            "jobs": [
                {"id": "a", "slo_ms": 10, "phases": [{"name": "rollout", "options": [option]}]}
            ],
            "chance": {"epsilon": 0.5, "scenarios": 2},
        }
    )
    assert schedopt.solve(inst, "cpsat", time_limit_s=10).status is Status.OPTIMAL
    for method in ("heuristic:packing", "heuristic:disaggregated", "heuristic:colocated"):
        r = schedopt.solve(inst, method, time_limit_s=5)
        assert r.status is Status.NO_SOLUTION
        assert "no plan meets" not in r.explanation and "heuristic found no plan" in r.explanation

"""Heuristic behaviour a scheduler relies on every round."""

from __future__ import annotations

from dataclasses import fields

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.fairshare import (
    SPEC,
    AstraeaParams,
    FairshareInstance,
    GavelRoundParams,
    solve_gavel_lp,
)
from schedopt.topology import Cluster


def _round(**kw) -> FairshareInstance:
    doc = {
        "cluster": Cluster.dgx(nodes=1, gpus_per_node=4).to_dict(),
        "round_s": 100.0,
        "tenants": [
            {"id": "starved", "weight": 1.0, "deserved_gpu_s": 1000.0, "used_gpu_s": 0.0},
            {"id": "rich", "weight": 1.0, "deserved_gpu_s": 1000.0, "used_gpu_s": 3000.0},
        ],
        "jobs": [
            {
                "id": f"{t}{k}",
                "tenant": t,
                "throughput": {"H100": {1: 1.0}},
                "remaining_iterations": 1e6,
                "restart_cost_s": 10.0,
                **({"previous": {"gpu_type": "H100", "hosts": {"h0": 1}}} if t == "rich" else {}),
            }
            for t in ("starved", "rich")
            for k in range(4)
        ],
    }
    doc.update(kw)
    return FairshareInstance.model_validate(doc)


def _gpus(inst, sol) -> dict[str, int]:
    out = {t.id: 0 for t in inst.tenants}
    for a in sol.allocations:
        out[inst.jobs[inst.job_index[a.job_id]].tenant] += a.count
    return out


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round", "milp:highs"])
def test_the_starved_tenant_is_served_first(method: str) -> None:
    inst = _round()
    result = schedopt.solve(inst, method)
    assert _gpus(inst, result.solution) == {"starved": 4, "rich": 0}


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round", "cpsat"])
def test_preemption_cap_keeps_running_jobs(method: str) -> None:
    inst = _round(max_preemptions=1)
    result = schedopt.solve(inst, method)
    assert result.metrics["preemptions"] <= 1
    assert _gpus(inst, result.solution)["rich"] >= 3
    assert SPEC.validate(inst, result.solution) == []


@pytest.mark.parametrize("method", ["heuristic:astraea", "heuristic:gavel-round", "milp:cbc"])
def test_hard_guarantees_are_met(method: str) -> None:
    doc = _round().model_dump(mode="json")
    doc["guarantees_hard"] = True
    doc["tenants"][1]["guaranteed_gpus"] = 2
    inst = FairshareInstance.model_validate(doc)
    result = schedopt.solve(inst, method)
    assert result.status.has_solution
    assert _gpus(inst, result.solution)["rich"] >= 2


def test_impossible_cap_is_infeasible_for_exact_and_no_solution_for_heuristics() -> None:
    doc = _round(max_preemptions=0).model_dump(mode="json")
    doc["unavailable_gpus"] = ["h0/g0", "h0/g1"]  # two running jobs cannot stay
    inst = FairshareInstance.model_validate(doc)
    for method in ("cpsat", "milp:highs"):
        r = schedopt.solve(inst, method)
        assert r.status is Status.INFEASIBLE and "max_preemptions" in r.explanation
    h = schedopt.solve(inst, "heuristic:astraea")
    assert h.status is Status.NO_SOLUTION and "not a proof" in h.explanation


def test_gavel_round_reports_the_lp_bound() -> None:
    inst = schedopt.get_problem("fairshare").generate("medium", 0)
    r = schedopt.solve(inst, "heuristic:gavel-round")
    lp = solve_gavel_lp(inst)
    assert r.metrics["gavel_lp_min_share"] == pytest.approx(lp.bound)
    assert r.objective <= r.best_bound


@pytest.mark.parametrize("cls", [AstraeaParams, GavelRoundParams])
def test_params_are_tunable(cls) -> None:
    assert set(cls.SPACE) == {f.name for f in fields(cls)}
    method = {AstraeaParams: "heuristic:astraea", GavelRoundParams: "heuristic:gavel-round"}[cls]
    assert SPEC.method(method).params is cls
    with pytest.raises(ValueError, match="unknown parameters"):
        schedopt.solve(_round(), method, params={"nope": 1})
    low = {k: v[0] for k, v in cls.SPACE.items()}
    assert schedopt.solve(_round(), method, params=low).status is Status.FEASIBLE

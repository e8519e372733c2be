"""Admission's shipped example and infeasible instance (the golden optima × every exact method
are in tests/conformance/test_golden.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.admission import AdmissionInstance
from schedopt.topology import Cluster
from tests.timing import PROOF_LIMIT_S

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "instances" / "admission"
EXACT = ["cpsat", "milp:highs", "milp:cbc"]


def test_auto_on_the_example_is_optimal_and_explains_rejections() -> None:
    inst = schedopt.load(GOLDEN_DIR / "example.json")
    result = schedopt.solve(inst, time_limit_s=PROOF_LIMIT_S, deterministic=True)
    assert result.status is Status.OPTIMAL
    assert result.objectives == pytest.approx((36.0, 1.9142363904, 52.0))
    rejected = {p.job_id: p.rejection for p in result.solution.plans if p.admitted is False}
    assert set(rejected) == {"resnet-nightly"}
    assert rejected["resnet-nightly"].reason.value == "deadline_unreachable_alone"
    assert rejected["resnet-nightly"].proven


@pytest.mark.parametrize("method", [*EXACT, "auto"])
def test_infeasible_golden_names_a_minimal_conflict(method: str) -> None:
    inst = schedopt.load(GOLDEN_DIR / "infeasible-admitted.json")
    result = schedopt.solve(
        inst, method, time_limit_s=PROOF_LIMIT_S, deterministic=not method.startswith("milp:")
    )
    assert result.status is Status.INFEASIBLE
    assert result.solution is None
    assert "'a'" in result.explanation and "minimal" in result.explanation
    with pytest.raises(schedopt.InfeasibleError):
        result.raise_for_status()


def test_heuristic_does_not_claim_infeasibility() -> None:
    inst = schedopt.load(GOLDEN_DIR / "infeasible-admitted.json")
    result = schedopt.solve(inst, "heuristic:edf", time_limit_s=5)
    assert result.status is Status.NO_SOLUTION
    assert "not a proof" in result.explanation


def _growth_counts() -> AdmissionInstance:
    """Two jobs on 2 hosts x 2 GPUs, 2 slots of 60 s, both idle now: j0 (SLO) finishes in
    slot 0 on 2 GPUs (672 >= 604 iterations); j1 (best effort, 1,641 iterations) finishes on 2
    GPUs in slot 0 (1,824) or on 1 GPU in both slots (912 + 912): the same L1 (10) and L2. L3
    counts GPU-count changes both ways (C9a up, C9b down; formulations/admission.md): j0 0->2
    and j1 0->1, kept, is 3; j1 on 2 GPUs is 4. Without C9a only the decreases count, both
    plans cost 0 and the model may return the one with 4: no golden instance told them
    apart (a mutation audit, #17)."""
    jobs = [
        {"id": "j0", "kind": "soft_slo", "remaining_iterations": 604,
         "throughput": {"1": 5.6, "2": 11.2},
         "deadlines": [{"deadline_s": 60.0, "value": 10.0}, {"deadline_s": 120.0, "value": 10.0}]},
        {"id": "j1", "kind": "best_effort", "remaining_iterations": 1641, "weight": 2.0,
         "throughput": {"1": 15.2, "2": 30.4}},
    ]  # fmt: skip
    cluster = Cluster.dgx(nodes=2, gpus_per_node=2)
    doc = {"cluster": cluster, "slots": 2, "slot_s": 60.0, "be_discount": 0.8, "jobs": jobs}
    return AdmissionInstance.model_validate(doc)


@pytest.mark.parametrize("method", EXACT)
def test_gpu_count_increases_are_counted_in_l3(method: str) -> None:
    inst = _growth_counts()
    options = {"deterministic": True} if method == "cpsat" else {}
    result = schedopt.solve(inst, method, time_limit_s=PROOF_LIMIT_S, **options)
    assert result.status is Status.OPTIMAL
    assert result.objectives[0] == pytest.approx(10.0)
    assert result.objectives[2] == pytest.approx(3.0)

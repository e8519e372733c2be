"""Admission's shipped example and infeasible instance (the golden optima × every exact method
are in tests/conformance/test_golden.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.core.status import Status
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

"""Conformance: every exact back-end reaches the recorded optimum on every golden instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.core.status import Status

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "instances" / "admission"
GOLDEN = json.loads((GOLDEN_DIR / "golden.json").read_text())
EXACT = ["cpsat", "milp:highs", "milp:cbc"]


@pytest.mark.parametrize("method", EXACT)
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_exact_backends_reach_the_golden_optimum(name: str, method: str) -> None:
    inst = schedopt.load(GOLDEN_DIR / name)
    expected = GOLDEN[name]
    result = schedopt.solve(inst, method, time_limit_s=60)
    assert result.status.value == expected["status"]
    assert result.objectives == pytest.approx(tuple(expected["objectives"]), rel=1e-6)
    assert result.gap == 0.0


def test_auto_on_the_example_is_optimal_and_explains_rejections() -> None:
    inst = schedopt.load(GOLDEN_DIR / "example.json")
    result = schedopt.solve(inst, time_limit_s=20)
    assert result.status is Status.OPTIMAL
    assert result.objectives == pytest.approx((36.0, 1.9142363904, 52.0))
    rejected = {p.job_id: p.rejection for p in result.solution.plans if p.admitted is False}
    assert set(rejected) == {"resnet-nightly"}
    assert rejected["resnet-nightly"].reason.value == "deadline_unreachable_alone"
    assert rejected["resnet-nightly"].proven


@pytest.mark.parametrize("method", [*EXACT, "auto"])
def test_infeasible_golden_names_a_minimal_conflict(method: str) -> None:
    inst = schedopt.load(GOLDEN_DIR / "infeasible-admitted.json")
    result = schedopt.solve(inst, method, time_limit_s=20)
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

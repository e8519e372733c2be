"""Brute force on tiny instances (≤ 4 jobs, ≤ 2 hosts per pool) equals the exact first level."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.status import Status
from schedopt.problems.cosched import SPEC
from schedopt.problems.cosched.strategies import instances

from .bruteforce import least_cost

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow]
)


def _check(inst, method: str) -> None:
    ref = least_cost(inst)
    result = schedopt.solve(inst, method, time_limit_s=30)
    if ref is None:
        assert result.status is Status.INFEASIBLE, (result.status, result.objectives)
        return
    cost, plan = ref
    assert SPEC.validate(inst, plan) == []  # the brute force's own plan is valid
    assert result.status is Status.OPTIMAL, (result.status, result.explanation)
    assert result.objectives[0] == pytest.approx(cost, abs=1e-6)


@pytest.mark.parametrize("method", ["cpsat", "milp:highs"])
@SETTINGS
@given(inst=instances(max_jobs=3))
def test_brute_force_equals_the_first_level(method: str, inst) -> None:
    _check(inst, method)


@SETTINGS
@given(inst=instances(max_jobs=4))
def test_brute_force_four_jobs_cpsat(inst) -> None:
    _check(inst, "cpsat")


GOLDEN = ["complementary-2j", "affinity-3j", "residency-2j", "stale-1j", "infeasible-slo"]


@pytest.mark.parametrize("name", GOLDEN)
def test_brute_force_equals_the_golden_first_level(name: str) -> None:
    """The golden instances where jobs share groups (hypothesis's tiny draws rarely do)."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "instances" / "cosched"
    inst = schedopt.load(root / f"{name}.json")
    golden = json.loads((root / "golden.json").read_text())[f"{name}.json"]
    ref = least_cost(inst)
    if golden["status"] == "infeasible":
        assert ref is None
        return
    assert ref is not None and SPEC.validate(inst, ref[1]) == []
    assert ref[0] == pytest.approx(golden["objectives"][0], abs=1e-6)

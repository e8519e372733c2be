"""Nash welfare and Gavel's strategy-proof mechanism (issue #19, formulations/timeshare.md,
"Strategy proof"): the outer approximation's optimum is certified by an independent Lagrangian
dual built with scipy's linprog from tests/timeshare/reference.py's polytope; the allocation
passes the validator; the validator catches a violation of every constraint the policy has."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedopt.core.status import Status
from schedopt.problems.timeshare import Policy, Share, TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.codec import shares_of
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.nash import NashProgram, log_spread, strategy_proof
from schedopt.problems.timeshare.strategies import instance_dicts
from schedopt.problems.timeshare.validate import validate

from . import reference
from .test_waterfill import _round

FOREVER = lambda: 60.0  # noqa: E731


@pytest.mark.parametrize("seed", range(8))
def test_the_optimum_is_certified_by_an_independent_dual(seed: int) -> None:
    inst = _round(seed)
    data = build_data(inst)
    found = NashProgram(data).solve(FOREVER, tol=1e-9)
    assert found.status is Status.OPTIMAL and found.x is not None and found.utility is not None
    assert found.gap <= 1e-9
    assert found.value <= found.bound
    # above every allocation scipy's SLSQP finds, and below an independent dual bound
    assert found.value >= reference.nash_slsqp(inst)[0] - 1e-7
    assert found.value <= reference.nash_dual_bound(inst, found.utility) + 1e-9
    assert not validate(inst, shares_of(data, data.singles, found.x))


def test_two_jobs_on_one_gpu_by_hand() -> None:
    """One V100; a runs 2 steps/s there, b 1 step/s: u_j ∝ x_j with x_a + x_b ≤ 1, so the
    Nash welfare splits the GPU in half whatever the rates (max log x + log(1 − x))."""
    inst = TimeshareInstance.model_validate(
        {
            "workers": {"v100": 1},
            "jobs": [
                {"id": "a", "throughput": {"v100": 2.0}},
                {"id": "b", "throughput": {"v100": 1.0}},
            ],
        }
    )
    data = build_data(inst)
    found = NashProgram(data).solve(FOREVER, tol=1e-10)
    assert found.x is not None
    assert found.x == pytest.approx([0.5, 0.5], abs=1e-5)
    # without a, b takes the GPU: d_b = u_a(with b) / u_a(alone) = 1/2, and so does d_a
    mech = strategy_proof(data, FOREVER, tol=1e-10)
    assert mech.status is Status.OPTIMAL and mech.discounts is not None
    assert mech.discounts == pytest.approx([0.5, 0.5], rel=1e-5)


def test_discounts_match_a_brute_force_on_tiny_rounds() -> None:
    """Every program of the mechanism solved by brute force (a grid over the one free share of
    two jobs on one GPU type and an independent formula), against the model's discounts."""
    for ra, rb, cap in [(3.0, 1.0, 1), (1.0, 1.0, 2), (2.0, 5.0, 1)]:
        inst = TimeshareInstance.model_validate(
            {
                "workers": {"v100": cap},
                "jobs": [
                    {"id": "a", "throughput": {"v100": ra}},
                    {"id": "b", "throughput": {"v100": rb}},
                ],
            }
        )
        grid = np.linspace(0, 1, 100_001)
        feasible = grid + np.minimum(1.0, cap - grid) * 0  # x_a on the grid
        best = max(
            (float(np.log(ra * xa) + np.log(rb * min(1.0, cap - xa))), xa)
            for xa in feasible[1:-1]
            if cap - xa > 0
        )
        xa = best[1]
        xb = min(1.0, cap - xa)
        d_a = (rb * xb) / (rb * min(1.0, cap))  # b alone takes min(1, cap) of the GPU(s)
        d_b = (ra * xa) / (ra * min(1.0, cap))
        mech = strategy_proof(build_data(inst), FOREVER, tol=1e-10)
        assert mech.discounts is not None
        assert mech.discounts == pytest.approx([d_a, d_b], abs=1e-4)


def test_the_discounted_allocation_breaks_nothing_and_the_validator_catches_each_rule() -> None:
    inst = _round(3)
    data = build_data(inst)
    mech = strategy_proof(data, FOREVER)
    assert mech.status is Status.OPTIMAL and mech.x is not None and mech.discounts is not None
    assert np.all((mech.discounts >= 0) & (mech.discounts <= 1))
    sol = shares_of(data, data.singles, mech.x)
    assert not validate(inst, sol)
    # the policy's rules are C1, C2 and C4: break each one, the validator names it
    two = next(j for j in inst.jobs if j.throughput["v100"] > 0 and j.throughput["p100"] > 0)
    others = tuple(x for x in sol.shares if x.job != two.id)
    too_long = TimeshareSolution(
        shares=(
            *others,
            Share(job=two.id, worker_type="v100", fraction=0.6),
            Share(job=two.id, worker_type="p100", fraction=0.6),
        )
    )
    assert "V2" in {v.constraint_id for v in validate(inst, too_long)}
    crowd = tuple(Share(job=j.id, worker_type="v100", fraction=1.0) for j in inst.jobs)
    assert sum(j.scale_factor for j in inst.jobs) > inst.workers["v100"]
    assert "V3" in {v.constraint_id for v in validate(inst, TimeshareSolution(shares=crowd))}
    idle = next((j.id, w) for j in inst.jobs for w, r in j.throughput.items() if r == 0)
    nowhere = TimeshareSolution(shares=(Share(job=idle[0], worker_type=idle[1], fraction=0.1),))
    assert "V4" in {v.constraint_id for v in validate(inst, nowhere)}


def test_log_spread_is_the_bound_of_the_formulation() -> None:
    for gap in (1e-12, 1e-6, 1e-2, 1.0):
        s = log_spread(gap)
        assert math.expm1(-s) + s >= gap  # no r < 1 beyond e^{−s} is within the gap
        assert math.expm1(-s) + s == pytest.approx(gap, rel=1e-3)
        assert math.expm1(s) - s >= gap  # the other side is narrower
    assert log_spread(0.0) == 0.0


@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    doc=instance_dicts(max_jobs=5, policy=Policy.MAX_MIN_FAIRNESS_PERF),
    tol=st.sampled_from([1e-6, 1e-9]),
)
def test_hypothesis_every_answer_is_valid_and_bounded(doc: dict, tol: float) -> None:
    doc = {**doc, "pairs": [], "colocation": []}
    inst = TimeshareInstance.model_validate(doc)
    data = build_data(inst, pairs=False)
    mech = strategy_proof(data, FOREVER, tol)
    assert mech.status is Status.OPTIMAL
    assert mech.x is not None and mech.discounts is not None and mech.welfare.x is not None
    assert mech.welfare.value <= mech.welfare.bound
    assert mech.welfare.gap <= tol
    assert np.all((mech.discounts >= 0) & (mech.discounts <= 1))
    for x in (mech.x, mech.welfare.x):
        assert not validate(inst, shares_of(data, data.singles, x))
    certified = reference.nash_dual_bound(inst, mech.welfare.utility)
    assert mech.welfare.value <= certified + 1e-9

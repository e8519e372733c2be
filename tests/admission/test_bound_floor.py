"""The reported L1 bound floored when every tier value is an integer (formulations/admission.md,
"An integral L1")."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.bound import FLOOR_SLACK, integral_floor
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.guide import guide
from schedopt.problems.admission.strategies import instances
from tests.timing import PROOF_LIMIT_S

from .bruteforce import best_first_level

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)


def _halved(data):
    """``data`` with one SLO tier worth half a unit more: L1 is no longer an integer."""
    jobs = list(data.jobs)
    j = next(j for j in jobs if j.is_slo)
    tiers = list(j.tiers)
    tiers[-1] = dataclasses.replace(tiers[-1], value=tiers[-1].value + 0.5)
    jobs[j.index] = dataclasses.replace(j, tiers=tuple(tiers))
    return dataclasses.replace(data, jobs=jobs)


@SETTINGS
@given(inst=instances(max_jobs=5, max_slots=4))
def test_the_floored_bound_is_never_below_the_optimum(inst) -> None:
    truth = best_first_level(inst)
    data = build_data(inst)
    raw = guide(data, 30.0, Deadline.after(60)).bound
    floored = integral_floor(data, raw)
    if raw is None:
        assert floored is None
        return
    assert all(float(t.value).is_integer() for j in data.jobs if j.is_slo for t in j.tiers)
    assert floored == math.floor(raw + FLOOR_SLACK * max(1.0, abs(raw)))
    assert raw - 1 < floored <= raw + 1e-3
    if truth is not None:
        assert floored >= truth - 1e-9


def test_the_floor_is_applied_only_when_every_tier_value_is_an_integer() -> None:
    data = build_data(generate_custom(hosts=4, jobs=60, slots=6, seed=2))
    assert integral_floor(data, 612.7) == 612.0
    assert integral_floor(data, 612.0 - 1e-9) == 612.0  # the bound's own rounding, not floored
    assert integral_floor(data, None) is None
    assert integral_floor(_halved(data), 612.7) == 612.7


def test_decomp_lp_reports_an_integral_bound_on_integral_values() -> None:
    # 32 GPUs, 120 jobs, seed 1: the guide's bound is 702.43 (the floor lowers it to 702)
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=1)
    result = schedopt.solve(inst, "decomp:lp", time_limit_s=PROOF_LIMIT_S)
    assert result.best_bound is not None and result.objective is not None
    assert float(result.best_bound).is_integer()
    assert result.best_bound >= result.objective
    raw = guide(build_data(inst), 30.0, Deadline.after(60)).bound
    assert raw is not None and result.best_bound <= raw + 1e-6
    assert raw > math.floor(raw) + 0.1  # fractional: the floor is what makes it integral
    assert result.best_bound >= math.floor(raw) - 1

"""The time limit is a promise at the benchmark's largest size too (4,096 GPUs × 200 jobs),
not only on the generator's sizes the conformance suite runs: validating and measuring an
answer (the held-out replay, the baselines) must fit in it. At 200 jobs a 1 s heuristic took
2.7 s before the replay was capped and its cost kept back (finish_reserve_s)."""

from __future__ import annotations

import functools
import time

import pytest

import schedopt
from schedopt import TIME_LIMIT_OVERHEAD_S
from schedopt.core.status import Status
from schedopt.problems.cosched import generate_custom


@functools.cache
def _largest():
    return generate_custom(256, 256, 200, 200, 0, (0, 1), scale=4)


@pytest.mark.parametrize(
    "method", ["auto", "heuristic:packing", "heuristic:disaggregated", "cpsat"]
)
def test_200_jobs_return_within_the_limit(method: str) -> None:
    inst = _largest()
    started = time.perf_counter()
    r = schedopt.solve(inst, method, time_limit_s=1.0)
    assert time.perf_counter() - started <= 1.0 + TIME_LIMIT_OVERHEAD_S, r.stats
    if method == "cpsat":
        assert r.status is Status.NO_SOLUTION and r.best_bound is not None
    else:
        assert r.status is Status.FEASIBLE
        assert 0.0 <= r.metrics["slo_attainment_holdout"] <= 1.0


def test_an_oversize_model_is_refused_cheaply() -> None:
    """The refusal estimated the model's size by forming every pair of phases (C11): 23 s at
    1,000 jobs before a 1 s limit could answer. It now counts them per pool."""
    inst = generate_custom(256, 256, 200, 1000, 0, (0, 1), scale=4)
    started = time.perf_counter()
    r = schedopt.solve(inst, "cpsat", time_limit_s=1.0)
    assert time.perf_counter() - started <= 1.0 + TIME_LIMIT_OVERHEAD_S
    assert r.status is Status.NO_SOLUTION and "too large" in r.explanation

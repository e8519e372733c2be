"""The time limit is a promise at the benchmark's largest size too (4,096 GPUs × 200 jobs),
not only on the generator's sizes the conformance suite runs: validating and measuring an
answer (the held-out replay, the baselines) must fit in it. At 200 jobs a 1 s heuristic took
2.7 s before the replay was capped and its cost kept back (finish_reserve_s)."""

from __future__ import annotations

import functools
import time

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.cosched import generate_custom
from tests.timing import promised_s, slowdown

pytestmark = pytest.mark.slow


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
    assert time.perf_counter() - started <= promised_s(1.0), r.stats
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
    assert time.perf_counter() - started <= promised_s(1.0)
    assert r.status is Status.NO_SOLUTION and "too large" in r.explanation


def test_checking_one_group_per_job_fits_the_reserve_at_1000_jobs() -> None:
    """Validating and measuring an answer is kept back from the limit (finish_reserve_s,
    linear in the jobs); the validator rebuilt its job and plan indices for every group, so
    one group per job took 3.2 s at 1,000 jobs against a 0.85 s reserve."""
    from schedopt.core.options import SolveOptions
    from schedopt.core.stopping import Deadline
    from schedopt.problems.cosched import SPEC
    from schedopt.problems.cosched.heuristics import solve_colocated

    inst = generate_custom(4000, 4000, 1000, 1000, 0, (0, 1), scale=4)
    sol = solve_colocated(inst, SolveOptions(time_limit_s=60), Deadline.after(60)).solution
    assert sol is not None and len(sol.groups) == 1000
    started = time.perf_counter()
    assert SPEC.validate(inst, sol) == []
    SPEC.evaluate(inst, sol)
    assert "slo_attainment_holdout" in SPEC.metrics(inst, sol)
    assert time.perf_counter() - started <= SPEC.finish_reserve_s(inst) * slowdown()


@pytest.mark.parametrize(("limit", "workers"), [(1.0, 0), (5.0, 2)])
def test_colgen_returns_within_the_limit_at_200_jobs(limit: float, workers: int) -> None:
    """Issue #17: column generation, its sub-solves (in 2 worker processes: start-up and join
    included) and the Farley bound keep the promise at 4,096 GPUs × 200 jobs."""
    inst = _largest()
    started = time.perf_counter()
    params = {"workers": workers} if workers else {}  # 0 (inline) is refused since c01f24a
    r = schedopt.solve(inst, "colgen", time_limit_s=limit, params=params)
    assert time.perf_counter() - started <= promised_s(limit), r.stats
    assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION)
    if r.solution is not None and r.best_bound is not None:
        assert r.objectives[0] >= r.best_bound

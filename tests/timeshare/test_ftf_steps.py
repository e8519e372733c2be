"""Finish-time fairness reaches the exact optimum in a few LPs (issue #19, defect 1): the
safeguarded secant on σ(r) = 1 against the bisection of reference.py."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.timeshare import TimeshareInstance

from .reference import policy_value

WORKERS = {"k80": 1, "p100": 1, "v100": 1}

#: A round with time already elapsed where the Dinkelbach iteration of 2026-12-02 took 48
#: LPs (and 60 on rounds of Gavel's traces, then stopped short as FEASIBLE).
SLOW_ROUND = [
    {
        "id": "j0",
        "throughput": {"k80": 0.0, "p100": 7.209838912314459, "v100": 4.757070847915819},
        "scale_factor": 1,
        "remaining_steps": 6026.438678195889,
        "time_since_start_s": 4456.255378561413,
        "isolated_time_s": 1064.6546979494126,
    },
    {
        "id": "j1",
        "throughput": {"k80": 0.0, "p100": 4.813420165517359, "v100": 13.029727726149801},
        "scale_factor": 1,
        "remaining_steps": 169.56545429113152,
        "time_since_start_s": 3814.0549064175043,
        "isolated_time_s": 1922.0586210833987,
    },
]


def _instance(jobs: list[dict], workers: dict[str, int] = WORKERS) -> TimeshareInstance:
    return TimeshareInstance.model_validate(
        {"name": "ftf", "policy": "finish_time_fairness", "workers": workers, "jobs": jobs}
    )


def _check(inst: TimeshareInstance, max_steps: int) -> None:
    r = schedopt.solve(inst, method="milp:highs", time_limit_s=60)
    assert r.status is Status.OPTIMAL
    ref = policy_value(inst)
    assert r.metrics["max_finish_time_ratio"] == pytest.approx(ref, rel=1e-7)
    assert r.stats["dinkelbach_steps"] <= max_steps


def test_the_slow_round_is_exact_in_a_few_lps() -> None:
    _check(_instance(SLOW_ROUND), max_steps=6)


@pytest.mark.parametrize("seed", range(4))
def test_random_rounds_with_elapsed_time_are_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n = int(rng.integers(2, 6))
        jobs = [
            {
                "id": f"j{j}",
                "throughput": {
                    "k80": float(rng.choice([0.0, rng.uniform(0.5, 10)])),
                    "p100": float(rng.choice([0.0, rng.uniform(0.5, 10)])),
                    "v100": float(rng.uniform(1, 20)),
                },
                "scale_factor": int(rng.choice([1, 1, 2])),
                "remaining_steps": float(rng.uniform(100, 10_000)),
                "time_since_start_s": float(rng.uniform(0, 5000)),
                "isolated_time_s": float(rng.uniform(0, 2000)),
            }
            for j in range(n)
        ]
        _check(_instance(jobs, {"k80": 2, "p100": 2, "v100": 2}), max_steps=20)

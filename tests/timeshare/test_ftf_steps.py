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


def test_one_highs_model_across_the_steps_solves_each_steps_lp() -> None:
    """The steps share one HiGHS model, changing t's coefficient in each C3 row (exact.py,
    _ReusedLp): each step's σ is that of the step's LP built afresh, in any order of targets
    (a target below some τ_j/E_j gives σ = 0 without a solve)."""
    import time

    from schedopt.core.options import SolveOptions
    from schedopt.core.stopping import Deadline
    from schedopt.model import ExactBackend, Hooks, solve_levels
    from schedopt.model.method import emit
    from schedopt.problems.timeshare.data import aggregate, build_data
    from schedopt.problems.timeshare.exact import _ReusedLp, all_columns
    from schedopt.problems.timeshare.ftf import weights_at
    from schedopt.problems.timeshare.model import build_model

    rng = np.random.default_rng(5)
    jobs = [
        {
            "id": f"j{j}",
            "throughput": {"k80": float(rng.uniform(0.5, 3)), "v100": float(rng.uniform(1, 9))},
            "scale_factor": int(rng.choice([1, 2])),
            "remaining_steps": float(rng.uniform(100, 10_000)),
            "time_since_start_s": float(rng.uniform(0, 5000)),
            "isolated_time_s": float(rng.uniform(0, 2000)),
        }
        for j in range(6)
    ]
    data = aggregate(build_data(_instance(jobs, {"k80": 2, "v100": 3})))
    columns = all_columns(data)
    options = SolveOptions(time_limit_s=30)
    deadline = Deadline(time.perf_counter() + 30)
    reused = _ReusedLp(data, columns, options, deadline)
    try:
        for target in (6.0, 2.0, 9.0, 0.5, 3.0, 2.5):
            weights = weights_at(data, target)
            step = reused.step(weights)
            tm = build_model(data, weights, columns, deadline, levels=1)
            lex = solve_levels(
                tm.model,
                emit(tm.model, ExactBackend.HIGHS, options, Hooks()),
                options,
                deadline,
                Hooks(),
            )
            fresh = max(0.0, float(lex.values[tm.t[()]]))
            assert step.status is Status.OPTIMAL
            assert step.sigma == pytest.approx(fresh, rel=1e-7, abs=1e-9), target
    finally:
        reused.close()

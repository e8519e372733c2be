"""Time-sharing (Gavel) suites: small (tiny and small sizes, pairs), medium (256 jobs) and
paper (2,048 jobs, the scale of Gavel's simulations), and the cold-solve tables of
benchmarks/RESULTS.md: ``timeshare-cold`` (three policies by size, level 1 alone as Gavel and
with level 2), ``timeshare-pairs`` (space sharing by column generation) and ``timeshare-ftf``
(finish-time fairness with elapsed time: the LPs of the secant search, ``dinkelbach_steps``)."""

from __future__ import annotations

from typing import Any

from schedopt.bench.suite import Recipe, Suite, seeded

P = "timeshare"
#: The cold-solve policies: max-min fairness, finish-time fairness, makespan.
COLD_POLICIES = ("max_min_fairness_perf", "finish_time_fairness", "min_makespan")


def round_of(
    jobs: int,
    seed: int = 0,
    policy: str = "max_min_fairness_perf",
    efficiency: bool = True,
    pairs: bool = False,
) -> Any:
    """``generate_custom(jobs, seed, policy, pairs)`` with level 2 (``efficiency``) on or off."""
    from schedopt.problems.timeshare import Policy, generate_custom

    inst = generate_custom(jobs, seed=seed, policy=Policy(policy), pairs=pairs)
    return inst.model_copy(update={"efficiency": efficiency})


def ftf_round(jobs: int, seed: int = 3) -> Any:
    """A finish-time-fairness round with elapsed time (jobs part-way done: time since start,
    isolated time), 36 GPUs of each of V100, P100 and K80 (issue #19's measurement)."""
    import numpy as np

    from schedopt.problems.timeshare import TimeshareInstance

    rng = np.random.default_rng(seed)
    docs = [
        {
            "id": f"j{i}",
            "throughput": {
                "v100": float(rng.uniform(2, 10)),
                "p100": float(rng.uniform(1, 5)),
                "k80": float(rng.uniform(0.3, 2)),
            },
            "scale_factor": int(rng.choice([1, 1, 2, 4])),
            "remaining_steps": float(rng.uniform(1e3, 1e6)),
            "time_since_start_s": float(rng.uniform(0, 2e4)),
            "isolated_time_s": float(rng.uniform(0, 1e4)),
        }
        for i in range(jobs)
    ]
    return TimeshareInstance.model_validate(
        {
            "policy": "finish_time_fairness",
            "workers": {"v100": 36, "p100": 36, "k80": 36},
            "jobs": docs,
        }
    )


_HERE = "schedopt.bench.suites.timeshare"

SUITES = (
    Suite(
        "timeshare-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1, 2)),
        ),
        methods=("milp:highs", "auto"),
    ),
    Suite("timeshare-medium", P, seeded(P, "256j", "generate", {"size": "medium"}, (0, 1))),
    Suite("timeshare-paper", P, seeded(P, "2048j", "generate", {"size": "large"}, (0,))),
    Suite(
        "timeshare-trace",
        P,
        tuple(
            Recipe(
                f"gavel-{jobs}j-s0",
                P,
                "schedopt.bench.traces:timeshare_gavel",
                {"jobs": jobs, "gpus_per_type": per_type, "seed": 0},
                data="gavel/simulation_throughputs.json",
            )
            for jobs, per_type in ((64, 24), (256, 96))
        ),
        methods=("milp:highs", "auto"),
        description="Gavel's measured throughputs and scale factors (needs the data folder)",
    ),
    Suite(
        "timeshare-cold",
        P,
        tuple(
            Recipe(
                f"{jobs}j-{policy}-L{2 if efficiency else 1}-s0",
                P,
                f"{_HERE}:round_of",
                {"jobs": jobs, "seed": 0, "policy": policy, "efficiency": efficiency},
            )
            for jobs in (256, 1024, 2048)
            for policy in COLD_POLICIES
            for efficiency in (False, True)
        ),
        methods=("milp:highs",),
        time_limit_s=60.0,
        description="cold solves by size and policy, level 1 alone (as Gavel) and with level 2",
        columns=("build_s", "solve_s"),
    ),
    Suite(
        "timeshare-pairs",
        P,
        tuple(
            Recipe(
                f"{jobs}j-pairs-s0",
                P,
                f"{_HERE}:round_of",
                {"jobs": jobs, "seed": 0, "efficiency": False, "pairs": True},
            )
            for jobs in (256, 1024)
        ),
        methods=("milp:highs",),
        time_limit_s=120.0,
        description="max-min fairness with every equal-scale pair co-locatable (space sharing)",
        columns=("solve_s", "pair_columns", "pair_columns_added", "pricing_rounds"),
    ),
    Suite(
        "timeshare-ftf",
        P,
        tuple(
            Recipe(f"ftf-{jobs}j-s3", P, f"{_HERE}:ftf_round", {"jobs": jobs, "seed": 3})
            for jobs in (32, 256, 1024)
        ),
        methods=("milp:highs",),
        time_limit_s=120.0,
        description="finish-time fairness with elapsed time: LPs of the secant search",
        columns=("dinkelbach_steps", "solve_s"),
    ),
)

"""Time-sharing (Gavel) suites: small (tiny and small sizes, pairs), medium (256 jobs) and
paper (2,048 jobs, the scale of Gavel's simulations)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "timeshare"

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
)

"""Fair-share suites: the paper-scale row of issue #17, beside the monolithic model."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite


def _recipe(gpus: int, tenants: int, jobs: int, seed: int) -> Recipe:
    return Recipe(
        f"{gpus}gpu-{jobs}j-s{seed}",
        "fairshare",
        "generate_custom",
        {"gpus": gpus, "tenants": tenants, "jobs": jobs, "seed": seed},
    )


SUITES = (
    Suite(
        "fairshare-scale",
        "fairshare",
        (
            _recipe(4096, 100, 5000, 0),
            _recipe(16384, 200, 20000, 0),  # every level <= 1% in 10 s, >= 20x the monolithic
        ),
        methods=("auto", "decomp", "decomp:pop", "milp:highs"),
        time_limit_s=10.0,
        description="issue #17's fair-share row: decomposition and auto against the MILP",
    ),
)

"""Admission suites: the paper-scale rows of issue #17, beside the monolithic model."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite


def _recipe(hosts: int, jobs: int, seed: int) -> Recipe:
    return Recipe(
        f"{hosts * 8}gpu-{jobs}j-s{seed}",
        "admission",
        "generate_custom",
        {"hosts": hosts, "jobs": jobs, "slots": 12, "seed": seed},
    )


SUITES = (
    Suite(
        "admission-scale",
        "admission",
        (
            _recipe(128, 1000, 0),  # 1,024 GPUs x 1,000 jobs: <= 1% with a bound, busy or not
            _recipe(32, 800, 0),  # contested, about 3 jobs per GPU: <= 2%
            _recipe(32, 800, 1),
            _recipe(128, 3200, 0),  # 1,024 GPUs x 3,200 jobs: <= 2%
        ),
        methods=("auto", "decomp", "decomp:pop", "cpsat"),
        time_limit_s=10.0,
        description="issue #17's admission rows: decomposition and auto against CP-SAT alone",
    ),
)

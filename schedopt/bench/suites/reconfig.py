"""Reconfiguration suites (#17): the paper-scale rows, for the monolithic MILP beside the
fixed-time decomposition (``decomp:rate``) and ``auto``."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite


def _row(name: str, hosts: int, batch: int) -> Recipe:
    return Recipe(
        name,
        "reconfig",
        "generate_custom",
        {
            "hosts": hosts,
            "gpus_per_host": 8,
            "model": "llama2-70b",
            "global_batch": batch,
            "fail_stop": 16,
            "fail_slow": 16,
            "seed": 0,
        },
    )


SUITES: tuple[Suite, ...] = (
    Suite(
        "reconfig-scale",
        "reconfig",
        (_row("256gpu-f16-s16-s0", 32, 512), _row("1024gpu-f16-s16-s0", 128, 1024)),
        methods=("milp:highs", "decomp:rate", "auto"),
        time_limit_s=10.0,
        description="Llama-2 70B on 256 and 1,024 H100s, 16 fail-stop + 16 fail-slow GPUs "
        "(#17): the monolithic MILP beside the fixed-time decomposition",
    ),
)

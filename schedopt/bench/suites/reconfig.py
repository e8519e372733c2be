"""Reconfiguration suites: small (tiny and small sizes), medium (Llama-2-70B on 256 GPUs, 4 + 4
faults), paper (issue #17's rows: 256 and 1,024 GPUs with 16 fail-stop + 16 fail-slow),
scaling (every method from 256 to 16,384 GPUs, 1 to 16 + 16 faults) and trace (InfiniteHBD
fault windows)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "reconfig"


#: Every method (benchmarks/reconfig.py's scale part): heuristics, both exact back-ends, auto.
EVERY_METHOD = (
    "heuristic:megatron",
    "heuristic:oobleck",
    "heuristic:keep_shrink",
    "milp:highs",
    "cpsat",
    "auto",
)


def _mixes(
    gpus: int, model: str, batch: int, mixes: tuple[tuple[int, int], ...]
) -> tuple[Recipe, ...]:
    """``<gpus>gpu-<stop>+<slow>-s0``: ``gpus`` GPUs on 8-GPU hosts, seed 0."""
    return tuple(
        Recipe(
            f"{gpus}gpu-{stop}+{slow}-s0",
            P,
            "generate_custom",
            {
                "hosts": gpus // 8,
                "gpus_per_host": 8,
                "model": model,
                "global_batch": batch,
                "fail_stop": stop,
                "fail_slow": slow,
                "seed": 0,
            },
        )
        for stop, slow in mixes
    )


SUITES = (
    Suite(
        "reconfig-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1, 2)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1)),
        ),
        methods=("cpsat", "milp:highs", "auto"),
    ),
    Suite("reconfig-medium", P, seeded(P, "256gpu-4+4", "generate", {"size": "medium"}, (0,))),
    Suite(
        "reconfig-paper",
        P,
        (
            *_mixes(256, "llama2-70b", 512, ((16, 16),)),
            *_mixes(1024, "llama2-70b", 1024, ((16, 16),)),
        ),
        # the monolithic model beside the fixed-time decomposition and its widening to the
        # physical plan space (#17; RESULTS.md)
        methods=("milp:highs", "decomp:rate", "decomp:physical", "auto"),
    ),
    Suite(
        "reconfig-trace",
        P,
        tuple(
            Recipe(
                f"infinitehbd-day{start}+{days}-{8 * hosts}gpu",
                P,
                "schedopt.bench.traces:infinitehbd_window",
                {"start_day": start, "days": days, "hosts": hosts},
                data="infinitehbd-faults/fault_trace.json",
            )
            for start, days, hosts in ((0, 30, 64), (150, 30, 64), (0, 90, 128))
        ),
        methods=("heuristic:oobleck", "milp:highs", "decomp:rate", "auto"),
        description="Llama-2 70B with the faults of InfiniteHBD trace windows open at once "
        "(needs the data folder)",
    ),
    Suite(
        "reconfig-scaling",
        P,
        (
            *_mixes(256, "llama2-70b", 512, ((1, 0), (4, 4), (16, 16))),
            *_mixes(1024, "llama2-70b", 1024, ((1, 0), (4, 4), (16, 16))),
        ),
        methods=EVERY_METHOD,
        description="every method, Llama-2 70B on 256 and 1,024 GPUs, 1 to 16 + 16 faults "
        "(RESULTS.md's table by scale, 10 s)",
    ),
    Suite(
        "reconfig-scaling-60s",
        P,
        (
            *_mixes(4096, "gpt3-175b", 2048, ((1, 0), (16, 16))),
            *_mixes(16384, "gpt3-175b", 8192, ((1, 0), (16, 16))),
        ),
        methods=EVERY_METHOD,
        time_limit_s=60.0,
        description="every method, GPT-3 175B on 4,096 and 16,384 GPUs (60 s)",
    ),
)

"""Deadline admission suites: small (the golden sizes), medium (64 and 256 GPUs, as in
``benchmarks/admission.py``) and paper (issue #17's rows: 1,024 GPUs × 1,000 jobs, contested
256 GPUs × 800 jobs, 1,024 GPUs × 3,200 jobs)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "admission"
METHODS = ("heuristic:edf", "heuristic:slack", "cpsat", "milp:highs", "auto")


def _shapes(shapes: tuple[tuple[int, int], ...]) -> tuple[Recipe, ...]:
    """``(hosts of 8 GPUs, jobs)`` shapes with 12 slots, instance seeds 0 and 1."""
    return tuple(
        r
        for hosts, jobs in shapes
        for r in seeded(
            P,
            f"{8 * hosts}gpu-{jobs}j",
            "generate_custom",
            {"hosts": hosts, "jobs": jobs, "slots": 12},
            (0, 1),
        )
    )


#: benchmarks/admission.py's shapes: about one job per GPU, and about three (contested).
SCALING = _shapes(((8, 50), (32, 250), (128, 1000)))
CONTESTED = _shapes(((8, 200), (32, 800), (128, 3200)))
EVERY_METHOD = ("heuristic:edf", "heuristic:slack", "cpsat", "milp:highs", "milp:cbc", "auto")

SUITES = (
    Suite(
        "admission-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1, 2)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1, 2, 3)),
            *seeded(
                P, "32gpu-20j", "generate_custom", {"hosts": 4, "jobs": 20, "slots": 8}, (0, 2)
            ),
        ),
        methods=METHODS,
        time_limit_s=10.0,
        description="the golden instances' sizes: 4-32 GPUs, 5-20 jobs",
    ),
    Suite(
        "admission-medium",
        P,
        (
            *seeded(
                P, "64gpu-50j", "generate_custom", {"hosts": 8, "jobs": 50, "slots": 12}, (0, 1)
            ),
            *seeded(
                P, "64gpu-200j", "generate_custom", {"hosts": 8, "jobs": 200, "slots": 12}, (0, 1)
            ),
            *seeded(
                P, "256gpu-250j", "generate_custom", {"hosts": 32, "jobs": 250, "slots": 12}, (0,)
            ),
        ),
        methods=METHODS,
        time_limit_s=10.0,
        description="64 and 256 GPUs, one to three jobs per GPU (benchmarks/admission.py)",
    ),
    Suite(
        "admission-scaling",
        P,
        SCALING,
        methods=EVERY_METHOD,
        time_limit_s=10.0,
        description="every method on 64, 256 and 1,024 GPUs (RESULTS.md's first table)",
    ),
    Suite(
        "admission-contested",
        P,
        CONTESTED,
        methods=EVERY_METHOD,
        time_limit_s=10.0,
        description="every method, about 3 jobs per GPU on 64, 256 and 1,024 GPUs",
    ),
    Suite(
        "admission-paper",
        P,
        (
            *seeded(
                P,
                "1024gpu-1000j",
                "generate_custom",
                {"hosts": 128, "jobs": 1000, "slots": 12},
                (0,),
            ),
            *seeded(
                P, "256gpu-800j", "generate_custom", {"hosts": 32, "jobs": 800, "slots": 12}, (0, 1)
            ),
            *seeded(
                P,
                "1024gpu-3200j",
                "generate_custom",
                {"hosts": 128, "jobs": 3200, "slots": 12},
                (0,),
            ),
        ),
        # auto (which routes these sizes to decomp), both decompositions, CP-SAT alone
        methods=("auto", "decomp", "decomp:pop", "cpsat"),
        time_limit_s=10.0,
        description="issue #17's admission rows at the papers' scale",
    ),
    Suite(
        "admission-trace",
        P,
        tuple(
            Recipe(
                f"{name}-{start}+{jobs}j-{8 * hosts}gpu",
                P,
                "schedopt.bench.traces:admission_window",
                {"trace": trace, "start": start, "jobs": jobs, "hosts": hosts},
                data=data,
            )
            for name, trace, data, start in (
                ("philly-mix2", "philly-chronus", "philly-chronus/trace_job_Philly_MIX2.csv", 5000),
                ("elasticflow-c01", "elasticflow", "elasticflow-itp/cluster01.csv", 0),
            )
            for jobs, hosts in ((100, 8), (300, 32))
        ),
        methods=("heuristic:edf", "heuristic:slack", "cpsat", "auto"),
        description="windows of the Philly/Chronus MIX2 and ElasticFlow ITP traces as one "
        "round each (needs the data folder)",
    ),
    Suite(
        "admission-tune",
        P,
        seeded(
            P,
            "64gpu-200j",
            "generate_custom",
            {"hosts": 8, "jobs": 200, "slots": 12},
            tuple(range(100, 106)),
        ),
        methods=("heuristic:edf", "heuristic:slack"),
        description="the heuristics' training instances: contested 64 GPUs x 200 jobs, seeds "
        "100-105 (schedopt tune admission --suite admission-tune)",
    ),
    Suite(
        "admission-tune-held-out",
        P,
        seeded(
            P,
            "64gpu-200j",
            "generate_custom",
            {"hosts": 8, "jobs": 200, "slots": 12},
            tuple(range(10)),
        ),
        methods=("heuristic:edf", "heuristic:slack"),
        description="the tuned heuristics' held-out instances: seeds 0-9 of the same shape",
    ),
)

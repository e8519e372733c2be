"""Fair-share suites: small (tiny and small sizes), medium (64 and 1,024 GPUs, and 64 GPUs with
Gavel's measured throughputs from the data folder) and paper
(4,096 GPUs × 5,000 jobs, and issue #17's 16,384 GPUs × 200 tenants × 20,000 jobs)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "fairshare"
METHODS = ("heuristic:astraea", "heuristic:gavel-round", "cpsat", "milp:highs", "auto")
#: 64 GPUs (V100, P100, K80) whose jobs take Gavel's measured throughputs.
GAVEL = Recipe(
    "64gpu-10t-100j-s0-gavel",
    P,
    "schedopt.bench.traces:gavel_throughputs",
    {"gpus": 64, "tenants": 10, "jobs": 100, "seed": 0},
    data="gavel/simulation_throughputs.json",
)

#: benchmarks/fairshare.py's shapes (GPUs, tenants, jobs): issue 3's range, 64 to 4,096 GPUs.
SHAPES = ((64, 10, 100), (256, 20, 300), (1024, 50, 1000), (4096, 100, 5000))

SUITES = (
    Suite(
        "fairshare-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1, 2)),
        ),
        methods=METHODS,
        description="8-16 GPUs, 2-3 tenants, 4-12 jobs",
    ),
    Suite(
        "fairshare-medium",
        P,
        (
            *seeded(P, "64gpu-10t-100j", "generate", {"size": "medium"}, (0, 1)),
            *seeded(P, "1024gpu-50t-1000j", "generate", {"size": "large"}, (0,)),
            GAVEL,
        ),
        methods=METHODS,
    ),
    Suite(
        "fairshare-paper",
        P,
        (
            *seeded(
                P,
                "4096gpu-100t-5000j",
                "generate_custom",
                {"gpus": 4096, "tenants": 100, "jobs": 5000},
                (0,),
            ),
            *seeded(
                P,
                "16384gpu-200t-20000j",
                "generate_custom",
                {"gpus": 16384, "tenants": 200, "jobs": 20000},
                (0,),
            ),
        ),
        # auto (which routes these sizes to decomp), both decompositions, the MILP alone
        methods=("auto", "decomp", "decomp:pop", "milp:highs"),
        description="issue #17's fair-share row and the 4,096-GPU shape of RESULTS.md",
    ),
    Suite(
        "fairshare-trace",
        P,
        (
            *(
                Recipe(
                    f"openb-{nodes}nodes-{tenants}t-{jobs}j-s0",
                    P,
                    "schedopt.bench.traces:fairshare_openb",
                    {"nodes": nodes, "tenants": tenants, "jobs": jobs, "seed": 0},
                    data="alibaba-openb/openb_node_list_gpu_node.csv",
                )
                for nodes, tenants, jobs in ((64, 10, 100), (256, 50, 1000))
            ),
            GAVEL,
        ),
        methods=METHODS,
        description="Alibaba openb's real fleet (344 and 1,345 GPUs of 6 types) and Gavel's "
        "measured throughputs (needs the data folder)",
    ),
    Suite(
        "fairshare-scaling",
        P,
        tuple(
            r
            for gpus, tenants, jobs in SHAPES
            for r in seeded(
                P,
                f"{gpus}gpu-{tenants}t-{jobs}j",
                "generate_custom",
                {"gpus": gpus, "tenants": tenants, "jobs": jobs},
                (0,),
            )
        ),
        methods=(*METHODS[:4], "milp:cbc", "auto"),
        description="every method on 64 to 4,096 GPUs (RESULTS.md's fair-share table)",
    ),
)

"""MoE expert placement suites: small (Mixtral-shaped, 4-16 GPUs), medium (OLMoE 16 layers on
16 GPUs, and OLMoE's measured routing counts from the data folder), paper (issue #17's OLMoE
64 experts × 32 layers × 64 GPUs and DeepSeek-V3 on 256 GPUs, with the decomposition beside the
whole model) and scale (16 to 256 GPUs: how gap and time grow)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "moe_placement"
#: auto, the decomposition by layer it runs at these sizes, and the whole model (#17).
COMPARED = ("auto", "decomp:layer", "milp:highs")

SUITES = (
    Suite(
        "moe_placement-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1, 2)),
        ),
        methods=("heuristic:eplb", "cpsat", "milp:highs", "auto"),
    ),
    Suite(
        "moe_placement-medium",
        P,
        (
            *seeded(P, "olmoe-16l-16gpu", "generate", {"size": "medium"}, (0,)),
            Recipe(
                "olmoe-routing-8gpu",
                P,
                "schedopt.bench.traces:olmoe_routing",
                {"gpus": 8},
                data="olmoe-routing/expert_counts.csv",
                data_sha256="",
            ),
        ),
    ),
    Suite(
        "moe_placement-paper",
        P,
        (
            *seeded(P, "olmoe-32l-64gpu", "generate", {"size": "large"}, (0,)),
            Recipe(
                "deepseek-v3-256gpu", P, "generate_custom", {"shape": "deepseek-v3", "hosts": 32}
            ),
        ),
        methods=COMPARED,
        description="issue #17's two MoE rows: gap <= 2% (OLMoE) and <= 3% (DeepSeek-V3) in 10 s",
    ),
    Suite(
        "moe_placement-scale",
        P,
        (
            *seeded(P, "olmoe-16l-16gpu", "generate", {"size": "medium"}, (0,)),
            *seeded(P, "olmoe-32l-64gpu", "generate", {"size": "large"}, (0,)),
            *(
                Recipe(
                    f"deepseek-v3-{8 * hosts}gpu",
                    P,
                    "generate_custom",
                    {"shape": "deepseek-v3", "hosts": hosts},
                )
                for hosts in (8, 16, 32)
            ),
        ),
        methods=COMPARED[:2],
        description="16 to 256 GPUs: how the gap and the wall time grow with size",
    ),
    Suite(
        "moe_placement-trace",
        P,
        tuple(
            Recipe(
                f"olmoe-routing-{gpus}gpu",
                P,
                "schedopt.bench.traces:olmoe_routing",
                {"gpus": gpus},
                data="olmoe-routing/expert_counts.csv",
            )
            for gpus in (8, 32)
        ),
        methods=("heuristic:eplb", "milp:highs", "auto"),
        description="OLMoE-1B-7B's measured routing counts (needs the data folder)",
    ),
)

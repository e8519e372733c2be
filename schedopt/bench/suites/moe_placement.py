"""MoE expert placement suites: small (Mixtral-shaped, 4-16 GPUs), medium (OLMoE 16 layers on
16 GPUs, and OLMoE's measured routing counts from the data folder), paper (issue #17's OLMoE
64 experts × 32 layers × 64 GPUs and DeepSeek-V3 on 256 GPUs, with the decomposition beside the
whole model), scale (16 to 256 GPUs: how gap and time grow), scaling (every method, 8 to 256
GPUs) and trace (OLMoE's routing counts)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "moe_placement"
#: auto, the decomposition by layer it runs at these sizes, and the whole model (#17).
COMPARED = ("auto", "decomp:layer", "milp:highs")

#: benchmarks/moe_placement.py's shapes: (shape, layers, experts, hosts of 8 GPUs).
SHAPES = (
    ("mixtral-8x7b", 1, 8, 1),  # 8 GPUs, one Mixtral layer (exact models prove it)
    ("mixtral-8x7b", 32, 8, 1),  # 8 GPUs, Mixtral-8x7B
    ("olmoe-1b-7b", 16, 64, 2),  # 16 GPUs, OLMoE-1B-7B
    ("olmoe-1b-7b", 32, 64, 8),  # 64 GPUs, 64 experts x 32 layers (issue 4's target)
    ("deepseek-v3", 58, 256, 32),  # 256 GPUs, DeepSeek-V3 (58 MoE layers x 256 experts)
)

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
    Suite(
        "moe_placement-scaling",
        P,
        tuple(
            r
            for shape, layers, experts, hosts in SHAPES
            for r in seeded(
                P,
                f"{shape}-{layers}x{experts}-{8 * hosts}gpu",
                "generate_custom",
                {"shape": shape, "layers": layers, "experts": experts, "hosts": hosts},
                (0, 1),
            )
        ),
        methods=("heuristic:eplb", "heuristic:local-search", "milp:highs", "cpsat", "auto"),
        description="every method on Mixtral, OLMoE and DeepSeek-V3 shapes, 8 to 256 GPUs "
        "(RESULTS.md's MoE table)",
    ),
)

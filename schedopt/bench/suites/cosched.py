"""RL co-scheduling suites: small (tiny and small sizes), medium (64 GPUs × 8 jobs), paper
(issue #17's 656 GPUs × 40 jobs, RollMux's 328 H20 + 328 H800, and 4,096 GPUs × 200 jobs at
60 s), ``cosched-sizes-60s`` (``auto`` at 60 s on a quarter, half and three quarters of the
4,096-GPU shape, and on it), and the tables of benchmarks/RESULTS.md:
``cosched-scaling(-60s)`` (RollMux's two baselines, packing and ``auto``; a row's metrics
hold the cost efficiency against both baselines on the same jobs and the SLO attainment on
held-out rollout samples) and ``cosched-chance`` (planning at p90 against the scenario model
C13)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "cosched"
#: Issue #17: the packing plan (``auto``'s answer before colgen), colgen alone, and ``auto``.
PAPER_METHODS = ("heuristic:packing", "colgen", "auto")
#: RollMux's two baselines, the packing heuristic and ``auto``.
SCALING_METHODS = ("heuristic:disaggregated", "heuristic:colocated", "heuristic:packing", "auto")
#: The scenario model's (ε, S): each timetable holds in 7 of 8 sampled scenarios (C13).
CHANCE = (0.125, 8)
#: What RESULTS.md's co-scheduling tables show besides L1, bound and gap.
COLUMNS = (
    "cost_efficiency_vs_disaggregated",
    "cost_efficiency_vs_colocated",
    "slo_attainment_holdout",
    "groups",
    "build_s",
    "solve_s",
)


def _shape(
    name: str,
    h20: int,
    h800: int,
    cpu: int,
    jobs: int,
    models: tuple[int, ...],
    chance: tuple[float, int] | None = None,
) -> Recipe:
    args = {"h20_hosts": h20, "h800_hosts": h800, "cpu_hosts": cpu, "jobs": jobs, "models": models}
    if chance is not None:
        args["chance"] = chance
    return Recipe(name, P, "generate_custom", {**args, "seed": 0})


#: RollPacker's job shapes (GPU counts / 4) on 64 and 656 GPUs (RollMux's testbed), 4,096 GPUs.
SMALL = _shape("64gpu-8j-s0", 4, 4, 8, 8, (0,))
TESTBED = _shape("656gpu-40j-s0", 41, 41, 40, 40, (0, 1))
LARGE = _shape("4096gpu-200j-s0", 256, 256, 200, 200, (0, 1))
#: Issue #17's "the largest size that fits": the 4,096-GPU shape at a quarter, half and three
#: quarters (jobs, hosts and CPU hosts in proportion), then the row itself.
SIZES = (
    _shape("1024gpu-50j-s0", 64, 64, 50, 50, (0, 1)),
    _shape("2048gpu-100j-s0", 128, 128, 100, 100, (0, 1)),
    _shape("3072gpu-150j-s0", 192, 192, 150, 150, (0, 1)),
    LARGE,
)


SUITES = (
    Suite(
        "cosched-small",
        P,
        (
            *seeded(P, "tiny", "generate", {"size": "tiny"}, (0, 1)),
            *seeded(P, "small", "generate", {"size": "small"}, (0, 1)),
        ),
        methods=("heuristic:packing", "cpsat", "auto"),
    ),
    Suite(
        "cosched-medium",
        P,
        (
            *seeded(P, "medium", "generate", {"size": "medium"}, (0,)),
            SMALL,
        ),
    ),
    Suite(
        "cosched-paper",
        P,
        (TESTBED,),
        methods=PAPER_METHODS,
        description="issue #17's 656-GPU row (10 s)",
        columns=COLUMNS,
    ),
    Suite(
        "cosched-paper-60s",
        P,
        (LARGE,),
        time_limit_s=60.0,
        methods=PAPER_METHODS,
        description="issue #17's 4,096-GPU row (60 s)",
        columns=COLUMNS,
    ),
    Suite(
        "cosched-sizes-60s",
        P,
        SIZES,
        time_limit_s=60.0,
        methods=("auto",),
        description="auto at 60 s from 1,024 to 4,096 GPUs: where the 5% target stops holding",
        columns=COLUMNS,
    ),
    Suite(
        "cosched-scaling",
        P,
        (SMALL, TESTBED),
        methods=SCALING_METHODS,
        description="RollMux's baselines, packing and auto on 64 and 656 GPUs (10 s)",
        columns=COLUMNS,
    ),
    Suite(
        "cosched-scaling-60s",
        P,
        (LARGE,),
        time_limit_s=60.0,
        methods=SCALING_METHODS,
        description="RollMux's baselines, packing and auto on 4,096 GPUs (60 s)",
        columns=COLUMNS,
    ),
    Suite(
        "cosched-chance",
        P,
        (
            SMALL,
            _shape("64gpu-8j-chance-s0", 4, 4, 8, 8, (0,), CHANCE),
            TESTBED,
            _shape("656gpu-40j-chance-s0", 41, 41, 40, 40, (0, 1), CHANCE),
        ),
        methods=("heuristic:packing", "auto"),
        description="planning at p90 against the scenario model (7 of 8 scenarios, C13)",
        columns=COLUMNS,
    ),
)

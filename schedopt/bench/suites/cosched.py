"""RL co-scheduling suites: small (tiny and small sizes), medium (64 GPUs × 8 jobs, as in
``benchmarks/cosched.py``) and paper (issue #17's 656 GPUs × 40 jobs, RollMux's 328 H20 + 328
H800, and 4,096 GPUs × 200 jobs at 60 s)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "cosched"
#: Issue #17: the packing plan (``auto``'s answer before colgen), colgen alone, and ``auto``.
PAPER_METHODS = ("heuristic:packing", "colgen", "auto")


def _shape(name: str, h20: int, h800: int, cpu: int, jobs: int, models: tuple[int, ...]) -> Recipe:
    args = {"h20_hosts": h20, "h800_hosts": h800, "cpu_hosts": cpu, "jobs": jobs, "models": models}
    return Recipe(name, P, "generate_custom", {**args, "seed": 0})


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
            _shape("64gpu-8j-s0", 4, 4, 8, 8, (0,)),
        ),
    ),
    Suite(
        "cosched-paper",
        P,
        (_shape("656gpu-40j-s0", 41, 41, 40, 40, (0, 1)),),
        methods=PAPER_METHODS,
        description="issue #17's 656-GPU row (10 s)",
    ),
    Suite(
        "cosched-paper-60s",
        P,
        (_shape("4096gpu-200j-s0", 256, 256, 200, 200, (0, 1)),),
        time_limit_s=60.0,
        methods=PAPER_METHODS,
        description="issue #17's 4,096-GPU row (60 s)",
    ),
)

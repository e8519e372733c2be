"""Reconfiguration suites: small (tiny and small sizes), medium (Llama-2-70B on 256 GPUs, 4 + 4
faults) and paper (issue #17's rows: 256 and 1,024 GPUs with 16 fail-stop + 16 fail-slow)."""

from __future__ import annotations

from schedopt.bench.suite import Recipe, Suite, seeded

P = "reconfig"


def _faults(name: str, hosts: int, batch: int) -> Recipe:
    args = {"hosts": hosts, "gpus_per_host": 8, "model": "llama2-70b", "global_batch": batch}
    return Recipe(name, P, "generate_custom", {**args, "fail_stop": 16, "fail_slow": 16, "seed": 0})


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
        (_faults("256gpu-16+16-s0", 32, 512), _faults("1024gpu-16+16-s0", 128, 1024)),
        # the monolithic model beside the fixed-time decomposition (#17; benchmarks/
        # reconfig_scale.py, RESULTS.md)
        methods=("milp:highs", "decomp:rate", "auto"),
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
)

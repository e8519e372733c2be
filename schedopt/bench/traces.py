"""Instance builders that read a slice of a public trace (``Recipe.generator`` =
``"schedopt.bench.traces:<function>"``, called with ``path=`` the trace file). Each reads only
what its recipe names; the data stays in the data folder, never in the repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedopt.io.traces import load_olmoe_counts
from schedopt.problems.moe_placement import from_counts
from schedopt.topology import Cluster


def olmoe_routing(
    path: Path, *, gpus: int = 8, model: str = "olmoe", variant: str = "expert_counts"
) -> Any:
    """OLMoE's measured routing counts (every layer, all text domains summed) placed on
    ``gpus`` GPUs of one DGX-like host per 8: an MoE placement instance with real skew."""
    counts = load_olmoe_counts(path).select(model=model, variant=variant).matrix()
    cluster = Cluster.dgx(nodes=max(1, gpus // 8), gpus_per_node=min(8, gpus))
    return from_counts(
        counts, shape="olmoe-1b-7b", cluster=cluster, name=f"{model}-routing-{gpus}gpu"
    )


__all__ = ["olmoe_routing"]

"""Instance builders that read a slice of a public trace (``Recipe.generator`` =
``"schedopt.bench.traces:<function>"``, called with ``path=`` the trace file). Each reads only
what its recipe names; the data stays in the data folder, never in the repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from schedopt.io.traces import load_gavel_throughputs, load_olmoe_counts
from schedopt.problems.fairshare import FairshareInstance
from schedopt.problems.fairshare import generate_custom as fairshare_custom
from schedopt.problems.moe_placement import from_counts
from schedopt.topology import Cluster, GpuTypeInfo

#: Defaults for the Gavel GPU types missing from schedopt.topology.GPU_TYPES (speed vs H100).
GAVEL_TYPES = {
    "K80": GpuTypeInfo(memory_gib=12.0, nvlink_gbps=None, speed=0.05),
    "P100": GpuTypeInfo(memory_gib=16.0, nvlink_gbps=None, speed=0.15),
}


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


def gavel_throughputs(
    path: Path, *, gpus: int, tenants: int, jobs: int, seed: int = 0
) -> FairshareInstance:
    """A generated fair-share round with Gavel's measured throughputs (OSDI'20 artifact,
    ``simulation_throughputs.json``) on a V100/P100/K80 cluster: each job takes the
    throughputs of a job type drawn at random (scale factor at most 8)."""
    inst = fairshare_custom(gpus=gpus, tenants=tenants, jobs=jobs, seed=seed, running_fraction=0)
    types = [t for t in load_gavel_throughputs(path) if t.scale_factor <= 8]
    hosts = max(3, gpus // 8)
    pools = [("V100", hosts // 4, 8), ("P100", hosts - 2 * (hosts // 4), 8), ("K80", hosts // 4, 8)]
    cluster = Cluster.heterogeneous(pools=pools, gpu_types=GAVEL_TYPES)
    rng = np.random.default_rng(seed)
    doc = inst.model_dump(mode="json")
    doc["cluster"] = cluster.to_dict()
    for job in doc["jobs"]:
        t = types[int(rng.integers(len(types)))]
        job["throughput"] = {
            g.upper(): {t.scale_factor: r} for g, r in t.throughput.items() if r > 0
        }
        job["previous"] = None
    return FairshareInstance.model_validate(doc)


__all__ = ["GAVEL_TYPES", "gavel_throughputs", "olmoe_routing"]

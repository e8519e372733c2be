"""Instance builders that read a slice of a public trace (``Recipe.generator`` =
``"schedopt.bench.traces:<function>"``, called with ``path=`` the trace file). Each reads only
what its recipe names; the data stays in the data folder, never in the repository.

- :func:`admission_window`: a window of consecutive jobs of the Philly/Chronus or ElasticFlow
  traces, as one admission round (every job waiting at 0, all its work left);
- :func:`fairshare_openb`: a fair-share round on the first nodes of Alibaba's openb fleet;
- :func:`gavel_throughputs`, :func:`timeshare_gavel`: fair-share and time-share rounds whose
  jobs take Gavel's measured throughputs;
- :func:`olmoe_routing`: MoE placement with OLMoE's measured routing counts;
- :func:`infinitehbd_window`: reconfiguration with every fault of a window of days of the
  InfiniteHBD trace open at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from schedopt.io.traces import (
    GavelJobType,
    load_elasticflow,
    load_gavel_throughputs,
    load_infinitehbd_faults,
    load_olmoe_counts,
    load_philly_chronus,
)
from schedopt.problems.admission import AdmissionInstance
from schedopt.problems.admission.driver import DriverConfig, batch_instance
from schedopt.problems.fairshare import FairshareInstance
from schedopt.problems.fairshare import generate_custom as fairshare_custom
from schedopt.problems.moe_placement import from_counts
from schedopt.problems.reconfig.policy import window_instance
from schedopt.problems.timeshare import TimeshareInstance
from schedopt.problems.timeshare import generate_custom as timeshare_custom
from schedopt.topology import ALIBABA_GPU_TYPES, ALIBABA_UNKNOWN_TYPE, Cluster, GpuTypeInfo

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


#: The job traces :func:`admission_window` reads, by format (ElasticFlow's deadlines: its
#: documented slack rule, seed 0, as in the replay benchmark and policy tuning).
JOB_TRACES = {
    "philly-chronus": load_philly_chronus,
    "elasticflow": lambda path: load_elasticflow(path, seed=0),
}


def admission_window(
    path: Path,
    *,
    trace: str,
    start: int,
    jobs: int,
    hosts: int,
    slot_s: float = 300.0,
    slots: int = 12,
) -> AdmissionInstance:
    """Jobs ``start .. start + jobs - 1`` of a job trace (by submission time) on ``hosts``
    8-GPU hosts, as one admission round of ``slots`` slots of ``slot_s``: every job waiting at
    0 with all its work and its own deadlines (``driver.batch_instance``)."""
    load = JOB_TRACES[trace](path)
    ordered = sorted(load.jobs, key=lambda j: (j.submit_s, j.id))[start : start + jobs]
    if len(ordered) < jobs:
        raise ValueError(f"{path.name} has {len(load.jobs)} jobs; the window needs {start + jobs}")
    config = DriverConfig(slot_s=slot_s, horizon_slots=slots)
    inst = batch_instance(Cluster.dgx(nodes=hosts, gpus_per_node=8), ordered, config)
    return inst.model_copy(update={"name": f"{path.stem}[{start}:{start + jobs}]-{8 * hosts}gpu"})


def fairshare_openb(
    path: Path, *, nodes: int, tenants: int, jobs: int, seed: int = 0
) -> FairshareInstance:
    """A generated fair-share round on the first ``nodes`` nodes of Alibaba's openb node list
    (P100, T4, V100 and the anonymised G2/G3 GPUs): each job's throughputs are the
    generator's first GPU type's, scaled by each openb type's speed
    (``schedopt.topology.ALIBABA_GPU_TYPES``); no job is running."""
    cluster = Cluster.from_alibaba_nodes(path, nodes)
    speed = {g: ALIBABA_GPU_TYPES.get(g, ALIBABA_UNKNOWN_TYPE).speed for g in cluster.gpu_types()}

    def table(job: dict[str, Any], _: np.random.Generator) -> dict[str, dict[int, float]]:
        first = next(iter(job["throughput"].values()))
        return {g: {int(n): r * s for n, r in first.items()} for g, s in speed.items()}

    return _refleeted(
        fairshare_custom(
            gpus=cluster.num_gpus, tenants=tenants, jobs=jobs, seed=seed, running_fraction=0
        ),
        cluster,
        table,
        seed,
    )


def _gavel_types(path: Path, most_gpus: int) -> list[GavelJobType]:
    """Gavel's job types of at most ``most_gpus`` GPUs that run on some GPU type."""
    return [
        t
        for t in load_gavel_throughputs(path)
        if t.scale_factor <= most_gpus and any(r > 0 for r in t.throughput.values())
    ]


def _refleeted(
    inst: FairshareInstance,
    cluster: Cluster,
    table: Any,
    seed: int,
) -> FairshareInstance:
    """``inst`` moved onto ``cluster``, each job's throughput ``table(job, rng)``, none
    running."""
    rng = np.random.default_rng(seed)
    doc = inst.model_dump(mode="json")
    doc["cluster"] = cluster.to_dict()
    for job in doc["jobs"]:
        job["throughput"] = table(job, rng)
        job["previous"] = None
    return FairshareInstance.model_validate(doc)


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

    def table(_: dict[str, Any], rng: np.random.Generator) -> dict[str, dict[int, float]]:
        t = types[int(rng.integers(len(types)))]
        return {g.upper(): {t.scale_factor: r} for g, r in t.throughput.items() if r > 0}

    return _refleeted(inst, cluster, table, seed)


def timeshare_gavel(path: Path, *, jobs: int, gpus_per_type: int, seed: int = 0) -> Any:
    """A generated time-share round (max-min fairness) on ``gpus_per_type`` K80, P100 and V100
    GPUs whose jobs take Gavel's measured throughputs and scale factors: each job a Gavel job
    type drawn at random (no co-located pairs)."""
    inst = timeshare_custom(jobs, seed=seed, gpus_per_type=gpus_per_type)
    types = _gavel_types(path, gpus_per_type)
    rng = np.random.default_rng(seed)
    doc = inst.model_dump(mode="json")
    doc["name"] = f"timeshare-gavel-{jobs}j-s{seed}"
    for job in doc["jobs"]:
        t = types[int(rng.integers(len(types)))]
        job["throughput"] = {g.lower(): float(r) for g, r in t.throughput.items()}
        job["scale_factor"] = t.scale_factor
    return TimeshareInstance.model_validate(doc)


def infinitehbd_window(path: Path, *, start_day: float, days: float, hosts: int) -> Any:
    """Llama-2 70B on ``hosts`` DGX hosts with every fault of the InfiniteHBD trace that starts
    in ``[start_day, start_day + days)`` open at once (``reconfig.policy.window_instance``)."""
    faults = load_infinitehbd_faults(path)
    return window_instance(faults, start_day=start_day, days=days, hosts=hosts)


__all__ = [
    "GAVEL_TYPES",
    "JOB_TRACES",
    "admission_window",
    "fairshare_openb",
    "gavel_throughputs",
    "infinitehbd_window",
    "olmoe_routing",
    "timeshare_gavel",
]

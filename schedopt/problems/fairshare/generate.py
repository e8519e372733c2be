"""Seeded random fair-share rounds on heterogeneous clusters.

Clusters mix H100, A100 and V100 pools (about 1:2:1 by hosts, via ``Cluster.heterogeneous``).
Tenant weights are skewed (log-normal, like the Astraea production shares); jobs pick a tenant
in proportion to the square root of its weight, so some tenants are under-demanded. Throughputs
are Gavel-like: a per-job rate on V100, speed-ups of 1.3–2.5× on A100 and a further 1.2–2× on
H100, sub-linear in the GPU count (exponent 0.7–0.95), and some jobs cannot use V100s (memory).
Gang sizes follow the Philly mix (mostly 1 GPU, a tail of 8; a third of the jobs elastic
between n/2 and n). Tenants carry accounts from ``history_rounds`` earlier rounds with LTGF
between 0.4 and 1.6, and about half the jobs ran in the previous round (a valid placement).
With ``fairness_unit`` 'job' every job also gets a weight (1, 2 or 4) and a deserved account that
puts its LTGF between 0.4 and 1.6 (drawn after everything else: the tenant-mode rounds of a
seed are the same either way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.topology import Cluster

from .instance import FairnessUnit, FairshareInstance


@dataclass(frozen=True)
class Size:
    gpus: int
    tenants: int
    jobs: int
    gpus_per_host: int = 8


SIZES = {
    "tiny": Size(gpus=8, tenants=2, jobs=4, gpus_per_host=4),
    "small": Size(gpus=16, tenants=3, jobs=12, gpus_per_host=4),
    "medium": Size(gpus=64, tenants=10, jobs=100),
    "large": Size(gpus=1024, tenants=50, jobs=1000),
}

SIZE_MIX = ((1, 0.55), (2, 0.15), (4, 0.15), (8, 0.15))
#: Job weights drawn in per-job mode.
JOB_WEIGHTS = (1.0, 2.0, 4.0)


def generate(size: str = "small", seed: int = 0) -> FairshareInstance:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {sorted(SIZES)}")
    s = SIZES[size]
    return generate_custom(
        gpus=s.gpus,
        tenants=s.tenants,
        jobs=s.jobs,
        gpus_per_host=s.gpus_per_host,
        seed=seed,
        name=f"fairshare-{size}-s{seed}",
    )


def _pools(hosts: int, per_host: int) -> list[tuple[str, int, int]]:
    if hosts < 3:
        return [(t, 1, per_host) for t in ("H100", "A100")[:hosts]]
    h100 = max(1, hosts // 4)
    v100 = max(1, hosts // 4)
    return [
        ("H100", h100, per_host),
        ("A100", hosts - h100 - v100, per_host),
        ("V100", v100, per_host),
    ]


def generate_custom(
    *,
    gpus: int,
    tenants: int,
    jobs: int,
    seed: int = 0,
    gpus_per_host: int = 8,
    round_s: float = 300.0,
    running_fraction: float = 0.5,
    history_rounds: int = 12,
    allow_multi_host: bool = True,
    guarantees_hard: bool = False,
    max_preemptions: int | None = None,
    fairness_unit: FairnessUnit = FairnessUnit.TENANT,
    name: str | None = None,
) -> FairshareInstance:
    rng = np.random.default_rng(seed)
    hosts = max(1, gpus // gpus_per_host)
    cluster = Cluster.heterogeneous(pools=_pools(hosts, gpus_per_host))
    types = cluster.gpu_types()
    weights = np.round(np.clip(rng.lognormal(0.0, 1.0, size=tenants), 0.05, None), 3)
    pick = np.sqrt(weights) / np.sqrt(weights).sum()
    sizes = np.array([n for n, _ in SIZE_MIX if n <= gpus_per_host])
    probs = np.array([p for n, p in SIZE_MIX if n <= gpus_per_host])
    probs = probs / probs.sum()
    free = {h: len(cluster.gpus_on(h)) for h in cluster.hosts()}
    host_type = {h: cluster.host_type(h) for h in cluster.hosts()}
    total = cluster.num_gpus

    raw_jobs = []
    used_by_job: list[float] = []
    demand = np.zeros(tenants)
    for i in range(jobs):
        u = int(rng.choice(tenants, p=pick))
        n0 = int(rng.choice(sizes, p=probs))
        counts = sorted({n0, max(1, n0 // 2)}) if rng.random() < 1 / 3 else [n0]
        base = float(rng.uniform(1.0, 20.0))
        alpha = float(rng.uniform(0.7, 0.95))
        a100 = float(rng.uniform(1.3, 2.5))
        speed = {"V100": 1.0, "A100": a100, "H100": a100 * float(rng.uniform(1.2, 2.0))}
        usable = [g for g in types if not (g == "V100" and rng.random() < 0.2)] or list(types)
        table = {g: {n: round(base * speed[g] * n**alpha, 4) for n in counts} for g in usable}
        job: dict[str, Any] = {
            "id": f"j{i}",
            "tenant": f"t{u}",
            "throughput": table,
            "remaining_iterations": round(base * n0 * round_s * float(rng.uniform(0.5, 20.0)), 1),
            "restart_cost_s": float(round(rng.uniform(10.0, 120.0))),
        }
        attained = float(round(rng.uniform(0, history_rounds) * round_s * n0))
        job["used_gpu_s"] = attained
        demand[u] += max(counts)
        if rng.random() < running_fraction:
            g = str(rng.choice(usable))
            n = int(rng.choice(counts))
            placed = _place(free, host_type, g, n, allow_multi_host)
            if placed:
                job["previous"] = {"gpu_type": g, "hosts": placed}
        raw_jobs.append(job)
        used_by_job.append(attained)

    raw_tenants = []
    for u in range(tenants):
        quota = int(total * weights[u] / weights.sum())
        deserved = history_rounds * round_s * min(demand[u], quota) * float(rng.uniform(0.5, 1.5))
        raw_tenants.append(
            {
                "id": f"t{u}",
                "weight": float(weights[u]),
                "deserved_gpu_s": float(round(deserved)),
                "used_gpu_s": float(round(deserved * float(rng.uniform(0.4, 1.6)))),
            }
        )
    if fairness_unit is FairnessUnit.JOB:
        for job, used in zip(raw_jobs, used_by_job, strict=True):
            job["weight"] = float(rng.choice(JOB_WEIGHTS))
            job["deserved_gpu_s"] = float(round(used / float(rng.uniform(0.4, 1.6))))
    doc = {
        "name": name or f"fairshare-{total}gpu-{tenants}t-{jobs}j-s{seed}",
        "cluster": cluster.to_dict(),
        "round_s": round_s,
        "allow_multi_host": allow_multi_host,
        "guarantees_hard": guarantees_hard,
        "max_preemptions": max_preemptions,
        "fairness_unit": fairness_unit.value,
        "tenants": raw_tenants,
        "jobs": raw_jobs,
    }
    return FairshareInstance.model_validate(doc)


def _place(free: dict[str, int], host_type: dict[str, str | None], g: str, n: int, multi: bool):
    fitting = [h for h in free if host_type[h] == g and free[h] >= n]
    if fitting:
        h = min(fitting, key=lambda h: (free[h], h))
        free[h] -= n
        return {h: n}
    if not multi:
        return None
    pool = sorted((h for h in free if host_type[h] == g and free[h] > 0), key=lambda h: -free[h])
    if sum(free[h] for h in pool) < n:
        return None
    taken, left = {}, n
    for h in pool:
        use = min(free[h], left)
        free[h] -= use
        taken[h] = use
        left -= use
        if not left:
            break
    return taken

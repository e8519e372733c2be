"""Seeded random admission instances with Philly-like job shapes.

Job sizes follow the Philly mix (most jobs 1 GPU, a tail of 8–32), throughput scales
sub-linearly with GPUs (exponent 0.9), deadlines are the fastest run time times a slack factor,
soft jobs get the Chronus tiers 10/8/5/2. Jobs marked as admitted earlier are chosen so that
their guarantees can be kept (checked with the EDF heuristic while generating).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from schedopt.topology import Cluster

from .assemble import RawPlan
from .data import build_data
from .heuristics import EdfParams, Ledger, _place_slo, edf_order
from .instance import AdmissionInstance

SOFT_VALUES = (10.0, 8.0, 5.0, 2.0)
SOFT_STRETCH = (1.0, 1.3, 1.7, 2.3)


@dataclass(frozen=True)
class Size:
    hosts: int
    gpus_per_host: int
    jobs: int
    slots: int
    slot_s: float = 300.0


SIZES = {
    "tiny": Size(hosts=1, gpus_per_host=4, jobs=5, slots=4),
    "small": Size(hosts=2, gpus_per_host=8, jobs=10, slots=6),
    "medium": Size(hosts=8, gpus_per_host=8, jobs=60, slots=12),
    "large": Size(hosts=128, gpus_per_host=8, jobs=1000, slots=12),
}


def generate(size: str = "small", seed: int = 0) -> AdmissionInstance:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {sorted(SIZES)}")
    s = SIZES[size]
    return generate_custom(
        hosts=s.hosts,
        gpus_per_host=s.gpus_per_host,
        jobs=s.jobs,
        slots=s.slots,
        slot_s=s.slot_s,
        seed=seed,
        name=f"admission-{size}-s{seed}",
    )


def generate_custom(
    *,
    hosts: int,
    gpus_per_host: int = 8,
    jobs: int,
    slots: int,
    slot_s: float = 300.0,
    seed: int = 0,
    unavailable_fraction: float = 0.1,
    load: float = 1.5,
    name: str | None = None,
) -> AdmissionInstance:
    """``load`` ≈ demanded GPU-slots of all jobs over the cluster's GPU-slots in the horizon."""
    rng = np.random.default_rng(seed)
    leaf = min(hosts, 16)
    cluster = Cluster.dgx(nodes=hosts, gpus_per_node=gpus_per_host, leaf_size=leaf)
    gpu_ids = list(cluster.gpus())
    n_out = round(unavailable_fraction * len(gpu_ids))
    unavailable = sorted(rng.choice(gpu_ids, size=n_out, replace=False).tolist()) if n_out else []
    free = len(gpu_ids) - n_out
    max_n = max(1, min(32, free))
    sizes = np.array([1, 2, 4, 8, 16, 32])
    probs = np.array([0.62, 0.1, 0.12, 0.1, 0.04, 0.02])
    keep = sizes <= max_n
    sizes, probs = sizes[keep], probs[keep] / probs[keep].sum()
    horizon = slots * slot_s
    gpu_slots_per_job = load * free * slots / max(jobs, 1)

    raw_jobs = []
    for i in range(jobs):
        n0 = int(rng.choice(sizes, p=probs))
        r1 = float(rng.uniform(1.0, 10.0))
        counts = sorted({c for c in (n0 // 2, n0, n0 * 2) if 1 <= c <= max_n})
        table = {c: round(r1 * c**0.9, 3) for c in counts}
        run_slots = float(np.clip(rng.exponential(gpu_slots_per_job / n0), 0.3, 0.7 * slots))
        work = max(1, int(table[n0] * slot_s * run_slots))
        kind = rng.choice(["strict_slo", "soft_slo", "best_effort"], p=[0.45, 0.2, 0.35])
        arrival = (
            0.0 if rng.random() < 0.85 else float(rng.integers(1, max(2, slots // 2)) * slot_s)
        )
        fastest = work / (max(table.values()) * slot_s)  # slots at the fastest count
        job: dict = {
            "id": f"j{i}",
            "kind": str(kind),
            "tenant": f"vc{int(rng.integers(0, 5))}",
            "arrival_s": arrival,
            "remaining_iterations": work,
            "throughput": table,
        }
        if kind != "best_effort":
            base = arrival + slot_s * math.ceil(fastest * float(rng.uniform(1.1, 3.0)) + 1)
            stretch = SOFT_STRETCH if kind == "soft_slo" else (1.0,)
            tiers, last = [], arrival
            for k, f in enumerate(stretch):
                d = min(horizon, arrival + (base - arrival) * f)
                d = math.floor(d / slot_s) * slot_s
                if d > last:
                    tiers.append(
                        {"deadline_s": d, "value": SOFT_VALUES[k] if kind == "soft_slo" else 10.0}
                    )
                    last = d
            if not tiers:
                tiers = [{"deadline_s": horizon, "value": 10.0}]
            job["deadlines"] = tiers
        else:
            job["weight"] = float(rng.choice([1.0, 1.0, 2.0]))
        raw_jobs.append(job)

    doc = {
        "name": name or f"admission-{hosts}x{gpus_per_host}-{jobs}j-s{seed}",
        "cluster": cluster.to_dict(),
        "unavailable_gpus": unavailable,
        "slots": slots,
        "slot_s": slot_s,
        "jobs": raw_jobs,
    }
    draft = AdmissionInstance.model_validate(doc)
    # Jobs admitted in earlier rounds: about a third of the SLO jobs present now, kept only if
    # EDF can honour all of them together (so the instance is feasible by construction).
    candidates = [
        j["id"]
        for j in raw_jobs
        if j["kind"] != "best_effort" and j["arrival_s"] == 0 and rng.random() < 0.35
    ]
    kept = _keepable(draft, candidates)
    for j in raw_jobs:
        if j["id"] in kept:
            j["admitted"] = True
            j["current_gpus"] = min(j["throughput"])
    return AdmissionInstance.model_validate(doc)


def _keepable(inst: AdmissionInstance, candidates: list[str]) -> set[str]:
    data = build_data(inst, check_size=False)
    ledger = Ledger(data)
    kept = set()
    chosen = [data.jobs[inst.job_index[c]] for c in candidates]
    for job in sorted(chosen, key=edf_order(EdfParams())):
        if _place_slo(data, ledger, job, RawPlan([None] * data.T)):
            kept.add(job.id)
    return kept

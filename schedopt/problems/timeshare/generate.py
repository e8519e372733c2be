"""Seeded random time-share rounds shaped like Gavel's simulations.

Three GPU types in equal numbers (Gavel's 36 K80 / 36 P100 / 36 V100 cluster, scaled to the
job count: about one GPU of each type per 2.5 jobs, as Gavel's 108 GPUs for ~270 jobs). Job
throughputs are Gavel-like: a base rate on K80, speed-ups of 1.2–3.5× on P100 and a further
1.1–2.2× on V100, and about one job in ten that cannot run on K80 (memory), as in Gavel's
measured table. Scale factors 1 (70%), 2, 4 or 8, capped at the GPUs of a type; priority
weights 1, some 2 or 4. With ``pairs``, every two jobs with equal scale factors may share
GPUs, each at 40–95% of its own throughput (Gavel's co-location measurements span about
that range). With ``job_types``, jobs are drawn from that many types, as Gavel draws from the
26 of its job table: jobs of a type share throughputs and scale factor, and space sharing is
a co-location table by type (``colocation``) instead of pairs one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.core.powers_of_two import largest_power_of_two_at_most

from .instance import Policy, TimeshareInstance

TYPES = ("k80", "p100", "v100")


@dataclass(frozen=True)
class Size:
    jobs: int
    pairs: bool = False


SIZES = {
    "tiny": Size(4),
    "small": Size(12, pairs=True),
    "medium": Size(256),
    "large": Size(2048),
}


def generate(size: str = "small", seed: int = 0) -> TimeshareInstance:
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {sorted(SIZES)}")
    s = SIZES[size]
    return generate_custom(s.jobs, seed=seed, pairs=s.pairs, name=f"timeshare-{size}-s{seed}")


def generate_custom(
    jobs: int,
    *,
    seed: int = 0,
    policy: Policy = Policy.MAX_MIN_FAIRNESS_PERF,
    pairs: bool = False,
    gpus_per_type: int | None = None,
    job_types: int | None = None,
    name: str | None = None,
) -> TimeshareInstance:
    rng = np.random.default_rng(seed)
    per_type = gpus_per_type if gpus_per_type is not None else max(1, round(jobs / 2.5))
    top = largest_power_of_two_at_most(per_type)
    kinds = [_kind(rng, top) for _ in range(job_types or 0)]
    doc_jobs = []
    for j in range(jobs):
        kind = int(rng.integers(len(kinds))) if kinds else None
        rates, scale = kinds[kind] if kind is not None else _kind(rng, top)
        job = {
            "id": f"j{j}",
            "throughput": dict(rates),
            "scale_factor": scale,
            "priority_weight": float(rng.choice([1.0, 2.0, 4.0], p=[0.8, 0.1, 0.1])),
        }
        if kind is not None:
            job["job_type"] = f"type{kind}"
        if policy.needs_remaining_steps:
            steps = float(rng.integers(1_000, 100_000))
            job["remaining_steps"] = steps
            if policy is Policy.FINISH_TIME_FAIRNESS:
                job["time_since_start_s"] = float(rng.integers(0, 3_600))
                job["isolated_time_s"] = float(rng.integers(0, 1_800))
        doc_jobs.append(job)
    doc_pairs = []
    colocation = []
    if pairs and policy.takes_pairs and kinds:
        present = {j["job_type"] for j in doc_jobs}
        for a in range(len(kinds)):
            for b in range(a, len(kinds)):
                if {f"type{a}", f"type{b}"} <= present and kinds[a][1] == kinds[b][1]:
                    table = _shared(rng, kinds[a][0], kinds[b][0], same=a == b)
                    if table:
                        colocation.append(
                            {"job_types": [f"type{a}", f"type{b}"], "throughput": table}
                        )
    elif pairs and policy.takes_pairs:
        for a in range(jobs):
            for b in range(a + 1, jobs):
                ja, jb = doc_jobs[a], doc_jobs[b]
                if ja["scale_factor"] != jb["scale_factor"]:
                    continue
                table = _shared(rng, ja["throughput"], jb["throughput"])  # type: ignore[arg-type]
                if table:
                    doc_pairs.append({"jobs": [ja["id"], jb["id"]], "throughput": table})
    return TimeshareInstance.model_validate(
        {
            "problem": "timeshare",
            "name": name or f"timeshare-{jobs}j-s{seed}",
            "policy": policy.value,
            "workers": {w: per_type for w in TYPES},
            "jobs": doc_jobs,
            "pairs": doc_pairs,
            "colocation": colocation,
        }
    )


def _kind(rng: np.random.Generator, top: int) -> tuple[dict[str, float], int]:
    """A job's throughputs and scale factor (a gang never larger than a type's GPUs, C4)."""
    k80 = float(rng.uniform(0.5, 5.0))
    p100 = k80 * float(rng.uniform(1.2, 3.5))
    v100 = p100 * float(rng.uniform(1.1, 2.2))
    rates = {"k80": 0.0 if rng.random() < 0.1 else round(k80, 4)}
    rates.update(p100=round(p100, 4), v100=round(v100, 4))
    return rates, min(int(rng.choice([1, 2, 4, 8], p=[0.7, 0.1, 0.1, 0.1])), top)


def _shared(
    rng: np.random.Generator, a: dict[str, float], b: dict[str, float], same: bool = False
) -> dict[str, list[float]]:
    """Two jobs' rates while sharing: 40–95% of each one's own (equal for one type)."""
    table = {}
    for w in TYPES:
        if a[w] and b[w]:
            fa, fb = rng.uniform(0.4, 0.95, size=2)
            table[w] = [round(a[w] * fa, 4), round(a[w] * fa if same else b[w] * fb, 4)]
    return table

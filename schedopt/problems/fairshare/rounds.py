"""Multi-round use: apply a round's allocation and advance the accounts.

``apply_round`` is what a scheduler calls between rounds: every tenant's deserved GPU-time grows
by ``round_s · min(demand, quota)`` and its used GPU-time by ``round_s · GPUs given``; every
running job does ``throughput · round_s`` iterations (finished jobs leave), its used GPU-time
grows by ``round_s · GPUs given`` and its allocation becomes its ``previous`` one. In per-job
mode (F1) every job's deserved GPU-time also grows by ``round_s · d_j``. ``run_rounds`` repeats
solve-and-apply and records the long-run shares ``U_v / D_v`` of the fairness units — with
``memory=False`` each round is decided as if no history existed (per-round max-min), while the
true accounts still advance, which shows what LTGF buys.

The accounts only accumulate; a scheduler with a finite sliding window subtracts from
``deserved_gpu_s`` and ``used_gpu_s`` what falls out of the window before the next round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .data import build_data
from .instance import FairnessUnit, FairshareInstance
from .solution import FairshareSolution


def apply_round(instance: FairshareInstance, solution: FairshareSolution) -> FairshareInstance:
    """The next round's instance after running ``solution`` for ``round_s`` seconds."""
    data = build_data(instance, check_size=False)
    L = instance.round_s
    by_job = {a.job_id: a for a in solution.allocations}
    gpus = {t.id: 0 for t in instance.tenants}
    per_job = instance.fairness_unit is FairnessUnit.JOB
    jobs: list[dict[str, Any]] = []
    for job, jd in zip(instance.jobs, data.jobs, strict=True):
        doc = job.model_dump(mode="json")
        if per_job:  # D_j grows by L·d_j (F2)
            doc["deserved_gpu_s"] = job.deserved_gpu_s + L * data.units[jd.unit].deserved
        a = by_job.get(job.id)
        if a is None or not a.hosts:
            doc["previous"] = None
            jobs.append(doc)
            continue
        gpus[job.tenant] += a.count
        rate = job.throughput[a.gpu_type or ""][a.count]
        left = job.remaining_iterations - rate * L
        if left <= 1e-9:
            continue  # finished during the round
        doc["remaining_iterations"] = left
        doc["used_gpu_s"] = job.used_gpu_s + L * a.count
        doc["previous"] = {"gpu_type": a.gpu_type, "hosts": dict(a.hosts)}
        jobs.append(doc)
    tenants = []
    for t, td in zip(instance.tenants, data.tenants, strict=True):
        doc = t.model_dump(mode="json")
        doc["deserved_gpu_s"] = t.deserved_gpu_s + L * td.deserved
        doc["used_gpu_s"] = t.used_gpu_s + L * gpus[t.id]
        tenants.append(doc)
    doc = instance.model_dump(mode="json")
    doc["tenants"] = tenants
    doc["jobs"] = jobs
    return FairshareInstance.model_validate(doc)


@dataclass(frozen=True)
class RoundRecord:
    round: int
    status: str
    shares: dict[str, float]  # long-run U_v / D_v after the round, units with D_v > 0

    @property
    def max_min_ratio(self) -> float:
        values = list(self.shares.values())
        if not values:
            return 1.0
        lo = min(values)
        return max(values) / lo if lo > 0 else math.inf


def long_run_shares(instance: FairshareInstance) -> dict[str, float]:
    """U_v / D_v of every fairness unit (F1) with D_v > 0: tenants, or the jobs still there."""
    units = instance.jobs if instance.fairness_unit is FairnessUnit.JOB else instance.tenants
    return {v.id: v.used_gpu_s / v.deserved_gpu_s for v in units if v.deserved_gpu_s > 0}


def without_memory(instance: FairshareInstance) -> FairshareInstance:
    """The same round with every fairness account at zero: per-round max-min, no long-term
    memory (in per-job mode the jobs' accounts, which are also their attained service)."""
    zero = {"deserved_gpu_s": 0.0, "used_gpu_s": 0.0}
    update: dict[str, Any] = {"tenants": tuple(t.model_copy(update=zero) for t in instance.tenants)}
    if instance.fairness_unit is FairnessUnit.JOB:
        update["jobs"] = tuple(j.model_copy(update=zero) for j in instance.jobs)
    return instance.model_copy(update=update)


def run_rounds(
    instance: FairshareInstance,
    rounds: int,
    *,
    method: str = "milp:highs",
    memory: bool = True,
    time_limit_s: float = 10.0,
) -> tuple[FairshareInstance, list[RoundRecord]]:
    """Solve and apply ``rounds`` rounds; returns the last instance and one record per round."""
    from schedopt.core.solve import solve

    records = []
    for k in range(rounds):
        decide = instance if memory else without_memory(instance)
        result = solve(decide, method, time_limit_s=time_limit_s)
        if result.solution is None:
            records.append(RoundRecord(k, result.status.value, long_run_shares(instance)))
            break
        instance = apply_round(instance, result.solution)
        records.append(RoundRecord(k, result.status.value, long_run_shares(instance)))
    return instance, records

"""Deadline-aware backfill of a start plan (formulations/admission.md, "LP rounding and
repair", step 2).

A rounded plan leaves the early slots full and the late ones with room. The backfill, with
every other job in place each time, (1) moves each admitted SLO job, latest deadline first,
as late as it fits before its tier's deadline, on its smallest share that fits (then the
options it used: the slots it held are free to it again, so it always fits, at worst where it
was), so the early slots keep what only early deadlines can use; (2) moves each admitted job
at a later tier to the earliest tier it now meets (most value per GPU-slot first); (3) offers
the rejected SLO jobs what is left, by value per GPU-slot (earliest tier first, the smallest
share that finishes, latest slots first). Every placement goes through C3's ledger, and no
admitted job loses its admission or moves to a later tier: L1 never falls, and every earlier
guarantee stays admitted.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedopt.core.stopping import Deadline

from .assemble import RawPlan
from .data import JobData, ModelData
from .heuristics import Ledger, _fill_backwards, _place_slo
from .tier_bound import gpu_slots_needed


def _take(ledger: Ledger, job: JobData, plan: RawPlan, sign: int = 1) -> None:
    for t, o in enumerate(plan.run):
        if o is not None:
            ledger.take(t, job.options[o], sign)


def _by_size(job: JobData) -> list[int]:
    return sorted(range(len(job.options)), key=lambda o: (job.options[o].n, -job.options[o].work))


def _replan(
    data: ModelData, ledger: Ledger, job: JobData, plan: RawPlan, tiers: Sequence[int]
) -> RawPlan:
    """``job`` re-placed at the first of ``tiers`` it meets (as late as it fits, smallest
    share first, then the options ``plan`` used), with every other job in ``ledger``; else
    ``plan``. ``ledger`` holds the result."""
    _take(ledger, job, plan, -1)
    options = list(dict.fromkeys([*_by_size(job), *(o for o in plan.run if o is not None)]))
    for k in tiers:
        for o in options:
            slots = _fill_backwards(data, ledger, job, o, job.tiers[k].slots_before)
            if slots is not None:
                new = RawPlan([None] * data.T, True, k)
                for t in slots:
                    new.run[t] = o
                _take(ledger, job, new)
                return new
    _take(ledger, job, plan)
    return plan


def value_per_gpu_slot(data: ModelData, job: JobData) -> float:
    """The job's first tier's value per GPU-slot of its least GPU-slots (0 if none)."""
    rho = gpu_slots_needed(data, job)
    return job.tiers[0].value / rho if rho else 0.0


def backfill(
    data: ModelData, raw: Sequence[RawPlan], stop: Deadline | None = None
) -> list[RawPlan]:
    """``raw``'s SLO plans after the three moves of the module docstring (until ``stop``:
    what is moved by then stands). Best-effort jobs get no GPUs."""
    slo = [j for j in data.jobs if j.is_slo]
    cur = [RawPlan(list(r.run), r.admitted, r.tier) if j.is_slo else RawPlan([None] * data.T)
           for j, r in zip(data.jobs, raw, strict=True)]  # fmt: skip
    ledger = Ledger(data)
    for job in slo:
        if cur[job.index].admitted:
            _take(ledger, job, cur[job.index])
    score = {j.index: value_per_gpu_slot(data, j) for j in slo}
    admitted = [j for j in slo if cur[j.index].admitted]
    late_first = sorted(
        admitted, key=lambda j: (-j.tiers[cur[j.index].tier or 0].slots_before, j.id)
    )
    for job in late_first:  # (1)
        if stop is not None and stop.expired():
            return cur
        cur[job.index] = _replan(data, ledger, job, cur[job.index], [cur[job.index].tier or 0])
    for job in sorted(admitted, key=lambda j: (-score[j.index], j.id)):  # (2)
        tier = cur[job.index].tier or 0
        if tier and not (stop is not None and stop.expired()):
            cur[job.index] = _replan(data, ledger, job, cur[job.index], range(tier))
    rejected = sorted(
        (j for j in slo if not cur[j.index].admitted), key=lambda j: (-score[j.index], j.id)
    )
    for job in rejected:  # (3)
        if stop is not None and stop.expired():
            return cur
        plan = RawPlan([None] * data.T)
        if _place_slo(data, ledger, job, plan):
            cur[job.index] = plan
    return cur


__all__ = ["backfill", "value_per_gpu_slot"]

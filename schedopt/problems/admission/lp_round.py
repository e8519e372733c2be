"""An LP-guided plan: the LP of the bound B1 (``bound.py``), rounded (formulations/admission.md,
"LP rounding").

The LP's admissions ``z_j`` order the SLO jobs (earlier guarantees first, then by ``z_j``
falling, ties by value per GPU-slot); each job in turn is placed in what the jobs before it
left, on the LP's own slots and options where they fit (largest ``x_jto`` first, at the LP's
tier), else by the greedy rule of the heuristics (the smallest share that finishes, latest
slots first). Best-effort jobs get what is left. Every placement goes through the capacity
ledger of C3, so the plan is feasible whenever it keeps the earlier guarantees; it is
returned only then (None otherwise).
"""

from __future__ import annotations

from schedopt.core.stopping import Deadline

from .assemble import RawPlan
from .bound import L1Bound
from .data import JobData, ModelData
from .heuristics import Ledger, _fill_best_effort, _place_slo
from .tier_bound import gpu_slots_needed


def _guided(
    data: ModelData, ledger: Ledger, job: JobData, lp: L1Bound, raw: RawPlan, guided: bool
) -> bool:
    """Place ``job`` on the LP's slots and options at the LP's most weighted tier, or else by
    the greedy rule (latest tier first for an earlier guarantee)."""
    tiers = [lp.tier.get((job.index, k), 0.0) for k in range(len(job.tiers))]
    if guided and tiers and max(tiers) > 1e-6:
        k = max(range(len(tiers)), key=lambda i: (tiers[i], -i))
        end = min(job.tiers[k].slots_before, data.T)
        pairs = sorted(
            (
                (lp.run.get((job.index, t, o), 0.0), t, o)
                for t in range(job.arrival, end)
                for o in range(len(job.options))
            ),
            key=lambda p: (-p[0], -p[1], job.options[p[2]].n),
        )
        chosen: dict[int, int] = {}
        done = 0
        for weight, t, o in pairs:
            if weight <= 1e-6:
                break
            opt = job.options[o]
            if t in chosen or opt.work <= 0 or not ledger.fits(t, opt):
                continue
            chosen[t] = o
            done += opt.work
            if done >= job.work:
                for s, c in chosen.items():
                    ledger.take(s, job.options[c])
                    raw.run[s] = c
                raw.admitted, raw.tier = True, k
                return True
    return _place_slo(data, ledger, job, raw, latest_tier_first=job.admitted_before)


def lp_round(
    data: ModelData,
    lp: L1Bound,
    stop: Deadline | None = None,
    *,
    guided: bool = True,
    prior: dict[int, float] | None = None,
    best_effort: bool = True,
) -> list[RawPlan] | None:
    """The rounded plan (module docstring), or None when an earlier guarantee is not kept.
    Past ``stop`` the SLO jobs not yet reached are rejected (unproven) and the best-effort
    fill ends. ``prior``: an admission score in [0, 1] for the jobs the LP has no value for
    (an LP solved in parts that did not all finish), e.g. another plan's admissions. Without
    ``best_effort`` the best-effort jobs get no GPUs (``decomp:lp``'s start: its repair
    re-plans them at the end)."""
    prior = prior or {}
    ledger = Ledger(data)
    raw = [RawPlan([None] * data.T) for _ in data.jobs]

    def key(job: JobData) -> tuple:
        rho = gpu_slots_needed(data, job) or float("inf")
        value = job.tiers[0].value / max(rho, 1e-9)
        z = lp.admit.get(job.index, prior.get(job.index, 0.0))
        return (not job.admitted_before, -round(z, 6), -value, job.id)

    for job in sorted((j for j in data.jobs if j.is_slo), key=key):
        if job.admitted_before:
            if not _guided(data, ledger, job, lp, raw[job.index], guided):
                return None
        elif stop is not None and stop.expired():
            raw[job.index].admitted = False
        else:
            _guided(data, ledger, job, lp, raw[job.index], guided)
    if best_effort:
        _fill_best_effort(data, ledger, raw, stop)
    return raw


__all__ = ["lp_round"]

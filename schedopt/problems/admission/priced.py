"""Greedy plans priced by the LP's capacity duals (formulations/admission.md, "LP rounding and
repair", step 2).

With the LP's multipliers ``λ_tgs ≥ 0`` of C3 (``L1Bound.prices``), every SLO job's best plan
alone and its gain ``best_j(λ)`` (value less the price of the GPU-slots it takes) are those of
B1L (``lagrange.Prices``). The jobs are taken earlier guarantees first, then by gain, or by
gain per GPU-slot; each on its priced plan where every slot of it still fits C3's ledger (at
the earliest tier whose deadline follows its last slot: all its work is done by then), else by
the greedy rule of the heuristics (smallest share that finishes, latest slots first). A job
whose best gain is rejecting it is left for the backfill. A plan that loses an earlier
guarantee is dropped. The same at every later ``λ`` of B1L's subgradient steps (the guide's,
evaluated already): a step that does not lower the bound can still price a better start
(1,024 GPUs × 3,200 jobs s0: +41; RESULTS.md).
"""

from __future__ import annotations

from schedopt.core.stopping import Deadline, DeadlineReached

from .assemble import RawPlan
from .bound import L1Bound
from .data import ModelData
from .heuristics import Ledger, _place_slo
from .lagrange import BestPlan, Prices
from .tier_bound import gpu_slots_needed

#: The placement checks its deadline every this many jobs: a check costs 0.6-0.9 µs at load
#: 5, a job's placement about 8 µs (3,200 jobs: 0.087 CPU s for the LP's and B1L's 4 plans;
#: checked at every job 0.093-0.097), so it stops at most about 0.1 ms late.
CHECK_JOBS = 8


def priced_plans(
    data: ModelData, lp: L1Bound, stop: Deadline | None = None, prices: Prices | None = None
) -> list[list[RawPlan]]:
    """The plans of the module docstring (by gain, by gain per GPU-slot) that keep every
    earlier guarantee, at the LP's prices and at every later ``λ`` of the guide's B1L;
    none without the LP's prices, none past ``stop``; ``stop`` is checked every CHECK_JOBS jobs
    placed, and a plan cut short stands only if it keeps every earlier guarantee (they are
    placed first; ``_placed``). ``prices``: the guide's B1L
    (``guide.Guide.prices``), whose first evaluation was at the LP's prices: its plans are
    taken as they are (0.13 CPU s fewer at 3,200 jobs), and so are its steps' plans."""
    if not lp.prices:
        return []
    prices = prices if prices is not None else Prices(data)
    lam = prices.multipliers(lp.prices)
    try:
        first = prices.best_plans(lam, stop)
    except DeadlineReached:
        return []
    if stop is not None and stop.expired():  # before the set-up over every job
        return []
    rho = {j.index: gpu_slots_needed(data, j) or float("inf") for j in prices.slo}
    # the LP's prices, then, while ``stop`` has not passed, those of B1L's later steps
    # (evaluated already: each costs its two greedy passes alone, 0.05 s at 3,200 jobs;
    # RESULTS.md)
    out = _placed(data, prices, first, rho, stop)
    for _, plans in prices.evaluated():
        if plans is first:
            continue
        if stop is not None and stop.expired():
            break
        out.extend(_placed(data, prices, plans, rho, stop))
    return out


def _placed(
    data: ModelData,
    prices: Prices,
    plans: list[BestPlan],
    rho: dict[int, float],
    stop: Deadline | None = None,
) -> list[list[RawPlan]]:
    """The two plans of the module docstring at one ``λ`` (``plans``: ``best_plans(λ)``).
    ``stop`` is checked before every CHECK_JOBS-th job: past it the jobs not placed yet are
    rejected and the plan stands if it keeps every earlier guarantee (they are placed first),
    else it is dropped, as one that loses a guarantee; the next order is not tried."""
    best = {job.index: plan for job, plan in zip(prices.slo, plans, strict=True)}
    orders = (
        lambda j: (not j.admitted_before, -best[j.index][0], j.id),
        lambda j: (not j.admitted_before, -best[j.index][0] / rho[j.index], j.id),
    )
    out = []
    cut = False
    for order in orders:
        if cut:
            break
        ledger = Ledger(data)
        raw = [RawPlan([None] * data.T) for _ in data.jobs]
        for k, job in enumerate(sorted(prices.slo, key=order)):
            plan = best[job.index][1]
            r = raw[job.index]
            if cut or (stop is not None and k % CHECK_JOBS == 0 and stop.expired()):
                r.admitted = False  # not placed in time: rejected, unproven
                cut = True
                continue
            if plan is not None and all(
                ledger.fits(t, job.options[o]) for o, slots in plan for t in slots
            ):
                last = max(t for _, slots in plan for t in slots)
                r.tier = min(k for k, tier in enumerate(job.tiers) if tier.slots_before > last)
                for o, slots in plan:
                    for t in slots:
                        ledger.take(t, job.options[o])
                        r.run[t] = o
                r.admitted = True
            elif plan is None and not job.admitted_before:
                r.admitted = False  # rejecting it is its best at these prices: the backfill's
            else:
                _place_slo(data, ledger, job, r, latest_tier_first=job.admitted_before)
        if all(raw[j.index].admitted for j in prices.slo if j.admitted_before):
            out.append(raw)
    return out


__all__ = ["priced_plans"]

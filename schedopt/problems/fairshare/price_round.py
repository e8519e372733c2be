"""A decomposition part's rounding on the whole round's GPU prices, for a part whose LP guide
has no L2 point (formulations/fairshare.md, "Decomposition", the priced rounding).

Beside other work a part's LP can be cut before its L2 stage ends; gavel-round then rounded
the L1 stage's point (fair, but indifferent to throughput) or water-filled alone, and the
joined plan lost 17-57% of L2 (16,384 GPUs × 20,000 jobs, #17). The whole round's bound B2
comes with a price ``μ_g`` per GPU of each type (``bound.gpu_prices``), computed before the
parts: at those prices each job's best option by reduced profit ``e_jo − μ_g n_o`` is B2's
Lagrangian choice, and a unit that needs more GPUs than its jobs' choices give for the share
``t̂`` (``m_v(t̂)``) gets its GPUs cheaper by ``ρ_v``, the least that makes them enough (B2L's
multiplier of that unit's fix row, found alone). A heuristic: nothing is claimed of it; the
plan is checked and bounded as every joined plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from .data import JobData, ModelData, Option
from .heuristics import AstraeaParams, water_fill
from .l1_fix import need_gpus
from .plan import Plan
from .units import UnitData

#: Bisection steps of a unit's ``ρ_v`` (between 0 and the highest price).
RHO_STEPS = 20


def _profit(option: Option, prices: Mapping[str, float], rho: float) -> float:
    """An option's reduced profit ``e_jo − (μ_g − ρ_v) n_o``."""
    return option.eff - (prices.get(option.gpu_type, 0.0) - rho) * option.n


def _ranked(job: JobData, prices: Mapping[str, float], rho: float) -> list[tuple[float, int]]:
    """(reduced profit, option) of every option, best first."""
    return sorted(((_profit(o, prices, rho), k) for k, o in enumerate(job.options)), reverse=True)


def _chosen_gpus(part: ModelData, unit: UnitData, prices: Mapping[str, float], rho: float) -> int:
    """The GPUs of ``unit``'s jobs on their best options at ``rho`` (none where no profit)."""
    gpus = 0
    for j in unit.jobs:
        # (the first best option, as _ranked's order has it: profit, then the higher index)
        best = max(
            ((_profit(o, prices, rho), k, o.n) for k, o in enumerate(part.jobs[j].options)),
            default=None,
        )
        if best is not None and best[0] > 0.0:
            gpus += best[2]
    return gpus


def unit_rho(part: ModelData, prices: Mapping[str, float], need: float, unit: UnitData) -> float:
    """The least ``ρ_v`` (to RHO_STEPS halvings) with which ``unit``'s jobs' best options
    have at least ``need`` GPUs; 0 if they have without, the highest price if never."""
    if need <= 0 or _chosen_gpus(part, unit, prices, 0.0) >= need:
        return 0.0
    lo, hi = 0.0, max(prices.values(), default=0.0)
    for _ in range(RHO_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _chosen_gpus(part, unit, prices, mid) >= need else (mid, hi)
    return hi


def _take(state: Plan, job: JobData, k: int) -> bool:
    """``job`` on option ``k``: kept where it ran, if ``k`` is its previous option and it can
    be; else placed afresh."""
    return (k == job.prev_option and job.keepable and state.keep(job)) or state.place(job, k)


def priced_round(part: ModelData, prices: Mapping[str, float], t_hat: float) -> Plan:
    """The part's plan: running jobs whose previous option is their best by reduced profit kept
    first; then every counted unit, worst share first, up to ``m_v(t̂)`` GPUs, its jobs by best
    reduced profit, each on its options in that order; then every unit, worst share first, its
    jobs with a positive reduced profit on their best option; then a plain water-fill of what
    is left (``heuristics.water_fill``; C2-C4 hold as the board holds them)."""
    need = need_gpus(part, t_hat)
    rho = {v.index: unit_rho(part, prices, float(need[v.index]), v) for v in part.units}
    ranked = {j.index: _ranked(j, prices, rho[j.unit]) for j in part.jobs}
    state = Plan(part)
    for job in part.jobs:
        best = ranked[job.index]
        if job.keepable and best and best[0][0] > 0.0 and best[0][1] == job.prev_option:
            state.keep(job)
    fill = AstraeaParams()

    def order(job: JobData) -> tuple:
        best = ranked[job.index]
        return (-(best[0][0] if best else 0.0), job.index)

    def give_any(state: Plan, job: JobData) -> bool:
        options = [k for _, k in ranked[job.index]]
        if not options:
            return False
        return _take(state, job, options[0]) or any(state.place(job, k) for k in options[1:])

    def give_best(state: Plan, job: JobData) -> bool:
        best = ranked[job.index]
        return bool(best) and best[0][0] > 0.0 and _take(state, job, best[0][1])

    def free(unit: UnitData) -> bool:
        # (every type's GPUs used: the jobs left would each fail to fit, 0.3 CPU s at 16,384
        # GPUs for nothing)
        return any(state.board.type_free.values())

    def short(unit: UnitData) -> bool:
        return state.unit_gpus[unit.index] < need[unit.index] and free(unit)

    water_fill(state, fill, wants=short, job_order=order, give=give_any)
    water_fill(state, fill, wants=free, job_order=order, give=give_best)
    water_fill(state, fill, wants=free)
    return state


__all__ = ["priced_round", "unit_rho"]

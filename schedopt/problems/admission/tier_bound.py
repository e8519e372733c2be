"""B0, a bound on L1 without the full model (formulations/admission.md, "A bound on L1 every
run (B0)").

A small LP over the tiers alone (one column per reachable tier, one row per job and per tier
deadline): every admitted job needs at least ρ_j GPU-slots, all before its tier's deadline, and
the cluster has K GPUs a slot. Its optimum bounds L1 from above whatever the solver manages in
the time (CP-SAT at 1,024 GPUs × 1,000 jobs on a busy machine ended L1 with no bound at all, #16).
When HiGHS does not solve that LP in the time given (0.14 s at 3,200 jobs, load 6), B0k, its
relaxation to the last deadline row, is a fractional knapsack solved by sorting, with no solver
and no time limit.
"""

from __future__ import annotations

import math
import time

import numpy as np

from schedopt.backends.first_import import HIGHS, solver_in_time
from schedopt.core.options import SolveOptions
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Expr, Level, Model, Sense, VarKind

from .cuts import least_weight
from .data import JobData, ModelData

#: Relative slack added to B0's LP optimum (HiGHS's optimality tolerance is 1e-7).
B0_SLACK = 1e-6


def gpu_slots_needed(data: ModelData, job: JobData) -> float | None:
    """ρ_j: the fewest GPU-slots that do job's work, W_j · min n_o/ω_jo over the options that
    can run at all (None: none can do any work)."""
    ratios = [o.n / o.work for o in job.options if o.work > 0 and data.fits_alone(o)]
    return job.work * min(ratios) if ratios else None


def reachable_tiers(data: ModelData, job: JobData) -> list[int]:
    """The tiers job can meet alone (the best alone tier and every later one)."""
    first = data.best_alone_tier(job)
    return [] if first is None else list(range(first, len(job.tiers)))


def tier_bound(data: ModelData, deadline: Deadline, seconds: float) -> float | None:
    """B0 in the instance's units, or None when its LP is not solved within ``seconds``
    (building it included: its LP gets what is left then)."""
    stop_at = time.perf_counter() + seconds
    capacity = sum(data.chunk_capacity[g, 1] for g in data.levels)  # K = Σ_g κ_g1
    m = Model("admission-b0", deadline)
    keys, values, ends, needs = [], [], [], []
    for job in data.jobs:
        if not job.is_slo:
            continue
        m.tick()
        rho = gpu_slots_needed(data, job)
        if rho is None:
            continue
        for k in reachable_tiers(data, job):
            keys.append((job.index, k))
            values.append(job.tiers[k].value)
            ends.append(min(job.tiers[k].slots_before, data.T))
            needs.append(rho)
    if not keys:
        return 0.0
    u = m.add_vars("u", keys, VarKind.CONTINUOUS, 0.0, 1.0, cpsat_scale=1)
    by_job: dict[int, list[int]] = {}
    for key in keys:
        by_job.setdefault(key[0], []).append(u[key])
    with m.rows("B0a") as one_tier:  # one tier per job (C4)
        for cols in by_job.values():
            one_tier.add(cols, [1.0] * len(cols), hi=1.0)
    with m.rows("B0b") as by_deadline:  # GPU-slots before each deadline (C3 level 1, C6)
        for e in sorted(set(ends)):
            cols = [u[key] for key, end in zip(keys, ends, strict=True) if end <= e]
            coefs = [rho for rho, end in zip(needs, ends, strict=True) if end <= e]
            by_deadline.add(cols, coefs, hi=float(capacity * e))
    m.add_level(Level("B0", Expr.of(u.cols, values), Sense.MAXIMIZE, 0.0))
    # HiGHS's first import within B0's own share, else no LP (B0k stands in)
    if not solver_in_time(HIGHS, Deadline.after(stop_at - time.perf_counter())):
        return None
    from schedopt.model.emit_highs import HighsSession  # HiGHS, imported on first use (start-up)

    session = HighsSession(m)
    try:
        session.set_level(m.levels[0])
        left = stop_at - time.perf_counter()
        if left <= 0.0:  # the build took its time: no LP (a starved machine)
            return None
        run = session.run(max(0.01, left), SolveOptions(time_limit_s=max(0.01, left)))
    finally:
        session.close()
    if run.status is not Status.OPTIMAL or run.objective is None:
        return None
    return run.objective + B0_SLACK * max(1.0, abs(run.objective)) + 1e-9 * len(keys)


def knapsack_bound(data: ModelData) -> float:
    """B0k (formulations/admission.md): B0 with only its last deadline row, a fractional
    knapsack of the SLO jobs (value: the best reachable tier's, weight ρ_j GPU-slots, capacity
    K times the last tier deadline), solved by Dantzig's greedy; at least B0."""
    capacity = sum(data.chunk_capacity[g, 1] for g in data.levels)
    items: list[tuple[float, float]] = []  # (value, GPU-slots)
    last = 0
    for job in data.jobs:
        if not job.is_slo:
            continue
        rho = gpu_slots_needed(data, job)
        reach = reachable_tiers(data, job) if rho is not None else []
        if rho is None or not reach:
            continue
        items.append((max(job.tiers[k].value for k in reach), rho))
        last = max(last, *(min(job.tiers[k].slots_before, data.T) for k in reach))
    room = float(capacity * last)
    total = 0.0
    for value, rho in sorted(items, key=lambda it: -it[0] / it[1] if it[1] > 0 else -math.inf):
        if value <= 0:
            continue
        take = 1.0 if rho <= room else room / rho
        total += take * value
        room -= take * rho
        if room <= 0:
            break
    return total + B0_SLACK * max(1.0, abs(total)) + 1e-9 * len(items)


#: Bisection steps of a line search in B0w (each halves its interval).
LINE_STEPS = 24
#: Passes of each of B0w's two coordinate searches over the deadlines (the last first).
PASSES = 2


def whole_slot_bound(data: ModelData, stop: Deadline | None = None) -> float:
    """B0w (formulations/admission.md): B0's Lagrangian with each tier's whole-slot GPU-slots
    ``need_jk`` (B1c's ``w = n_o``), ``Σ_e μ_e K ē_e + Σ_j max(0, max_k (v_jk − need_jk
    Σ_{e: ē_e ≥ ē_jk} μ_e))`` at the least of the μ ≥ 0 two short coordinate searches reach
    (bisection on a slope): no solver, a few numpy passes (0.01-0.04 CPU s at 800-3,200 jobs).
    Every μ ≥ 0 gives a bound, so a search may stop anywhere (``stop``: between lines)."""
    capacity = float(sum(data.chunk_capacity[g, 1] for g in data.levels))
    values, needs, ends, owner = [], [], [], []
    for job in data.jobs:
        if not job.is_slo:
            continue
        useful = [o for o in job.options if o.work > 0 and data.fits_alone(o)]
        work = tuple(o.work for o in useful)
        gpus = tuple(float(o.n) for o in useful)
        for k in reachable_tiers(data, job) if useful else []:
            end = min(job.tiers[k].slots_before, data.T)
            need = least_weight(job.work, work, gpus, end - job.arrival)
            if need is not None:
                values.append(job.tiers[k].value)
                needs.append(need)
                ends.append(end)
                owner.append(job.index)
    if not values:
        return 0.0
    v, w = np.array(values), np.array(needs)
    marks = sorted(set(ends))  # the deadlines ē_e, one multiplier μ_e each
    caps = capacity * np.array(marks, dtype=float)  # K·ē_e
    block = np.diff(np.r_[0.0, caps])  # K × the slots of block e, (ē_{e-1}, ē_e]
    at = np.searchsorted(marks, ends)  # a tier's price: need × Σ μ from its deadline on
    firsts = np.flatnonzero(np.r_[True, np.diff(owner) != 0])  # each job's first tier
    job_of = np.repeat(np.arange(len(firsts)), np.diff(np.r_[firsts, len(v)]))
    top_price = float((v / np.maximum(w, 1e-12)).max())  # every tier's gain ≤ 0 from here

    def evaluate(price: np.ndarray) -> tuple[float, np.ndarray]:
        """The bound at block prices ``price`` (p_e = Σ_{e' ≥ e} μ_e', non-increasing), and
        the tier each job takes in it (one per job, when its gain is positive)."""
        gain = v - w * price[at]
        best = np.maximum.reduceat(gain, firsts)  # each job's best tier (≤ 0: rejected)
        mu = price - np.r_[price[1:], 0.0]
        top = np.flatnonzero((gain == best[job_of]) & (best[job_of] > 0))
        taken = top[np.r_[True, np.diff(job_of[top]) != 0]] if len(top) else top
        return float(mu @ caps + np.maximum(best, 0.0).sum()), taken

    def moved(base: np.ndarray, e: int, x: float, one_block: bool) -> np.ndarray:
        """``base`` with block e's price at x (``one_block``) or μ_e at x (every block up to
        e moves by x − μ_e)."""
        out = base.copy()
        if one_block:
            out[e] = x
        else:
            out[: e + 1] += x - (base[e] - (base[e + 1] if e + 1 < len(marks) else 0.0))
        return out

    def slope(price: np.ndarray, e: int, one_block: bool) -> float:
        """The slope along the move: K·ē_e (K × block e's slots) less the needs of the tiers
        taken that are due by ē_e (at ē_e)."""
        taken = evaluate(price)[1]
        due = at[taken] == e if one_block else at[taken] <= e
        return float((block[e] if one_block else caps[e]) - w[taken[due]].sum())

    def search(price: np.ndarray, one_block: bool) -> np.ndarray:
        """Coordinate search: a multiplier μ_e (every block's price up to ē_e moves with it)
        or, ``one_block``, one block's price p_e between its neighbours'; each line by
        bisection on the slope. Either alone stalls at kinks (1,024 × 3,200: 20,330 and
        20,190, the LP's optimum 20,157)."""
        for _ in range(PASSES):
            for e in reversed(range(len(marks))):
                if stop is not None and stop.expired():
                    return price
                after = price[e + 1] if e + 1 < len(marks) else 0.0
                lo = after if one_block else 0.0  # one_block: p_e itself; else μ_e
                hi = (price[e - 1] if e else top_price) if one_block else top_price
                if slope(moved(price, e, lo, one_block), e, one_block) >= 0:
                    price = moved(price, e, lo, one_block)
                    continue
                for _ in range(LINE_STEPS):
                    mid = 0.5 * (lo + hi)
                    if slope(moved(price, e, mid, one_block), e, one_block) < 0:
                        lo = mid
                    else:
                        hi = mid
                price = moved(price, e, hi, one_block)
        return price

    first = search(np.zeros(len(marks)), one_block=False)
    then = search(first, one_block=True)
    total = min(evaluate(first)[0], evaluate(then)[0])
    return total + B0_SLACK * max(1.0, abs(total)) + 1e-9 * len(values)


def cheap_bound(data: ModelData, deadline: Deadline) -> tuple[float, str]:
    """The lesser of B0w and B0k with its label, without a solver (0.01-0.04 CPU s at
    800-3,200 jobs): a bound however busy the machine is. Past ``deadline`` B0k alone (a
    sort), B0w's needs and search not started."""
    b0k = knapsack_bound(data)
    if deadline.expired():
        return b0k, "B0k"
    b0w = whole_slot_bound(data, deadline)
    return (b0w, "B0w") if b0w < b0k else (b0k, "B0k")


def fallback_bound(data: ModelData, deadline: Deadline, seconds: float) -> tuple[float, str]:
    """The least of B0 (its LP solved within ``seconds``; 0.14 s at 3,200 jobs, load 6, #17
    it was not), B0w and B0k (:func:`cheap_bound`), with its label. Past ``deadline`` B0k at
    once: B0's model is not built (0.05 CPU s at 3,200 jobs, all of it past the deadline)."""
    cheap = cheap_bound(data, deadline)
    if deadline.expired():
        return cheap
    b0 = tier_bound(data, deadline, seconds)
    return cheap if b0 is None or cheap[0] < b0 else (b0, "B0")


__all__ = [
    "B0_SLACK",
    "cheap_bound",
    "fallback_bound",
    "gpu_slots_needed",
    "knapsack_bound",
    "reachable_tiers",
    "tier_bound",
    "whole_slot_bound",
]

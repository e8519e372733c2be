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

from schedopt.core.options import SolveOptions
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model import Expr, Level, Model, Sense, VarKind

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


def fallback_bound(data: ModelData, deadline: Deadline, seconds: float) -> tuple[float, str]:
    """B0 with its label, or B0k (no solver) when B0's LP is not solved within ``seconds``
    (0.14 s at 3,200 jobs, load 6, #17): a bound however busy the machine is. Past
    ``deadline`` B0k at once: B0's model is not built (0.05 CPU s at 3,200 jobs, all of it
    past the deadline)."""
    if deadline.expired():
        return knapsack_bound(data), "B0k"
    b0 = tier_bound(data, deadline, seconds)
    return (knapsack_bound(data), "B0k") if b0 is None else (b0, "B0")


__all__ = [
    "B0_SLACK",
    "fallback_bound",
    "gpu_slots_needed",
    "knapsack_bound",
    "reachable_tiers",
    "tier_bound",
]

"""B3U: B3L with each counted unit's fix row kept (formulations/fairshare.md, "B3U").

Only the L2 row (``λ``) and C2 (``μ_g``) are relaxed; what is left splits by unit, and each
counted unit's jobs must still give it ``m_v(t̂)`` GPUs: a covering knapsack over whole GPUs,
solved exactly by a recursion over ``0 … m_v`` GPUs. At the same ``(λ, μ)`` it is at least
B3L at any ``ρ`` (relaxing that row is what B3L does), and it reaches past the LP over B3L's
rows, which B3L cannot (4,096 GPUs × 5,000 jobs: 77,541 → 78,174, the integer minimum over
those rows 78,255).
"""

from __future__ import annotations

import numpy as np

from .l3_bound import Arrays

#: Seconds per job one evaluation takes at most (0.07 s at 20,000 jobs, load 4): ``decomp``
#: runs it only with this much time left before its finish.
UNIT_S_PER_JOB = 7.5e-6


def covering_min(costs: np.ndarray, gpus: np.ndarray, need: int) -> float:
    """``min Σ_j cost_j(y_j)`` over one choice per row (idle: 0 GPUs at 0, or an option with
    finite cost) with at least ``need`` GPUs in all; +inf if no choice reaches ``need``.
    ``costs``, ``gpus``: (jobs, options), whole GPUs."""
    best = np.full(need + 1, np.inf)
    best[0] = 0.0
    at_least = np.arange(need + 1)
    for cost, n in zip(costs, gpus, strict=True):
        nxt = best.copy()
        for c, k in zip(cost, n, strict=True):
            if np.isfinite(c):
                nxt = np.minimum(nxt, best[np.maximum(at_least - int(k), 0)] + c)
        best = nxt
    return float(best[need])


def unit_bound(
    a: Arrays, need: np.ndarray, l2_floor: float | None, lam: float, mu: np.ndarray
) -> float:
    """B3U at ``(λ, μ)`` (λ = 0 without ``l2_floor``): ``Σ_{J^P} c_j + λ λ₂ − Σ μ_g F_g``
    plus each counted unit's covering minimum and every other job's least term.
    ``need[v]``: ``m_v(t̂)`` (0 for units not counted)."""
    if not len(a.unit):
        return a.restart_constant  # (as B3L: no job to choose, every multiplier at 0)
    if l2_floor is None:
        lam, l2_floor = 0.0, 0.0
    total = a.restart_constant + lam * l2_floor - float(mu @ a.capacity)
    cost = a.base - lam * a.eff + mu[a.gtype] * a.n
    free = np.minimum(cost.min(axis=1), 0.0)  # each job's least term, alone
    counted = need[a.unit] > 0
    total += float(free[~counted].sum())
    rows = np.flatnonzero(counted)
    rows = rows[np.argsort(a.unit[rows], kind="stable")]
    if not len(rows):
        return total
    units = a.unit[rows]
    cuts = np.flatnonzero(np.diff(units)) + 1
    for group in np.split(rows, cuts):
        m = int(need[a.unit[group[0]]])
        total += covering_min(cost[group], a.n[group], m)
    return total if np.isfinite(total) else -np.inf  # (no allocation meets R1: none to bound)


__all__ = ["UNIT_S_PER_JOB", "covering_min", "unit_bound"]

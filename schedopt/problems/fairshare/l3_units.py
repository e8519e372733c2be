"""B3U: B3L with each counted unit's fix row kept (formulations/fairshare.md, "B3U").

Only the L2 row (``λ``) and C2 (``μ_g``) are relaxed; what is left splits by unit, and each
counted unit's jobs must still give it ``m_v(t̂)`` GPUs: a covering knapsack over whole GPUs,
solved exactly by a recursion over ``0 … m_v`` GPUs, for all counted units at once. At the
same ``(λ, μ)`` it is at least B3L at any ``ρ`` (relaxing that row is what B3L does), and it
reaches past the LP over B3L's rows, which B3L cannot (4,096 GPUs × 5,000 jobs: 77,541 →
78,174, the integer minimum over those rows 78,255). ``unit_search`` looks for better
``(λ, μ)`` along the ray of B3L's (78,239 there; 16,384 GPUs 302,185 → 303,207).
"""

from __future__ import annotations

import numpy as np

from schedopt.core.stopping import Deadline

from .l3_bound import golden
from .option_arrays import Arrays

#: Seconds per job one evaluation takes at most (0.013-0.022 s at 20,000 jobs, load 0.5-2;
#: 0.07 s at load 4 one unit at a time, when this was 7.5e-6): ``unit_search`` evaluates only
#: with this much time left.
UNIT_S_PER_JOB = 2.5e-6
#: Golden-section steps of ``unit_search`` on the scale ``s`` of B3L's ``(λ, μ)`` in
#: [SCALE_LO, SCALE_HI] (16,384 GPUs: 5 steps 303,207 at s = 1.44, 12 steps 303,208; 4,096:
#: 78,239 at s = 1.22), and the most seconds it takes (7 evaluations, 0.08 s at load 2).
SCALE_STEPS = 5
SCALE_LO, SCALE_HI = 0.5, 2.5
UNIT_SEARCH_S = 0.15
#: Seconds per job ``decomp`` keeps for the search out of B3L's time, up to UNIT_SEARCH_S (at
#: load 5 B3L's share of what was left before the L3 steps was under one evaluation's; 7
#: evaluations at about 1e-6 s per job, load 1: 0.15 s at 20,000 jobs, 0.04 s at 5,000, where
#: more cut B3L's joint search once at load 4, 77,588 against 78,239).
SEARCH_S_PER_JOB = 7.5e-6


def search_reserve_s(jobs: int) -> float:
    """Seconds ``decomp`` keeps out of B3L's time for ``unit_search`` on ``jobs`` jobs."""
    return min(UNIT_SEARCH_S, SEARCH_S_PER_JOB * jobs)


def covering_minima(
    costs: np.ndarray, gpus: np.ndarray, unit: np.ndarray, need: np.ndarray
) -> np.ndarray:
    """For every unit ``v`` with rows here, ``min Σ_j cost_j(y_j)`` over one choice per row of
    ``v`` (idle: 0 GPUs at 0, or an option with finite cost) with at least ``need[v]`` GPUs
    in all (+inf if none reaches it), by unit index (0 for units without rows). ``costs``,
    ``gpus``: (rows, options), whole GPUs; ``unit``: each row's unit. All units' recursions
    run together, one row of each per step, each unit's read at its own ``need``; a step
    touches only the units with a row left and the counts its rows so far can reach (the same
    values: 9.3 -> 6.9 ms on B3U's rows at 16,384 GPUs × 20,000 jobs)."""
    out = np.zeros(len(need))
    if not len(unit):
        return out
    order = np.argsort(unit, kind="stable")
    ids, first, counts = np.unique(unit[order], return_index=True, return_counts=True)
    slot = np.arange(len(order)) - np.repeat(first, counts)  # each row's place in its unit
    # units by their rows, most first: step k's units with a row are a prefix
    rank = np.empty(len(ids), dtype=np.int64)
    by_rows = np.argsort(-counts, kind="stable")
    rank[by_rows] = np.arange(len(ids))
    row_of = rank[np.repeat(np.arange(len(ids)), counts)]
    ids, counts = ids[by_rows], counts[by_rows]
    m = np.maximum(need[ids], 0).astype(np.int64)
    top = int(m.max())
    cost, n = costs[order], gpus[order]
    finite = np.isfinite(cost)
    # each job's cheapest option of each GPU count (+inf: none), by unit and place
    tables = []
    for size in np.unique(n[finite]).astype(np.int64):
        table = np.full((len(ids), int(counts.max())), np.inf)
        table[row_of, slot] = np.where(finite & (n == size), cost, np.inf).min(axis=1)
        tables.append((min(int(size), top + 1), table, np.isfinite(table).any(axis=0)))
    best = np.full((len(ids), top + 1), np.inf)  # f(k): least cost of at least k GPUs
    best[:, 0] = 0.0
    cand = np.empty_like(best)
    widest = max((size for size, _, _ in tables), default=0)
    for k in range(int(counts.max())):
        # only the units with a k-th row, and f up to (k + 1)·widest (+inf past it)
        u, w = int(np.count_nonzero(counts > k)), min(top, (k + 1) * widest) + 1
        nxt = best[:u, :w].copy()  # (idle)
        for size, table, alive in tables:
            if not alive[k]:
                continue
            col, s, c = table[:u, k, None], min(size, w), cand[:u, :w]
            np.add(best[:u, :1], col, out=c[:, :s])  # f(max(0, k − n)) + cost
            np.add(best[:u, : w - s], col, out=c[:, s:])
            np.minimum(nxt, c, out=nxt)
        best[:u, :w] = nxt
    out[ids] = best[np.arange(len(ids)), m]
    return out


def covering_min(costs: np.ndarray, gpus: np.ndarray, need: int) -> float:
    """``covering_minima`` of one unit: ``min Σ_j cost_j(y_j)`` with at least ``need`` GPUs
    (+inf if no choice reaches it)."""
    if not len(costs):
        return 0.0 if need <= 0 else float("inf")
    unit = np.zeros(len(costs), dtype=np.int64)
    return float(covering_minima(costs, gpus, unit, np.array([float(need)]))[0])


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
    cost = a.costs(lam, mu).T  # (jobs, options)
    counted = need[a.unit] > 0
    total += float(np.minimum(cost[~counted].min(axis=1, initial=np.inf), 0.0).sum())
    if counted.any():
        total += float(covering_minima(cost[counted], a.n[counted], a.unit[counted], need).sum())
    return total if np.isfinite(total) else -np.inf  # (no allocation meets R1: none to bound)


def unit_search(
    a: Arrays,
    need: np.ndarray,
    l2_floor: float | None,
    lam: float,
    mu: np.ndarray,
    stop: Deadline,
    deterministic: bool = False,
) -> float:
    """The largest B3U met at ``(λ, μ)`` (B3L's) and along ``s·(λ, μ)`` by a golden section
    on ``s`` (-inf if there was no time for one evaluation): every point is a bound.
    ``deterministic``: the section's SCALE_STEPS steps, always (fixed work,
    SolveOptions.deterministic); ``stop`` is then only a runaway cap."""
    mu = np.asarray(mu, dtype=np.float64)
    if deterministic:
        if stop.expired():
            return -np.inf
        best = unit_bound(a, need, l2_floor, lam, mu)
        if l2_floor is None and not mu.any():
            return best
        value, _ = golden(
            lambda s: unit_bound(a, need, l2_floor, s * lam, s * mu),
            SCALE_LO,
            SCALE_HI,
            SCALE_STEPS,
            stop,
        )
        return max(best, value)
    need_s = UNIT_S_PER_JOB * len(a.unit)
    if stop.remaining() <= need_s:
        return -np.inf
    # each step starts with one evaluation's time left, within UNIT_SEARCH_S
    edge = Deadline.after(min(UNIT_SEARCH_S, stop.remaining()) - need_s)
    best = unit_bound(a, need, l2_floor, lam, mu)
    if (l2_floor is None and not mu.any()) or edge.remaining() <= need_s:
        return best  # (nothing to scale, or no time for the section's first two points)

    def at(s: float) -> float:
        return unit_bound(a, need, l2_floor, s * lam, s * mu)

    value, _ = golden(at, SCALE_LO, SCALE_HI, SCALE_STEPS, edge)
    return max(best, value)


__all__ = [
    "SCALE_STEPS",
    "SEARCH_S_PER_JOB",
    "UNIT_SEARCH_S",
    "UNIT_S_PER_JOB",
    "covering_min",
    "covering_minima",
    "search_reserve_s",
    "unit_bound",
    "unit_search",
]

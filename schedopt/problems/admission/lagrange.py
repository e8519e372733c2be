"""B1L: a Lagrangian bound on L1 with the capacity rows C3 relaxed (formulations/admission.md,
"The Lagrangian bound B1L").

With multipliers ``λ_tgs ≥ 0`` on C3, L1 ≤ ``Σ λ_tgs κ_gs + Σ_j best_j(λ)`` for every plan,
where ``best_j`` is the most a job can gain alone: the value of a tier it meets less the price
of the GPUs it takes before that tier's deadline (0 for a job it may reject). Each job's gain
is taken over a relaxation of its own plans (whole slots, ``K_o`` slots on option ``o``, any
``K_o`` cheapest slots per option, ``Σ K_o`` at most the slots it may run in), so ``best_j``
is at least the gain of its true plans and the sum stays a bound. Any ``λ`` gives one
(:func:`schedopt.model.lp_bound.lagrangian_bound`); the LP's duals are a good start.
"""

from __future__ import annotations

import math

import numpy as np

from schedopt.core.stopping import Deadline, Ticker

from .data import JobData, ModelData

#: A job's best gain alone and its plan: (option, its slots) pairs, or None for rejecting it.
BestPlan = tuple[float, list[tuple[int, list[int]]] | None]


class Prices:
    """The relaxed rows (one per slot, type and level) and each job's gain at ``λ``."""

    def __init__(self, data: ModelData, stop: Deadline | None = None):
        self.data = data
        self.stop = stop  # an evaluation past it raises DeadlineReached
        self.keys = [(t, g, s) for t in range(data.T) for (g, s) in sorted(data.chunk_capacity)]
        self.row = {k: i for i, k in enumerate(self.keys)}
        self.rhs = np.array([float(data.capacity(t, g, s)) for t, g, s in self.keys])
        self.slo = [j for j in data.jobs if j.is_slo]
        # per option shape (type, GPUs): a (levels × rows) usage matrix, rows per slot
        self._shape_rows: dict[tuple[str, int], list[tuple[int, ...]]] = {}
        for job in self.slo:
            for o in job.options:
                self._shape(o.gpu_type, o.n)
        # best_plans' evaluations, in order: λ and its plans (the first at the LP's prices)
        self._seen: dict[bytes, tuple[np.ndarray, list[BestPlan]]] = {}

    def _shape(self, g: str, n: int) -> list[tuple[int, ...]]:
        rows = self._shape_rows.get((g, n))
        if rows is None:
            levels = [s for s in self.data.levels[g] if (n if n >= s else 0)]
            rows = self._shape_rows[g, n] = [
                tuple(self.row[t, g, s] for s in levels) for t in range(self.data.T)
            ]
        return rows

    def multipliers(self, duals: dict) -> np.ndarray:
        """``λ`` from the LP's duals of C3 (``L1Bound.prices``), in the order of ``keys``
        (negatives and rows the LP lacks at 0): the guide's B1L starts there, and the start's
        priced plans ask ``best_plans`` at the same ``λ``."""
        return np.array([max(0.0, duals.get(key, 0.0)) for key in self.keys])

    def costs(self, lam: np.ndarray) -> dict[tuple[str, int], np.ndarray]:
        """Per option shape (type, GPUs), the price at ``λ`` of running it in each slot."""
        return {
            key: np.array([key[1] * lam[list(r)].sum() for r in rows])
            for key, rows in self._shape_rows.items()
        }

    def best_plans(self, lam: np.ndarray, stop: Deadline | None = None) -> list[BestPlan]:
        """Each SLO job's best gain and plan alone at ``λ`` (``best_j(λ)``; in the order of
        ``slo``; ``(0, None)`` for rejecting it). Past ``stop`` (else the object's own) it
        raises DeadlineReached. Every ``λ`` evaluated is kept (``evaluated``): asked again at
        one (the LP's prices, by the start's priced plans after the guide's B1L), the same
        plans at once."""
        key = lam.tobytes()
        seen = self._seen.get(key)
        if seen is not None:
            return seen[1]
        price = self.costs(lam)
        phase = "evaluating the Lagrangian bound B1L"
        tick = Ticker(stop if stop is not None else self.stop, phase, every=64)
        out = []
        for job in self.slo:
            tick()
            out.append(self._best(job, price))
        self._seen[key] = (lam.copy(), out)
        return out

    def evaluated(self) -> list[tuple[np.ndarray, list[BestPlan]]]:
        """Every ``λ`` ``best_plans`` evaluated, with its plans, in order (B1L's steps after
        the LP's prices: the start prices the greedy at each)."""
        return list(self._seen.values())

    def oracle(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """``(Σ_j best_j(λ), usage of the jobs' best plans per row)``."""
        total = 0.0
        used = np.zeros(len(self.keys))
        for job, (gain, plan) in zip(self.slo, self.best_plans(lam), strict=True):
            if plan is None:
                continue
            total += gain
            for o, slots in plan:
                opt = job.options[o]
                rows = self._shape_rows[opt.gpu_type, opt.n]
                for t in slots:
                    used[list(rows[t])] += opt.n
        return total, used

    def _best(self, job: JobData, price) -> BestPlan:
        """The job's best gain and plan (option, slots); (0, None) for rejecting it. Exact over
        the job's own plans: a pass over its slots keeping, per amount of work done (capped
        at ``W``), the cheapest way there (C1: one option per slot)."""
        data = self.data
        best: BestPlan = (-math.inf, None) if job.admitted_before else (0.0, None)
        useful = [(o, opt.work, price[opt.gpu_type, opt.n]) for o, opt in enumerate(job.options)
                  if opt.work > 0]  # fmt: skip
        ends: dict[int, float] = {}
        for tier in job.tiers:
            end = min(tier.slots_before, data.T)
            ends[end] = max(ends.get(end, -math.inf), tier.value)
        last = max(ends, default=0)
        W = job.work
        # work done → (cost, plan as a tuple of (slot, option))
        states: dict[int, tuple[float, tuple[tuple[int, int], ...]]] = {0: (0.0, ())}
        for t in range(job.arrival, last):
            nxt = dict(states)
            for done, (cost, plan) in states.items():
                if done >= W:
                    continue
                for o, om, p in useful:
                    w = min(W, done + om)
                    c = cost + float(p[t])
                    old = nxt.get(w)
                    if old is None or c < old[0]:
                        nxt[w] = (c, (*plan, (t, o)))
            # keep the states no other beats on both work and cost
            kept: dict[int, tuple[float, tuple[tuple[int, int], ...]]] = {}
            floor = math.inf
            for w in sorted(nxt, reverse=True):
                if nxt[w][0] < floor:
                    kept[w] = nxt[w]
                    floor = nxt[w][0]
            states = kept
            value = ends.get(t + 1)
            if value is not None and W in states:
                cost, plan = states[W]
                if value - cost > best[0]:
                    by: dict[int, list[int]] = {}
                    for s, o in plan:
                        by.setdefault(o, []).append(s)
                    best = (value - cost, list(by.items()))
        if best[1] is None and job.admitted_before:
            return 0.0, None  # it cannot keep its guarantee even alone: no plan exists
        return best


def _cheapest(work: int, per_slot: list[int], sums: list[np.ndarray], avail: int):
    """``min Σ_o sums[o][K_o]`` over integers ``K ≥ 0``, ``Σ K ≤ avail``,
    ``Σ ω_o K_o ≥ work``: (cost, K) or None."""
    best: tuple[float, list[int]] | None = None
    n = len(per_slot)
    if n == 0:
        return None

    def go(i: int, left: int, free: int, acc: float, ks: list[int]) -> None:
        nonlocal best
        if best is not None and acc >= best[0]:
            return
        if left <= 0:
            best = (acc, ks + [0] * (n - i))
            return
        if i == n or free <= 0:
            return
        om = per_slot[i]
        if i == n - 1:
            k = math.ceil(left / om)
            if k <= free:
                go(n, 0, free - k, acc + float(sums[i][k]), [*ks, k])
            return
        for k in range(min(free, math.ceil(left / om)) + 1):
            go(i + 1, left - k * om, free - k, acc + float(sums[i][k]), [*ks, k])

    go(0, work, avail, 0.0, [])
    return best


__all__ = ["BestPlan", "Prices"]

"""Bounds on every level for the whole round, cheap at 16,384 GPUs × 20,000 jobs
(formulations/fairshare.md, "Bounds of the decomposition", B1–B3).

- B1 (L1): the pooled water level. Every counted unit ``v`` needs ``m_v(t)`` whole GPUs to
  reach share ``t`` and can use at most ``δ_v``; all units together have at most ``C``.
- B2 (L2): a Lagrangian bound with one price ``μ_g ≥ 0`` per GPU of type ``g`` on C2.
- B3 (L3, a lower bound): the restart cost of running jobs that cannot be kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline

from .data import GPU_TOL, ModelData

#: Bisection steps of B1 (the bound is the upper end of the last bracket, so any count is
#: valid; 60 halvings of [0, share_upper_bound] reach float resolution).
B1_STEPS = 60
#: Subgradient steps of B2 (each is valid; the best is reported).
B2_STEPS = 200


@dataclass(frozen=True)
class Bounds:
    l1: float  # an upper bound on L1
    l2: float  # an upper bound on L2
    l3: float  # a lower bound on L3
    #: B2's prices ``μ_g`` per GPU of each type (sorted type order), for B3L.
    prices: tuple[float, ...] = ()


def _units_arrays(data: ModelData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    units = data.included
    used = np.array([v.used_s for v in units], dtype=np.float64)
    after = np.array([v.deserved_after_s for v in units], dtype=np.float64)
    demand = np.array([v.demand for v in units], dtype=np.float64)
    return used, after, demand


def pooled_share_bound(data: ModelData) -> float:
    """B1: the largest ``t`` with ``m_v(t) ≤ δ_v`` for every counted unit and
    ``Σ_v m_v(t) ≤ C``, ``m_v(t) = max(0, ⌈(t·D'_v − U_v)/L⌉)`` (data.min_gpus)."""
    if not data.included:
        return 0.0
    used, after, demand = _units_arrays(data)
    C = float(sum(data.type_capacity.values()))
    L = data.round_s

    def feasible(t: float) -> bool:
        need = np.maximum(0.0, np.ceil((t * after - used) / L - GPU_TOL))
        return bool((need <= demand).all() and need.sum() <= C)

    lo, hi = 0.0, data.share_upper_bound()
    if feasible(hi):
        return hi
    for _ in range(B1_STEPS):
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return hi


def lagrangian_throughput_bound(data: ModelData, deadline: Deadline | None = None) -> float:
    """B2: ``min_μ≥0 Σ_g μ_g F_g + Σ_j max(0, max_o e_jo − μ_g(o) n_o)``, by projected
    subgradient steps; every μ gives a bound, the least found is returned."""
    return gpu_prices(data, deadline)[0]


def gpu_prices(data: ModelData, deadline: Deadline | None = None) -> tuple[float, dict[str, float]]:
    """B2 and the prices ``μ_g`` (per GPU of each type) that give it."""
    types = sorted(data.type_capacity)
    tix = {g: i for i, g in enumerate(types)}
    job, typ, n, eff = [], [], [], []
    for j in data.jobs:
        for o in j.options:
            job.append(j.index)
            typ.append(tix[o.gpu_type])
            n.append(o.n)
            eff.append(o.eff)
    if not job:
        return 0.0, {}
    job_a = np.asarray(job, dtype=np.int64)
    typ_a = np.asarray(typ, dtype=np.int64)
    n_a = np.asarray(n, dtype=np.float64)
    eff_a = np.asarray(eff, dtype=np.float64)
    cap = np.array([data.type_capacity[g] for g in types], dtype=np.float64)
    jobs = len(data.jobs)
    # the GPUs of each option under its type's row: the GPUs the chosen options use by type
    # are one product (whole numbers, so the same sums as a bincount: 0.06 ms a step against
    # 0.7 ms at 20,000 jobs)
    gpus_by_type = (typ_a[None, :] == np.arange(len(types))[:, None]) * n_a
    mu = np.zeros(len(types))
    best, best_mu = math.inf, mu
    step0 = 1.0 / max(1.0, float(n_a.max()))
    for step in range(B2_STEPS):
        if step and deadline is not None and deadline.expired():
            break  # (the first step, at μ = 0, always runs: a finite bound)
        profit = eff_a - mu[typ_a] * n_a
        top = np.full(jobs, 0.0)
        np.maximum.at(top, job_a, profit)
        value = float(mu @ cap + top.sum())
        if value < best:
            best, best_mu = value, mu
        # the chosen option of each job (profit equal to its top, and positive)
        chosen = (profit >= top[job_a] - 1e-15) & (profit > 0)
        used = gpus_by_type @ chosen
        grad = cap - used
        if not grad.any():
            break
        mu = np.maximum(0.0, mu - step0 / math.sqrt(step + 1) * grad / np.linalg.norm(grad))
    return best, {g: float(best_mu[i]) for i, g in enumerate(types)}


def restart_lower_bound(data: ModelData) -> float:
    """B3: every running job that cannot be kept restarts (its cost is in every L3)."""
    return sum(j.restart_cost for j in data.jobs if j.was_running and not j.keepable)


def bounds(data: ModelData, deadline: Deadline | None = None) -> Bounds:
    b2, prices = gpu_prices(data, deadline)
    return Bounds(
        pooled_share_bound(data),
        b2,
        restart_lower_bound(data),
        tuple(prices[g] for g in sorted(prices)),
    )


__all__ = [
    "Bounds",
    "bounds",
    "gpu_prices",
    "lagrangian_throughput_bound",
    "pooled_share_bound",
    "restart_lower_bound",
]

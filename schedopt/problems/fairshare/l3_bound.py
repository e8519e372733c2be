"""B3L: a Lagrangian lower bound on L3 behind a solution's L1 and L2 (formulations/fairshare.md,
"B3L").

Over the allocations at least as good as a solution on the first levels (min share ``≥ t̂``,
so ``g_v ≥ m_v(t̂)`` for every counted unit; effective throughput ``≥ λ₂``, written only when
``t̂`` is settled as L1 of the optimum, so that ``λ₂`` is a lower bound on its L2), the rows
linking jobs are relaxed: the fix rows with ``ρ_v ≥ 0``, C2 with ``μ_g ≥ 0``, the L2 row with
``λ ≥ 0``. What is left splits by job (one option, or kept, or idle), so the bound is a sum
of per-job minima: any multipliers give a valid bound (weak duality), the search only makes
it larger.

The multipliers: ``μ_g = λ·p_g`` with ``p_g`` B2's prices per GPU (the L2 Lagrangian's), so
the per-job profit is ``λ`` times B2's reduced profit, ``λ`` by a golden section; then
``(λ, μ)`` together by Kelley's cutting planes in a trust region
(``model.lp_bound.cutting_plane_ascent``, supergradients from the per-job minimisers); for
each point every ``ρ_v`` by bisection (each unit's term is concave in its own ``ρ_v`` alone:
the sign of ``m_v − g_v`` says which way). On 4,096 GPUs × 5,000 jobs: 68,216 against the LP
relaxation's 68,295 over the same rows (coordinate-wise golden sections on ``λ``, a scale of
``μ`` and each ``μ_g``, before: 64,054).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import cutting_plane_ascent

from .bound import restart_lower_bound
from .data import GPU_TOL, ModelData

#: Bisection steps of each unit's ρ_v (any ρ is valid; the bound is the better end).
RHO_STEPS = 20
#: Golden-section steps on λ before the cutting planes (a rough start is enough: at 16,384
#: GPUs, load 5, 12 steps used B3L's 0.5 s before the planes began, 237,602 against 246,060
#: with 3), and on each μ_g in B2L (each evaluation is a valid bound; the best is kept).
LAMBDA_STEPS = 3
SCALE_STEPS = 6
#: Golden ratio's conjugate.
_G = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class Arrays:
    """Every job with options as a row, its options padded to the widest job's count."""

    unit: np.ndarray  # (jobs,) the job's unit
    n: np.ndarray  # (jobs, K) GPUs of each option (0 where padded)
    eff: np.ndarray  # (jobs, K) e_jo
    gtype: np.ndarray  # (jobs, K) type index
    base: np.ndarray  # (jobs, K) φ ν_o − c_j [o = previous option of a keepable job]; +inf pad
    capacity: np.ndarray  # F_g by type index
    restart_constant: float  # Σ_{J^P} c_j


def arrays(data: ModelData) -> Arrays:
    types = sorted(data.type_capacity)
    tix = {g: i for i, g in enumerate(types)}
    jobs = [j for j in data.jobs if j.options]
    width = max((len(j.options) for j in jobs), default=1)
    shape = (len(jobs), width)
    n, eff = np.zeros(shape), np.zeros(shape)
    gtype = np.zeros(shape, dtype=np.int64)
    base = np.full(shape, np.inf)
    for r, job in enumerate(jobs):
        for o, opt in enumerate(job.options):
            n[r, o] = opt.n
            eff[r, o] = opt.eff
            gtype[r, o] = tix[opt.gpu_type]
            keep = job.restart_cost if o == job.prev_option else 0.0
            base[r, o] = data.frag_cost * opt.extra_hosts - keep
    return Arrays(
        np.array([j.unit for j in jobs], dtype=np.int64),
        n,
        eff,
        gtype,
        base,
        np.array([data.type_capacity[g] for g in types], dtype=np.float64),
        data.restart_constant,
    )


def _per_job(a: Arrays, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each job's least cost (0: idle) and the GPUs of that choice."""
    pick = np.argmin(cost, axis=1)
    rows = np.arange(len(cost))
    least = cost[rows, pick]
    gpus = np.where(least < 0.0, a.n[rows, pick], 0.0)
    return np.minimum(least, 0.0), gpus


def lagrangian(
    a: Arrays,
    need: np.ndarray,
    l2_floor: float | None,
    lam: float,
    mu: np.ndarray,
    near: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """The bound at ``λ``, ``μ`` with every ``ρ_v`` chosen by bisection, and those ρ;
    ``need[v]`` is ``m_v(t̂)`` (0 for units not counted), ``l2_floor`` λ₂ (None: no L2 row,
    λ = 0). ``near``: ρ found at nearby multipliers, which narrows the bisection to
    ``[ρ/2, 2ρ + 1]`` and halves its steps (a ρ outside is only a weaker bound)."""
    if l2_floor is None:
        lam = 0.0
    units = len(need)
    if not len(a.unit):
        return a.restart_constant, np.zeros(units)
    cost = a.base - lam * a.eff + mu[a.gtype] * a.n
    if near is None:
        finite = np.abs(cost[np.isfinite(cost)])
        lo = np.zeros(units)
        hi = np.full(units, float(finite.max(initial=0.0)) + 1.0)  # every job at its widest
        steps = RHO_STEPS
    else:
        lo, hi, steps = 0.5 * near, 2.0 * near + 1.0, RHO_STEPS // 2
    counted = need > 0
    for _ in range(steps):
        mid = np.where(counted, 0.5 * (lo + hi), 0.0)
        _, gpus = _per_job(a, cost - mid[a.unit][:, None] * a.n)
        got = np.bincount(a.unit, weights=gpus, minlength=units)
        short = got < need  # supergradient m_v − g_v > 0: ρ_v must rise
        lo = np.where(short, mid, lo)
        hi = np.where(short, hi, mid)
    best, best_rho = -math.inf, lo
    for rho in (np.where(counted, lo, 0.0), np.where(counted, hi, 0.0)):
        least, _ = _per_job(a, cost - rho[a.unit][:, None] * a.n)
        value = (
            a.restart_constant
            + (lam * l2_floor if l2_floor is not None else 0.0)
            - float(mu @ a.capacity)
            + float(rho @ need)
            + float(least.sum())
        )
        if value > best:
            best, best_rho = value, rho
    return best, best_rho


def _golden(
    f: Callable[[float], float], lo: float, hi: float, steps: int, stop: Deadline
) -> tuple[float, float]:
    """The best (value, argument) met by a golden-section search of ``f`` on [lo, hi]."""
    x1, x2 = hi - _G * (hi - lo), lo + _G * (hi - lo)
    f1, f2 = f(x1), f(x2)
    best = max((f1, x1), (f2, x2))
    for _ in range(steps):
        if stop.expired():
            break
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + _G * (hi - lo)
            f2 = f(x2)
            best = max(best, (f2, x2))
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - _G * (hi - lo)
            f1 = f(x1)
            best = max(best, (f1, x1))
    return best


def l1_settled(data: ModelData, t_hat: float, b1: float) -> bool:
    """True when no minimum share in ``(t̂, B1]`` can be reached by whole GPUs, so that
    ``t̂`` (a solution's L1) is L1 of the optimum: for every counted unit the next share it
    can reach above ``t̂`` (one GPU past what ``t̂`` needs) is above B1."""
    for v in data.included:
        gpus = (t_hat * v.deserved_after_s - v.used_s) / data.round_s
        nxt = math.floor(gpus + GPU_TOL) + 1
        if v.share(nxt, data.round_s) <= b1 * (1.0 + 1e-12):
            return False
    return True


def need_gpus(data: ModelData, t_hat: float) -> np.ndarray:
    """``m_v(t̂)`` by unit (0 for units not counted): what every allocation at least as fair
    as ``t̂`` gives each counted unit."""
    need = np.zeros(len(data.units))
    for v in data.included:
        need[v.index] = data.min_gpus(v, t_hat)
    return need


def l3_lower_bound(
    data: ModelData,
    need: np.ndarray,
    l2_floor: float | None,
    prices: np.ndarray,
    stop: Deadline,
    a: Arrays | None = None,
) -> float:
    """B3L: the best Lagrangian value found before ``stop`` (at least B3 = the restart cost of
    the unkeepable running jobs, which μ = λ = ρ = 0 gives). ``need``: ``m_v(t̂)`` by unit;
    ``l2_floor``: λ₂ or None; ``prices``: B2's ``μ_g`` by type, in sorted type order."""
    b3 = restart_lower_bound(data)
    if stop.expired():
        return b3
    a = arrays(data) if a is None else a
    if len(prices) != len(a.capacity):
        prices = np.zeros(len(a.capacity))
    best, rho = lagrangian(a, need, None, 0.0, np.zeros_like(prices))
    best = max(best, b3)
    if stop.expired() or l2_floor is None or not len(a.unit):
        return best
    # λ's range: past the largest restart cost per unit of throughput no job is kept for its
    # cost any more, and the bound only falls
    finite = np.isfinite(a.base)
    top = float((-a.base[finite]).max(initial=0.0)) / max(float(a.eff[finite].min()), 1e-9)
    near = [rho]  # the ρ of the last evaluation: the next bisection starts near it

    def at(lam: float, mu: np.ndarray) -> float:
        value, near[0] = lagrangian(a, need, l2_floor, lam, mu, near[0])
        return value

    value, lam = _golden(lambda x: at(x, x * prices), 0.0, max(1.0, top), LAMBDA_STEPS, stop)
    best = max(best, value)
    if stop.expired():
        return best

    floor = float(l2_floor)

    def with_gradient(y: np.ndarray) -> tuple[float, np.ndarray]:
        value = at(float(y[0]), y[1:])
        return value, supergradient(a, floor, float(y[0]), y[1:], near[0])

    # then (λ, μ) together by cutting planes from there (coordinate-wise golden sections
    # stalled at 64,054 on 4,096 GPUs, 94% of the LP's 68,295; these reach 68,216)
    start = np.concatenate([[lam], lam * np.asarray(prices, dtype=np.float64)])
    value, _ = cutting_plane_ascent(with_gradient, start, time.perf_counter() + stop.remaining())
    return max(best, value)


def supergradient(
    a: Arrays, l2_floor: float, lam: float, mu: np.ndarray, rho: np.ndarray
) -> np.ndarray:
    """A supergradient in ``(λ, μ)`` of the Lagrangian at ``(λ, μ, ρ)``: the relaxed rows'
    slacks at the per-job minimisers, ``λ₂ − Σ e x`` and ``Σ_{o of g} n x − F_g``."""
    cost = a.base - lam * a.eff + mu[a.gtype] * a.n - rho[a.unit][:, None] * a.n
    rows = np.arange(len(cost))
    pick = np.argmin(cost, axis=1)
    on = cost[rows, pick] < 0.0
    n = a.n[rows, pick][on]
    used = np.bincount(a.gtype[rows, pick][on], weights=n, minlength=len(a.capacity))
    return np.concatenate([[l2_floor - float(a.eff[rows, pick][on].sum())], used - a.capacity])


def l2_upper_bound(data: ModelData, need: np.ndarray, prices: np.ndarray, stop: Deadline) -> float:
    """B2L: an upper bound on L2 over the allocations at least as fair as a solution
    (``g_v ≥ m_v(t̂)``, ``need``), by relaxing those rows with ``ρ_v ≥ 0`` and C2 with
    ``μ_g ≥ 0``: ``Σ_g μ_g F_g − Σ_v ρ_v m_v + Σ_j max(0, max_o e_jo − (μ_g − ρ_v) n_o)``
    (formulations/fairshare.md, "B2L"). The least value met before ``stop`` (+inf with no
    time); :func:`l2_prices` gives its multipliers too."""
    return l2_prices(data, need, prices, stop)[0]


def l2_prices(
    data: ModelData,
    need: np.ndarray,
    prices: np.ndarray,
    stop: Deadline,
    a: Arrays | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """B2L (:func:`l2_upper_bound`) and the multipliers ``(μ_g, ρ_v)`` that give it. It is
    B3L's Lagrangian with no restart or host costs and ``λ = 1`` (the L2 row as the
    objective), negated: ``μ`` from B2's ``prices`` (where ``ρ = 0`` gives B2 itself), then
    each ``μ_g`` alone by golden sections, ``ρ`` exactly enough at each point."""
    a = arrays(data) if a is None else a
    units = len(need)
    if not len(a.unit):
        return 0.0, np.zeros(len(a.capacity)), np.zeros(units)
    if len(prices) != len(a.capacity):
        prices = np.zeros(len(a.capacity))
    mu = np.asarray(prices, dtype=np.float64).copy()
    if stop.expired():
        return math.inf, mu, np.zeros(units)
    plain = Arrays(
        a.unit, a.n, a.eff, a.gtype, np.where(np.isfinite(a.base), 0.0, np.inf), a.capacity, 0.0
    )
    near: list[np.ndarray | None] = [None]
    found: dict[float, np.ndarray] = {}

    def at(mu: np.ndarray) -> float:
        # the lower bound on min −L2 at (1, μ, ρ): its negation bounds L2 from above
        value, rho = lagrangian(plain, need, 0.0, 1.0, mu, near[0])
        near[0] = found[value] = rho
        return value

    best = at(mu)
    best_rho = found[best]
    for g in range(len(mu)):
        if stop.expired():
            break

        def with_price(p: float, g: int = g) -> float:
            trial = mu.copy()
            trial[g] = p
            return at(trial)

        value, price = _golden(with_price, 0.0, 2.0 * mu[g] + 1e-3, SCALE_STEPS, stop)
        if value > best:
            best, mu[g], best_rho = value, price, found[value]
    return -best, mu, best_rho


__all__ = [
    "Arrays",
    "arrays",
    "l1_settled",
    "l2_prices",
    "l2_upper_bound",
    "l3_lower_bound",
    "lagrangian",
    "need_gpus",
]

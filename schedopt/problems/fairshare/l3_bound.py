"""B3L (formulations/fairshare.md, "B3L"): a Lagrangian lower bound on L3 behind a plan's L1, L2.

Over the allocations at least as good as a solution on the first levels (min share ``≥ t̂``,
so ``g_v ≥ m_v(t̂)`` for every counted unit; effective throughput ``≥ λ₂``, written only when
``t̂`` is settled as L1 of the optimum, so that ``λ₂`` is a lower bound on its L2), the rows
linking jobs are relaxed: the fix rows with ``ρ_v ≥ 0``, C2 with ``μ_g ≥ 0``, the L2 row with
``λ ≥ 0``. What is left splits by job (one option, or kept, or idle), so the bound is a sum
of per-job minima: any multipliers give a valid bound (weak duality), the search only makes
it larger.

The multipliers: ``μ_g = λ·p_g`` with ``p_g`` B2's prices, ``λ`` by a golden section; then
``(λ, μ)`` by Kelley's cutting planes in a trust region (``model.lp_bound``), every ``ρ_v``
by bisection at each point; then ``(λ, μ, ρ)`` together by the same planes, which reach the
LP over the same rows where the first search stalls (4,096 GPUs × 5,000 jobs: 77,517 against
the LP's 77,539, where it stalled at 76,917).

This module is the search; the Lagrangian it evaluates is ``l3_lagrangian.py``, the rows' right
sides ``m_v(t̂)`` ``l1_fix.py``, the jobs' options ``option_arrays.py``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import cutting_plane_ascent

from .bound import restart_lower_bound
from .data import ModelData
from .l1_fix import l1_settled, need_gpus
from .l3_lagrangian import L3Dual, at_point, lagrangian, supergradient
from .option_arrays import Arrays, arrays

#: Golden-section steps on λ before the cutting planes (a rough start is enough: at 16,384
#: GPUs, load 5, 12 steps used B3L's 0.5 s before the planes began, 237,602 against 246,060
#: with 3).
LAMBDA_STEPS = 3
#: Cutting-plane steps of the search over (λ, μ, ρ) together, in what B3L's time leaves
#: after the one over (λ, μ) with each ρ_v set alone (given a share of its own at 16,384
#: GPUs, it raised B3L by 0.2% and took that share from the first search).
JOINT_STEPS = 400
#: ... only with at most this many counted units and jobs: it lifts B3L to the LP at 4,096 GPUs
#: × 5,000 jobs; at 16,384 × 20,000 it took 0.06-0.9 s more for +0.005% (2026-12-05).
JOINT_MAX_UNITS, JOINT_MAX_JOBS = 150, 10_000
#: ... and only when the time left covers this many steps at the first search's pace (on
#: 4,096 GPUs it reaches the LP in about 200).
JOINT_NEED_STEPS = 200
#: Cutting-plane steps of the search over (λ, μ) before it.
PLANE_STEPS = 60
#: ... or once the last PLANE_STALL_STEPS steps raised it by at most PLANE_STALL_TOL of it:
#: at 16,384 GPUs (no joint search) it crept on at 2-3e-4 per 10 steps to its 60th (B3U's
#: search after it, on one captured plan: 303,115 from there, 303,129 from the 54th step).
PLANE_STALL_STEPS = 10
PLANE_STALL_TOL = 1e-3
#: ... and it stops once the last STALL_STEPS steps raised the bound by at most STALL_TOL of
#: it (on 4,096 GPUs it reaches the LP in about 200 steps; without a stop it used B3L's
#: whole cap there).
STALL_STEPS = 25
STALL_TOL = 1e-5
_G = (math.sqrt(5.0) - 1.0) / 2.0  # the golden ratio's conjugate


def golden(
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


def joint_search_runs(need: np.ndarray, jobs: int) -> bool:
    """Whether B3L's joint search runs on a round of ``jobs`` jobs, ``m_v(t̂)`` ``need``
    (JOINT_MAX_UNITS, JOINT_MAX_JOBS; ``decomp`` gives it time on these rounds)."""
    return int((need > 0).sum()) <= JOINT_MAX_UNITS and jobs <= JOINT_MAX_JOBS


def l3_dual(
    data: ModelData,
    need: np.ndarray,
    l2_floor: float | None,
    prices: np.ndarray,
    stop: Deadline,
    a: Arrays | None = None,
    deterministic: bool = False,
) -> L3Dual:
    """B3L: the best Lagrangian value found before ``stop`` (at least B3 = the restart cost of
    the unkeepable running jobs, which μ = λ = ρ = 0 gives), with the multipliers it was found
    at (those of λ = μ = ρ = 0 when B3 is larger or there was no time). ``need``: ``m_v(t̂)``
    by unit; ``l2_floor``: λ₂ or None; ``prices``: B2's ``μ_g`` by type, in sorted type
    order. ``deterministic``: every search runs to its own step or stall limit (fixed work,
    SolveOptions.deterministic), ``stop`` only a runaway cap: the joint search is not skipped
    for the pace measured on the wall clock."""
    b3 = restart_lower_bound(data)
    a = arrays(data) if a is None else a
    units = len(need)
    if len(prices) != len(a.capacity):
        prices = np.zeros(len(a.capacity))
    zero = L3Dual(b3, 0.0, np.zeros(len(a.capacity)), np.zeros(units))
    if stop.expired():
        return zero
    value, rho = lagrangian(a, need, None, 0.0, np.zeros_like(prices))
    best = L3Dual(value, 0.0, np.zeros(len(a.capacity)), rho) if value > b3 else zero
    if stop.expired() or l2_floor is None or not len(a.unit):
        return best
    # λ's range: past the largest restart cost per unit of throughput no job is kept for its
    # cost any more, and the bound only falls
    finite = np.isfinite(a.base)
    top = float((-a.base[finite]).max(initial=0.0)) / max(float(a.eff[finite].min()), 1e-9)
    near = [rho]  # the ρ of the last evaluation: the next bisection starts near it
    seen: dict[float, tuple[float, np.ndarray, np.ndarray]] = {}

    def at(lam: float, mu: np.ndarray) -> float:
        value, near[0] = lagrangian(a, need, l2_floor, lam, mu, near[0])
        if value > best.value and value not in seen:
            seen[value] = (lam, mu.copy(), near[0])
        return value

    def best_of(value: float) -> L3Dual:
        if value > best.value and value in seen:
            lam, mu, rho = seen[value]
            return L3Dual(value, lam, mu, rho)
        return best

    value, lam = golden(lambda x: at(x, x * prices), 0.0, max(1.0, top), LAMBDA_STEPS, stop)
    best = best_of(value)
    if stop.expired():
        return best

    floor = float(l2_floor)
    calls = [0]  # the steps taken, for the joint search's pace below

    def with_gradient(y: np.ndarray) -> tuple[float, np.ndarray]:
        calls[0] += 1
        value = at(float(y[0]), y[1:])
        return value, supergradient(a, floor, float(y[0]), y[1:], near[0])

    # then (λ, μ) together by cutting planes from there (coordinate-wise golden sections
    # stalled at 64,054 on 4,096 GPUs, 94% of the LP's 68,295; these reach 68,216)
    start = np.concatenate([[lam], lam * np.asarray(prices, dtype=np.float64)])
    began = time.perf_counter()
    end = began + stop.remaining()
    value, _ = cutting_plane_ascent(
        with_gradient,
        start,
        end,
        max_steps=PLANE_STEPS,
        stall_steps=PLANE_STALL_STEPS,
        stall_tol=PLANE_STALL_TOL,
    )
    per_step = (time.perf_counter() - began) / max(1, calls[0])
    best = best_of(value)
    if stop.expired():
        return best
    # then (λ, μ, ρ) all together from the best point: each ρ_v set alone for the (λ, μ)
    # of the moment stalls short of the LP (on 4,096 GPUs 76,917 against its 77,539; these
    # reach 77,539 in 200 steps, 0.6 s at load 4)
    counted, runs = need > 0, joint_search_runs(need, len(data.jobs))
    if not runs or (not deterministic and stop.remaining() < JOINT_NEED_STEPS * per_step):
        # cut short, it spends the rest of B3L's time for little (16,384 GPUs: 0.45 s of wall
        # for +0.3% of B3L, 85 steps; 2026-12-05), so it runs only where it can converge
        return best
    types = len(a.capacity)

    def joint(y: np.ndarray) -> tuple[float, np.ndarray]:
        rho = np.where(counted, y[1 + types :], 0.0)
        return at_point(a, need, floor, float(y[0]), y[1 : 1 + types], rho)

    y0 = np.concatenate([[best.lam], best.mu, best.rho])
    value, y = cutting_plane_ascent(
        joint, y0, end, max_steps=JOINT_STEPS, stall_steps=STALL_STEPS, stall_tol=STALL_TOL
    )
    if value > best.value:
        rho = np.where(counted, y[1 + types :], 0.0)
        best = L3Dual(value, float(y[0]), y[1 : 1 + types].copy(), rho)
    return best


# (Arrays, arrays, at_point, lagrangian, L3Dual, l1_settled and need_gpus live in
# option_arrays.py, l3_lagrangian.py and l1_fix.py; importable from here as before)
__all__ = [
    "Arrays",
    "L3Dual",
    "arrays",
    "at_point",
    "golden",
    "joint_search_runs",
    "l1_settled",
    "l3_dual",
    "lagrangian",
    "need_gpus",
]

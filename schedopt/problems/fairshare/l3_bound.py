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
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import cutting_plane_ascent

from .bound import restart_lower_bound
from .data import GPU_TOL, ModelData

#: Bisection steps of each unit's ρ_v (any ρ is valid; the bound is the better end).
RHO_STEPS = 20
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

    @cached_property
    def columns(self) -> tuple[np.ndarray, ...]:
        """``base``, ``eff``, ``gtype``, ``n`` by option, then job (``_choice``'s layout)."""
        return tuple(np.ascontiguousarray(x.T) for x in (self.base, self.eff, self.gtype, self.n))

    def costs(self, lam: float, mu: np.ndarray) -> np.ndarray:
        """``base − λ e + μ_g n`` by option, then job (not to be written to: the last one is
        kept, as the cutting planes' supergradient follows each value at the same point)."""
        key = np.float64(lam).tobytes() + np.asarray(mu, dtype=np.float64).tobytes()
        last = self.__dict__.get("_costs")
        if last is None or last[0] != key:
            base, eff, gtype, n = self.columns
            last = self.__dict__["_costs"] = (key, base - lam * eff + mu[gtype] * n)
        return last[1]


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


def _choice(
    costs: np.ndarray, n: np.ndarray, rho: np.ndarray, of: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's least cost less ``ρ n`` over its options, and ``of`` (default: the option's
    index) at the first option reaching it. ``costs``, ``n``, ``of``: by option, then job (a
    pass per option: argmin over each job's row of 6 took 3-4 times as long at 20,000 jobs);
    ``rho``: each job's ``ρ`` of its unit."""
    least = costs[0] - rho * n[0]
    at = np.zeros(len(least)) if of is None else of[0].copy()
    for k in range(1, len(costs)):
        cost = costs[k] - rho * n[k]
        better = cost < least
        np.copyto(least, cost, where=better)
        np.copyto(at, k if of is None else of[k], where=better)
    return least, at


def _per_job(costs: np.ndarray, n: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each job's least cost (0: idle) and the GPUs of that choice (``_choice``'s layout)."""
    least, gpus = _choice(costs, n, rho, n)
    return np.minimum(least, 0.0), np.where(least < 0.0, gpus, 0.0)


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
    costs, n = a.costs(lam, mu), a.columns[3]
    if near is None:
        finite = np.abs(costs[np.isfinite(costs)])
        lo = np.zeros(units)
        hi = np.full(units, float(finite.max(initial=0.0)) + 1.0)  # every job at its widest
        steps = RHO_STEPS
    else:
        lo, hi, steps = 0.5 * near, 2.0 * near + 1.0, RHO_STEPS // 2
    counted = need > 0
    rows = np.flatnonzero(counted[a.unit])  # (the others' ρ stays 0: got 0 ≥ need as theirs)
    part, part_n, part_unit = costs[:, rows], n[:, rows], a.unit[rows]
    for _ in range(steps):
        mid = np.where(counted, 0.5 * (lo + hi), 0.0)
        _, gpus = _per_job(part, part_n, mid[part_unit])
        got = np.bincount(part_unit, weights=gpus, minlength=units)
        short = got < need  # supergradient m_v − g_v > 0: ρ_v must rise
        lo = np.where(short, mid, lo)
        hi = np.where(short, hi, mid)
    best, best_rho = -math.inf, lo
    for rho in (np.where(counted, lo, 0.0), np.where(counted, hi, 0.0)):
        least, _ = _per_job(costs, n, rho[a.unit])
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


@dataclass(frozen=True)
class L3Dual:
    """B3L's value and the multipliers it was found at (``λ`` on the L2 row, ``μ_g`` on C2,
    ``ρ_v`` on the fix rows): a job's reduced cost on option ``o`` is ``a_jo`` of Claim 2."""

    value: float
    lam: float
    mu: np.ndarray
    rho: np.ndarray

    def costs(self, a: Arrays) -> np.ndarray:
        """``a_jo`` by row of ``a`` (+inf where padded; the kept choice at the previous
        option, as in ``a.base``)."""
        return a.base - self.lam * a.eff + (self.mu[a.gtype] - self.rho[a.unit][:, None]) * a.n


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
) -> L3Dual:
    """B3L: the best Lagrangian value found before ``stop`` (at least B3 = the restart cost of
    the unkeepable running jobs, which μ = λ = ρ = 0 gives), with the multipliers it was found
    at (those of λ = μ = ρ = 0 when B3 is larger or there was no time). ``need``: ``m_v(t̂)``
    by unit; ``l2_floor``: λ₂ or None; ``prices``: B2's ``μ_g`` by type, in sorted type
    order."""
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
    if not runs or stop.remaining() < JOINT_NEED_STEPS * per_step:
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


def at_point(
    a: Arrays, need: np.ndarray, l2_floor: float, lam: float, mu: np.ndarray, rho: np.ndarray
) -> tuple[float, np.ndarray]:
    """Claim 2's bound at ``(λ, μ, ρ)`` as given (ρ_v = 0 for units not counted) and a
    supergradient in all three: the relaxed rows' slacks at the per-job minimisers,
    ``(λ₂ − Σ e x, Σ_{o of g} n x − F_g, m_v − g_v)``."""
    least, at = _choice(a.costs(lam, mu), a.columns[3], rho[a.unit])
    rows, pick = np.arange(len(least)), at.astype(np.int64)
    on = least < 0.0
    n = a.n[rows, pick][on]
    value = (
        a.restart_constant
        + lam * l2_floor
        - float(mu @ a.capacity)
        + float(rho @ need)
        + float(least[on].sum())
    )
    used = np.bincount(a.gtype[rows, pick][on], weights=n, minlength=len(a.capacity))
    got = np.bincount(a.unit[on], weights=n, minlength=len(need))
    slack_l2 = l2_floor - float(a.eff[rows, pick][on].sum())
    return value, np.concatenate([[slack_l2], used - a.capacity, need - got])


def supergradient(
    a: Arrays, l2_floor: float, lam: float, mu: np.ndarray, rho: np.ndarray
) -> np.ndarray:
    """A supergradient in ``(λ, μ)`` of the Lagrangian at ``(λ, μ, ρ)``: the relaxed rows'
    slacks at the per-job minimisers, ``λ₂ − Σ e x`` and ``Σ_{o of g} n x − F_g``."""
    need = np.zeros(len(rho))  # (the ρ part of at_point's supergradient is not used)
    return at_point(a, need, l2_floor, lam, mu, rho)[1][: 1 + len(a.capacity)]


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

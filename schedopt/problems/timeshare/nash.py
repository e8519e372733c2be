"""Nash social welfare over the time-share polytope, to a proven gap (formulations/timeshare.md,
"Strategy proof"): max Σ_j log u_j, u_j = a_j ρ_j(x), subject to C1, C2 and C4 over jobs alone.

Gavel's ``MaxMinFairnessStrategyProofPolicyWithPerf`` maximises the geometric mean of the
u_j with cvxpy (the same maximiser). Here the concave log is replaced by its tangents: every
tangent lies above the log, so the LP max Σ_j z_j s.t. z_j ≤ log v + (u_j − v)/v (for every
tangent point v of job j kept so far) bounds the optimum from above, and each LP's x is an
allocation whose Σ log u_j bounds it from below. The best allocation is kept by a line search
between it and the LP's point (the objective is concave along the segment), tangents are added
at both points, and the LP is solved again (HiGHS, from the last basis), until the geometric
means of the two bounds are within ``tol`` (relative) of each other.

One model serves the program without a job (``exclude``): the job's columns are fixed at 0 and
its z leaves the objective; every tangent stays valid, so the programs Gavel's mechanism needs
(one per job) start from the last one's tangents and basis.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np

from schedopt.backends.highs_quiet import quiet_highs
from schedopt.core.status import Status

from .data import TimeshareData

#: Default relative gap of the geometric mean at which the program counts as solved.
DEFAULT_TOL = 1e-6
#: At most this many LPs per program (each adds a tangent per job whose bound it lifts).
MAX_LPS = 400
#: A tangent is added only where the LP's z exceeds it by more than this (absolute, in log).
CUT_TOL = 1e-12
#: The dual bound is raised by this much (relative) for the rounding of its sums.
ROUNDING = 1e-12
#: Bisection steps of the line search (the derivative is monotone on [0, 1]).
LINE_STEPS = 60


@dataclass(frozen=True)
class Welfare:
    """One program's answer: the best allocation found and the two bounds on Σ log u."""

    status: Status
    #: x over ``data.singles`` (the best allocation), or None.
    x: np.ndarray | None
    #: u_j = a_j ρ_j at ``x`` (0 for the excluded job).
    utility: np.ndarray | None
    #: Σ log u_j at ``x`` over the jobs counted (the lower bound); -inf without an allocation.
    value: float
    #: an upper bound on the optimum of Σ log u_j.
    bound: float
    #: jobs counted in the sums.
    jobs: int
    lps: int

    @property
    def geo_mean(self) -> float:
        """The geometric mean of u at ``x`` (Gavel's cvxpy objective)."""
        return math.exp(self.value / self.jobs) if self.jobs else 1.0

    @property
    def geo_bound(self) -> float:
        return math.exp(self.bound / self.jobs) if self.jobs else 1.0

    @property
    def gap(self) -> float:
        """geo_bound / geo_mean − 1 (inf without an allocation)."""
        if not self.jobs:
            return 0.0
        if not math.isfinite(self.value):
            return math.inf
        return math.expm1((self.bound - self.value) / self.jobs)


class NashProgram:
    """The outer approximation's LP for one round (``data``: jobs alone, one row per job)."""

    def __init__(self, data: TimeshareData, weights: np.ndarray | None = None):
        cols = data.singles
        self.n = n = data.num_jobs
        self.nx = nx = len(cols)
        weights = data.weights() if weights is None else weights
        self.first = cols.first.astype(np.int64)
        #: u_j = Σ_{c of j} coef_c x_c
        self.coef = weights[self.first] * cols.rate_first
        order = np.argsort(self.first, kind="stable")
        self.job_cols = np.split(order, np.cumsum(np.bincount(self.first, minlength=n))[:-1])
        self.umax = np.zeros(n)
        np.maximum.at(self.umax, self.first, self.coef)
        self.rows = _Rows(data)
        self.cut_job: list[int] = []
        self.cut_at: list[float] = []
        h = self.h = quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        lb = np.concatenate([np.zeros(nx), np.full(n, -highspy.kHighsInf)])
        ub = np.concatenate([np.ones(nx), np.full(n, highspy.kHighsInf)])
        h.addVars(nx + n, lb, ub)
        self.z = np.arange(nx, nx + n, dtype=np.int32)
        h.changeColsCost(n, self.z, -np.ones(n))  # HiGHS minimises: −Σ z
        # C1: Σ_w x_jw ≤ 1; C2: Σ_j s_j x_jw ≤ N_w (C4: only the columns data.singles keeps)
        self._add_rows(self.first, np.arange(nx), cols.time_first, n, np.ones(n))
        self._add_rows(cols.type, np.arange(nx), cols.gpus, data.num_types, data.capacity)
        # a start: the isolated split on the columns (feasible: C1, C2 hold for x^iso)
        iso = data.isolated_split()
        self.start = iso[self.first, cols.type].astype(np.float64)
        u0 = self.utility(self.start)
        self.tangents = 0
        every = np.arange(n)
        # tangents spread between the start and each job's largest u (the last bounds z)
        for k in range(4):
            self.add_tangents(every, u0 * (self.umax / u0) ** (k / 3.0))

    def _add_rows(self, rows, cols, vals, count, upper) -> None:
        order = np.argsort(rows, kind="stable")
        starts = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=count), out=starts[1:])
        status = self.h.addRows(
            count,
            np.full(count, -highspy.kHighsInf),
            np.asarray(upper, dtype=np.float64),
            len(rows),
            starts[:-1].astype(np.int32),
            np.asarray(cols)[order].astype(np.int32),
            np.asarray(vals, dtype=np.float64)[order],
        )
        if status == highspy.HighsStatus.kError:
            raise RuntimeError("HiGHS refused the rows of the Nash welfare LP")

    def utility(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(self.first, weights=self.coef * x, minlength=self.n)

    def add_tangents(self, jobs: np.ndarray, at: np.ndarray) -> None:
        """z_j − Σ_c (coef_c / v) x_c ≤ log v − 1 for each job j and point v > 0."""
        keep = at > 0
        jobs, at = jobs[keep], at[keep]
        if not len(jobs):
            return
        cols = [self.job_cols[j] for j in jobs.tolist()]
        lengths = np.array([len(c) + 1 for c in cols], dtype=np.int64)
        starts = np.zeros(len(jobs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        index = np.concatenate(
            [np.concatenate([[self.nx + j], c]) for j, c in zip(jobs, cols, strict=True)]
        )
        vals = np.concatenate(
            [
                np.concatenate([[1.0], -self.coef[c] / v])
                for c, v in zip(cols, at.tolist(), strict=True)
            ]
        )
        status = self.h.addRows(
            len(jobs),
            np.full(len(jobs), -highspy.kHighsInf),
            np.log(at) - 1.0,
            len(index),
            starts[:-1].astype(np.int32),
            index.astype(np.int32),
            vals,
        )
        if status == highspy.HighsStatus.kError:
            raise RuntimeError("HiGHS refused a tangent of the Nash welfare LP")
        self.tangents += len(jobs)
        self.cut_job.extend(jobs.tolist())
        self.cut_at.extend(at.tolist())

    def solve(
        self,
        time_left: Callable[[], float],
        tol: float = DEFAULT_TOL,
        exclude: int | None = None,
    ) -> Welfare:
        """The program over every job but ``exclude``, to a relative gap of ``tol`` on the
        geometric mean (OPTIMAL), or the best allocation and bound when time runs out."""
        h, _nx = self.h, self.nx
        counted = np.ones(self.n, dtype=bool)
        if exclude is not None:
            counted[exclude] = False
            cols = self.job_cols[exclude].astype(np.int32)
            h.changeColsBounds(len(cols), cols, np.zeros(len(cols)), np.zeros(len(cols)))
            h.changeColCost(int(self.z[exclude]), 0.0)
        try:
            return self._iterate(time_left, tol, counted)
        finally:
            if exclude is not None:
                h.changeColsBounds(len(cols), cols, np.zeros(len(cols)), np.ones(len(cols)))
                h.changeColCost(int(self.z[exclude]), -1.0)

    def _iterate(self, time_left: Callable[[], float], tol: float, counted: np.ndarray) -> Welfare:
        h, nx = self.h, self.nx
        k = int(counted.sum())
        x_best = np.where(counted[self.first], self.start, 0.0)
        u_best = self.utility(x_best)
        value = _log_sum(u_best, counted)
        bound, lps, status = math.inf, 0, Status.FEASIBLE
        if not k:
            return Welfare(Status.OPTIMAL, x_best, u_best, 0.0, 0.0, 0, 0)
        every = np.arange(self.n)
        while lps < MAX_LPS:
            left = time_left()
            if left <= 0:
                break
            h.setOptionValue("time_limit", float(left))
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                break
            lps += 1
            sol = h.getSolution()
            bound = min(bound, self._dual_bound(np.asarray(sol.row_dual), counted))
            values = np.asarray(sol.col_value)
            x_lp, z_lp = values[:nx], values[nx:]
            u_lp = self.utility(self.rows.feasible(x_lp))
            x_best, u_best, value = self._towards(x_best, u_best, x_lp, counted)
            if math.isfinite(value) and math.expm1((bound - value) / k) <= tol:
                status = Status.OPTIMAL
                break
            # tangents the LP's point violates: at that point, and at the best allocation
            with np.errstate(divide="ignore"):
                over_lp = counted & (u_lp > 0) & (z_lp > np.log(u_lp) + CUT_TOL)
                with np.errstate(invalid="ignore"):
                    at_best = np.log(u_best) + (u_lp - u_best) / u_best
            over_best = counted & (u_best > 0) & (z_lp > at_best + CUT_TOL)
            if not over_lp.any() and not over_best.any():
                break  # nothing cuts the LP's point off: its gap is HiGHS's tolerance
            self.add_tangents(every[over_lp], u_lp[over_lp])
            self.add_tangents(every[over_best], u_best[over_best])
        if not math.isfinite(value):
            return Welfare(Status.NO_SOLUTION, None, None, value, bound, k, lps)
        return Welfare(status, x_best, u_best, value, bound, k, lps)

    def _dual_bound(self, row_dual: np.ndarray, counted: np.ndarray) -> float:
        """An upper bound on the LP's optimum (so on Σ log u) from any duals, whatever
        HiGHS's tolerances: y ≥ 0 on every row, each counted job's tangent duals scaled to sum
        to 1 (z_j's column, free, then holds exactly; an excluded job's are 0), and for the x
        columns, in [0, 1], the weak-duality term Σ_c max(0, −(Aᵀy)_c)."""
        y = np.maximum(0.0, -row_dual)  # ≤ rows of a minimisation: duals ≤ 0
        n, w = self.n, len(self.rows.capacity)
        y1, y2, mu = y[:n], y[n : n + w], y[n + w :]
        job, at = np.asarray(self.cut_job), np.asarray(self.cut_at)
        total = np.bincount(job, weights=mu, minlength=n)
        if np.any(total[counted] <= 0):
            return math.inf
        mu = np.where(counted[job], mu / np.where(total > 0, total, 1.0)[job], 0.0)
        slope = np.bincount(job, weights=mu / at, minlength=n)  # Σ_r μ_r / v_r per job
        rows = self.rows
        aty = y1[self.first] * rows.time + y2[rows.type] * rows.gpus - self.coef * slope[self.first]
        free = counted[self.first]  # an excluded job's columns are fixed at 0
        value = float(
            y1.sum()
            + y2 @ rows.capacity
            + mu @ (np.log(at) - 1.0)
            + np.maximum(0.0, -aty[free]).sum()
        )
        return value + ROUNDING * (1.0 + abs(value) + float(np.abs(mu @ np.log(at))))

    def _towards(self, x_best, u_best, x_new, counted):
        """The best allocation on the segment from ``x_best`` to ``x_new`` (made feasible)."""
        x_new = self.rows.feasible(x_new)
        u_new = self.utility(x_new)
        lam = _line_search(u_best[counted], u_new[counted])
        if lam > 0:
            x_best = self.rows.feasible(x_best + lam * (x_new - x_best))
            u_best = self.utility(x_best)
        return x_best, u_best, _log_sum(u_best, counted)


class _Rows:
    """C1 and C2 of the columns, to make an allocation exactly feasible."""

    def __init__(self, data: TimeshareData):
        cols = data.singles
        self.first, self.type = cols.first.astype(np.int64), cols.type.astype(np.int64)
        self.time, self.gpus = cols.time_first, cols.gpus
        self.n, self.capacity = data.num_jobs, data.capacity

    def feasible(self, x: np.ndarray) -> np.ndarray:
        """``x`` scaled down (per job, then per type) until C1 and C2 hold exactly."""
        x = np.clip(x, 0.0, 1.0)
        time = np.bincount(self.first, weights=self.time * x, minlength=self.n)
        x = x * np.minimum(1.0, 1.0 / np.maximum(time, 1e-300))[self.first]
        used = np.bincount(self.type, weights=self.gpus * x, minlength=len(self.capacity))
        return x * np.minimum(1.0, self.capacity / np.maximum(used, 1e-300))[self.type]


def _log_sum(u: np.ndarray, counted: np.ndarray) -> float:
    with np.errstate(divide="ignore"):
        return float(np.log(u[counted]).sum())


def _line_search(u0: np.ndarray, u1: np.ndarray) -> float:
    """argmax over λ ∈ [0, 1] of Σ log(u0 + λ (u1 − u0)) (u0 > 0 where it is finite)."""
    d = u1 - u0

    def slope(lam: float) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            s = d / (u0 + lam * d)
        return float(np.where(np.isnan(s), 0.0, s).sum())

    if not np.all(u0 > 0):
        return 1.0 if np.all(u1 > 0) else 0.0
    if slope(0.0) <= 0:
        return 0.0
    if np.all(u1 > 0) and slope(1.0) >= 0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(LINE_STEPS):
        mid = 0.5 * (lo + hi)
        if slope(mid) > 0:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class StrategyProof:
    """Gavel's strategy-proof mechanism (Cole, Gkatzelis and Goel's partial allocation): the
    Nash welfare allocation, each job's row scaled by its discount d_i."""

    status: Status
    #: the discounted allocation over ``data.singles`` (None when a program found none).
    x: np.ndarray | None
    #: the undiscounted Nash welfare allocation.
    welfare: Welfare
    #: d_i = Π_{k≠i} u_k / u^{−i}_k, clipped to [0, 1] (1 only for a lone job).
    discounts: np.ndarray | None
    #: a bound on |log d_i − log d*_i| over i, from the programs' gaps (the formulation).
    discount_log_error: float
    #: a bound on |log(d_i u_i) − log(d*_i u*_i)|: the discounted job's own rate depends only
    #: on the two programs' values, so it is as exact as their gaps.
    rate_log_error: float
    lps: int


def strategy_proof(
    data: TimeshareData, time_left: Callable[[], float], tol: float = DEFAULT_TOL
) -> StrategyProof:
    """The whole program, then one without each job (formulations/timeshare.md, "Strategy
    proof"). OPTIMAL only when every program closed its gap to ``tol``."""
    program = NashProgram(data)
    full = program.solve(time_left, tol)
    lps = full.lps
    if full.x is None or full.utility is None:
        return StrategyProof(full.status, None, full, None, math.inf, math.inf, lps)
    n = data.num_jobs
    logs = np.log(full.utility)
    others = float(logs.sum()) - logs  # Σ_{k≠i} log u_k
    g_full = full.bound - full.value
    spread = log_spread(g_full)
    discounts, error, rate_error, status = np.ones(n), 0.0, g_full, full.status
    if n > 1:
        for i in range(n):
            alone = program.solve(time_left, tol, exclude=i)
            lps += alone.lps
            if alone.x is None:
                return StrategyProof(alone.status, None, full, None, math.inf, math.inf, lps)
            if alone.status is not Status.OPTIMAL:
                status = Status.FEASIBLE
            discounts[i] = min(1.0, math.exp(others[i] - alone.value))
            g_alone = alone.bound - alone.value
            error = max(error, g_full + spread, spread + g_alone)
            rate_error = max(rate_error, g_alone)
    x = full.x * discounts[program.first]
    return StrategyProof(status, x, full, discounts, error, rate_error, lps)


def log_spread(gap: float) -> float:
    """The largest |log r| with r − 1 − log r ≤ ``gap`` (r < 1 is the wider side): how far
    any u_k of an allocation within ``gap`` of the optimum of Σ log u can be from its
    optimal value, in log (formulations/timeshare.md)."""
    if gap <= 0:
        return 0.0
    lo, hi = 0.0, max(1.0, 2.0 * (gap + 1.0))  # e^{−s} − 1 + s is increasing in s ≥ 0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if math.expm1(-mid) + mid <= gap:
            lo = mid
        else:
            hi = mid
    return hi + 1e-12  # the rounding of expm1(−s) + s near 0, to the safe side

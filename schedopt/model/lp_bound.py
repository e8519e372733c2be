"""A proven upper bound from a linear relaxation, safe against the LP solver's tolerances.

A decomposition method's bound must come from the whole instance (DESIGN.md, "Scale and
distribution"). A problem writes a relaxation of its first level as a maximisation
``max cᵀx : lo ≤ Ax ≤ hi, l ≤ x ≤ u`` with every column bounded; HiGHS solves it under the
caller's time share, and the bound is not HiGHS's objective but weak duality evaluated here
from its row duals ``π`` (any ``π`` gives one; the LP's optimal duals give the LP's value):

    cᵀx = πᵀAx + (c − Aᵀπ)ᵀx ≤ Σ_i max(π_i lo_i, π_i hi_i) + Σ_j max(d_j l_j, d_j u_j),

with ``d = c − Aᵀπ`` and a multiplier on an infinite side taken as 0. So the bound holds
whatever tolerances the LP was solved to, and even when the LP was interrupted (a weaker one:
the duals of the last iterate, or none).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from schedopt.backends.first_import import HIGHS, solver_in_time
from schedopt.backends.highs_signals import SignalGuard
from schedopt.core.stopping import Deadline, DeadlineReached

from .core import Model
from .terms import Backend, Expr, Sense


@dataclass(frozen=True)
class Relaxation:
    """``max cᵀx : lo ≤ Ax ≤ hi, lb ≤ x ≤ ub`` (every column bounded)."""

    c: np.ndarray
    #: A row by row: row i's entries are ``cols[starts[i]:starts[i+1]]`` with ``coefs``.
    starts: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lb: np.ndarray
    ub: np.ndarray


@dataclass(frozen=True)
class LpBound:
    #: A proven upper bound on the relaxation's optimum (weak duality), or None.
    bound: float | None
    #: The LP's point (None when HiGHS returned none), for guiding a heuristic.
    x: np.ndarray | None
    #: HiGHS solved the LP to optimality (else: interrupted, the bound is from the last duals).
    solved: bool
    seconds: float
    #: The row multipliers π of the bound (of ``max cᵀx``: π ≥ 0 on a binding ``≤`` row), or
    #: None.
    duals: np.ndarray | None = None


def relax(
    model: Model, objective: Expr, sense: Sense, extra: Sequence[tuple[Expr, float, float]] = ()
) -> Relaxation:
    """The LP relaxation of ``model`` (its MILP rows, integrality dropped) with ``objective``
    (a maximisation; a minimisation is negated) and ``extra`` rows ``lo ≤ expr ≤ hi``."""
    blocks = [b for b in model.blocks if Backend.MILP in b.backends and len(b)]
    starts, cols, coefs, lo, hi = [np.zeros(1, dtype=np.int64)], [], [], [], []
    offset = 0
    for b in blocks:
        starts.append(b.starts[1:] + offset)
        offset += int(b.starts[-1])
        cols.append(b.cols)
        coefs.append(b.coefs)
        lo.append(b.lo)
        hi.append(b.hi)
    for expr, low, high in extra:
        starts.append(np.array([offset + len(expr.cols)]))
        offset += len(expr.cols)
        cols.append(np.asarray(expr.cols))
        coefs.append(np.asarray(expr.coefs, dtype=np.float64))
        lo.append(np.array([low - expr.constant]))
        hi.append(np.array([high - expr.constant]))
    return Relaxation(
        c=relax_objective(model, objective, sense),
        starts=np.concatenate(starts).astype(np.int64),
        cols=np.concatenate(cols).astype(np.int64) if cols else np.zeros(0, dtype=np.int64),
        coefs=np.concatenate(coefs) if coefs else np.zeros(0),
        lo=np.concatenate(lo) if lo else np.zeros(0),
        hi=np.concatenate(hi) if hi else np.zeros(0),
        lb=model.lb,
        ub=model.ub,
    )


def relax_objective(model: Model, objective: Expr, sense: Sense) -> np.ndarray:
    """``c`` of :func:`relax` for ``objective`` (a maximisation; a minimisation negated)."""
    c = np.zeros(model.num_cols)
    np.add.at(c, np.asarray(objective.cols, dtype=np.int64), np.asarray(objective.coefs))
    return c if sense is Sense.MAXIMIZE else -c


def dual_bound(r: Relaxation, pi: np.ndarray) -> float:
    """Weak duality: an upper bound on ``max cᵀx`` for any row multipliers ``pi``."""
    pi = np.where((pi > 0) & ~np.isfinite(r.hi), 0.0, pi)
    pi = np.where((pi < 0) & ~np.isfinite(r.lo), 0.0, pi)
    rows = np.where(pi > 0, pi * np.where(np.isfinite(r.hi), r.hi, 0.0), 0.0) + np.where(
        pi < 0, pi * np.where(np.isfinite(r.lo), r.lo, 0.0), 0.0
    )
    per_entry = np.repeat(pi, np.diff(r.starts)) * r.coefs
    d = r.c - np.bincount(r.cols, weights=per_entry, minlength=len(r.c))
    cols = np.maximum(d * r.lb, d * r.ub)
    return float(rows.sum() + cols.sum())


def _highs_of(r: Relaxation) -> Any:
    """A quiet HiGHS holding ``max cᵀx`` over ``r`` (as ``min −cᵀx``), not yet run."""
    import highspy  # imported when first solved (start-up imports no solver)

    from schedopt.backends.highs_quiet import quiet_highs

    h = quiet_highs()
    # (no "threads": HiGHS fixes its thread pool at a process's first run and fails every
    # later run that asks for another size; its simplex and IPM run serially here anyway)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(r.c), len(r.starts) - 1
    lp.col_cost_ = -r.c  # HiGHS minimises −cᵀx
    lp.col_lower_, lp.col_upper_ = r.lb, r.ub
    lp.row_lower_ = np.where(np.isfinite(r.lo), r.lo, -highspy.kHighsInf)
    lp.row_upper_ = np.where(np.isfinite(r.hi), r.hi, highspy.kHighsInf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = r.starts.astype(np.int32)
    lp.a_matrix_.index_ = r.cols.astype(np.int32)
    lp.a_matrix_.value_ = r.coefs.astype(np.float64)
    h.passModel(lp)
    return h


def highs_of(r: Relaxation, integer: np.ndarray | None = None) -> Any:
    """A quiet HiGHS holding ``max cᵀx`` over ``r`` (as ``min −cᵀx``), not yet run; with
    ``integer`` (a mask by column) those columns integral, so a MILP over the same rows."""
    h = _highs_of(r)
    if integer is not None and len(r.c):
        n = len(r.c)
        h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), np.asarray(integer, dtype=bool).astype(np.uint8)
        )
    return h


def solve_relaxation(r: Relaxation, time_limit_s: float, *, interior: bool = False) -> LpBound:
    """Solve ``r`` with HiGHS (one thread) within ``time_limit_s``: the dual simplex, or with
    ``interior`` the interior point method without crossover (4.5 s on admission's LP at
    1,024 GPUs × 3,200 jobs where the dual simplex had not finished after 8 s, load 7)."""
    started = time.perf_counter()
    m = len(r.starts) - 1
    # no time, or not for HiGHS's first import (gated by the LP's own limit): no bound
    if time_limit_s <= 0.0 or not solver_in_time(HIGHS, Deadline.after(time_limit_s)):
        return LpBound(None, None, False, time.perf_counter() - started)
    import highspy  # imported when first solved (start-up imports no solver)

    h = _highs_of(r)
    h.setOptionValue("time_limit", max(0.01, time_limit_s))
    if interior:
        # Without crossover its point is not a vertex (a worse guide for rounding), and its
        # duals need not be exactly optimal: the bound is weak duality at whatever it returns.
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "off")
    stop_at = started + max(0.01, time_limit_s)

    guard = SignalGuard()  # a Ctrl-C stops the LP and reaches the caller (highs_signals.py)
    interrupt = guard.stop_at(lambda: stop_at)
    h.cbSimplexInterrupt.subscribe(interrupt)
    h.cbIpmInterrupt.subscribe(interrupt)
    with guard.deferring():
        h.run()
    solved = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    sol = h.getSolution()
    bound: float | None = None
    x: np.ndarray | None = None
    duals: np.ndarray | None = None
    if sol.dual_valid:
        # HiGHS's duals are those of min −cᵀx: −c = Aᵀy + reduced costs, so π = −y.
        duals = -np.asarray(sol.row_dual, dtype=np.float64)
        value = dual_bound(r, duals)
        bound = value if math.isfinite(value) else None
    if sol.value_valid:
        x = np.asarray(sol.col_value, dtype=np.float64)
    if bound is None:
        bound = dual_bound(r, np.zeros(m))  # every column at its best bound
    return LpBound(bound, x, solved, time.perf_counter() - started, duals)


class StagedLp:
    """One HiGHS LP solved in stages: a new objective and held rows between stages, each
    stage warm-started from the last basis (a lexicographic relaxation, L1 then L2 held...).
    Only points are returned (no bound): for guiding a heuristic. On 2,500-job fair-share
    parts the second and third stages cost a fraction of a rebuild."""

    def __init__(self, r: Relaxation):
        import highspy  # imported when first solved (start-up imports no solver)

        self._hs = highspy
        self.n = len(r.c)
        h = _highs_of(r)
        self.stop_at = math.inf
        self._guard = SignalGuard()  # a Ctrl-C stops the LP and reaches the caller
        h.cbSimplexInterrupt.subscribe(self._guard.stop_at(lambda: self.stop_at))
        self.h = h

    def maximise(
        self, c: np.ndarray, time_limit_s: float, *, primal: bool = False
    ) -> np.ndarray | None:
        """Maximise ``cᵀx`` over the rows so far; the optimal point, or None (not solved in
        ``time_limit_s``). ``primal``: by the primal simplex (else HiGHS's choice, the dual),
        for a stage whose held rows the last point already satisfies, so that the last basis
        stays feasible: on fair share's parts the L3 stage took 0.2 s instead of 0.5-0.7 s
        (16,384 GPUs × 20,000 jobs, 4 of 8 parts; the L2 stage was slower so, 1.0 s for 0.4 s)."""
        if time_limit_s <= 0.0:
            return None
        h = self.h
        h.setOptionValue("simplex_strategy", 4 if primal else 1)
        h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), -np.asarray(c, dtype=float))
        # (HiGHS's time_limit counts from its first run: this stage's limit comes on top)
        h.setOptionValue("time_limit", h.getRunTime() + max(0.01, time_limit_s))
        self.stop_at = time.perf_counter() + max(0.01, time_limit_s)
        with self._guard.deferring():
            h.run()
        if h.getModelStatus() != self._hs.HighsModelStatus.kOptimal:
            return None
        return np.asarray(h.getSolution().col_value, dtype=np.float64)

    def hold(self, cols: np.ndarray, coefs: np.ndarray, lo: float, hi: float) -> None:
        """Add the row ``lo ≤ Σ coefs·x[cols] ≤ hi``."""
        inf = self._hs.kHighsInf
        self.h.addRow(
            lo if math.isfinite(lo) else -inf,
            hi if math.isfinite(hi) else inf,
            len(cols),
            np.asarray(cols, dtype=np.int32),
            np.asarray(coefs, dtype=np.float64),
        )


#: ``oracle(λ)``: for multipliers ``λ ≥ 0`` on the relaxed rows ``Ax ≤ b``, the optimum of
#: ``max (cᵀx − λᵀAx)`` over the rest of the problem (or a value above it) and ``Ax`` at it.
Oracle = Callable[[np.ndarray], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class LagrangianBound:
    #: The least ``L(λ) = λᵀb + oracle(λ)`` seen: an upper bound on ``max cᵀx``.
    bound: float
    #: The multipliers that gave it.
    multipliers: np.ndarray
    evaluations: int


def lagrangian_bound(
    rhs: np.ndarray,
    oracle: Oracle,
    start: np.ndarray,
    stop_at: float,
    *,
    target: float | None = None,
    max_steps: int = 50,
    step: float = 1.0,
    patience: int | None = None,
) -> LagrangianBound:
    """Weak duality for ``max cᵀx : Ax ≤ b, x ∈ X`` by relaxing ``Ax ≤ b``: every ``λ ≥ 0``
    gives ``cᵀx ≤ cᵀx + λᵀ(b − Ax) ≤ λᵀb + max_{x∈X}(cᵀx − λᵀAx) = L(λ)`` for each feasible
    ``x``. ``L`` is evaluated at ``start`` (e.g. an LP's duals on those rows), then improved by
    projected subgradient steps (Polyak's rule towards ``target``, a value a plan reaches, or
    5% under the best ``L``) until ``max_steps`` or ``stop_at`` (``time.perf_counter()``).
    The least ``L`` is returned; it holds whatever the steps did (each is an exact ``L``). The
    oracle may raise :class:`DeadlineReached`: at the first evaluation it propagates (no
    bound), later the best so far is returned. With ``patience``, the steps stop after that
    many in a row that did not lower ``L`` (their evaluations cost the caller's time)."""
    lam = np.maximum(np.asarray(start, dtype=np.float64), 0.0)
    value, used = oracle(lam)
    best = LagrangianBound(float(lam @ rhs + value), lam.copy(), 1)
    current = best.bound
    theta = step
    idle = missed = 0
    for _ in range(max_steps):
        if patience is not None and missed >= patience:
            break
        if time.perf_counter() >= stop_at:
            break
        g = rhs - used  # a subgradient of L at λ
        norm = float(g @ g)
        if norm <= 1e-12:
            break  # λ is optimal for L: the relaxed rows hold with equality where priced
        aim = target if target is not None and target < best.bound else 0.95 * best.bound
        lam = np.maximum(lam - theta * (current - aim) / norm * g, 0.0)
        try:
            value, used = oracle(lam)
        except DeadlineReached:  # the step did not finish in time: the best L stands
            break
        current = float(lam @ rhs + value)
        if current < best.bound:
            best = LagrangianBound(current, lam.copy(), best.evaluations + 1)
            idle = missed = 0
        else:
            best = LagrangianBound(best.bound, best.multipliers, best.evaluations + 1)
            idle += 1
            missed += 1
            if idle >= 3:
                theta, idle = theta / 2, 0
    return best


#: Kelley's steps stop when the cuts promise less than this much more (relative).
CUTS_REL_TOL = 1e-6


def cutting_plane_ascent(
    evaluate: Callable[[np.ndarray], tuple[float, np.ndarray]],
    start: np.ndarray,
    stop_at: float,
    *,
    max_steps: int = 60,
    stall_steps: int = 0,
    stall_tol: float = 0.0,
) -> tuple[float, np.ndarray]:
    """Maximise a concave function of ``y ≥ 0`` from its values and supergradients
    (``evaluate(y)`` gives both): Kelley's cutting planes, each step the best point of the
    cuts so far within a box around the best point met (the box widens by half after a step
    that improved, halves after one that did not; its unit is ``|start|`` per coordinate, at
    least 10⁻³). Until ``max_steps`` or ``stop_at`` (``time.perf_counter()``); the best value
    met and its point. For a Lagrangian dual every evaluation is a valid bound: a cut from an
    inexact supergradient only steers the search. (Fair share's B3L, four multipliers: 99.9%
    of the LP's value in 40 steps where coordinate-wise golden sections stalled at 94%.)
    ``stall_steps`` > 0: also stop once the best value rose by at most ``stall_tol`` of it
    over the last ``stall_steps`` steps."""
    import highspy  # imported when first solved (start-up imports no solver)

    from schedopt.backends.highs_quiet import quiet_highs

    y = np.maximum(np.asarray(start, dtype=np.float64), 0.0)
    n = len(y)
    unit = np.maximum(np.abs(y), 1e-3)
    best, best_y = -math.inf, y.copy()
    width = 1.0
    idx = np.arange(n + 1, dtype=np.int32)
    history: list[float] = []
    h: Any = None
    for _ in range(max_steps):
        if time.perf_counter() >= stop_at:
            break
        if stall_steps and len(history) > stall_steps:
            old = history[-1 - stall_steps]
            if best - old <= stall_tol * max(1.0, abs(best)):
                break
        value, grad = evaluate(y)
        g = np.asarray(grad, dtype=np.float64)
        if value > best:
            best, best_y, width = value, y.copy(), min(1.5 * width, 4.0)
        else:
            width *= 0.5
        history.append(best)
        # max θ : θ ≤ value_k + grad_k·(y − y_k) for every cut, y in the box: one model, this
        # step's cut added and the box moved, passed again whole (HiGHS scales an added row by
        # the columns' old factors), so a new model's LP and point in a third of the time
        lower = np.append(np.maximum(0.0, best_y - width * unit), -highspy.kHighsInf)
        upper = np.append(best_y + width * unit, highspy.kHighsInf)
        if h is None:
            h = quiet_highs()
            h.addVars(n + 1, lower, upper)
            h.changeColsCost(n + 1, idx, np.append(np.zeros(n), -1.0))
        else:
            h.changeColsBounds(n + 1, idx, lower, upper)
        h.addRow(-highspy.kHighsInf, value - float(g @ y), n + 1, idx, np.append(-g, 1.0))
        h.passModel(h.getLp())
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        point = np.asarray(h.getSolution().col_value, dtype=np.float64)
        if point[n] - best <= CUTS_REL_TOL * max(1.0, abs(best)):
            break  # the cuts promise no more within the box: converged there
        y = np.maximum(point[:n], 0.0)
    return best, best_y


__all__ = [
    "LagrangianBound",
    "LpBound",
    "Oracle",
    "Relaxation",
    "StagedLp",
    "cutting_plane_ascent",
    "dual_bound",
    "highs_of",
    "lagrangian_bound",
    "relax",
    "relax_objective",
    "solve_relaxation",
]

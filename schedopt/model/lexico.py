"""One lexicographic driver for every problem and back-end ("How the order is kept").

Levels are solved in turn on one emitted model. Each gets a share of the time left
(:func:`schedopt.core.lexico.level_time_shares`); a solved level is fixed at its value within its
tolerance and the next starts from the point found. A level counts as proven only on the
solver's own proof. What differs between problems on purpose lives in :class:`Hooks`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from schedopt.backends.milp_run import SURFACED_STATS
from schedopt.core.lexico import level_time_shares
from schedopt.core.options import SolveOptions
from schedopt.core.progress import Progress, for_level
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .core import Model
from .session import LevelRun, Session, snap_integers
from .terms import Backend, Level, RowBlock, Sense

#: Below this a level is not started (a solver cannot even load the model in less).
MIN_LEVEL_S = 0.01


class Hooks:
    """Per-problem departures from the plain loop. Each override says why, with the measurement
    behind it, where it is defined."""

    def hint_first_level(self, method: str) -> bool:
        """Give the caller's hint to the solver for the first level (else it only competes)."""
        return True

    def after_level(self, index: int, values: np.ndarray) -> np.ndarray:
        """The start for the next level, from the point that solved level ``index``."""
        return values

    def fix_rows(
        self, index: int, level: Level, value: float, values: np.ndarray
    ) -> list[RowBlock] | None:
        """Rows keeping a solved level at its value; None: the level's own tolerance rule."""
        return None

    def reject(self, index: int, values: np.ndarray) -> str | None:
        """Why a solver's point must not be trusted (the levels so far then stand), or None."""
        return None

    def first_bound(self, method: str, bound: float | None) -> float | None:
        """The first level's bound as the instance's objective sees it."""
        return bound

    #: CP-SAT's linearization_level for this problem's models.
    cpsat_linearization_level = 1

    def level_gap(self, index: int, method: str, gap: float) -> float:
        """The relative gap at which level ``index`` may stop (default: ``options.mip_gap``)."""
        return gap

    #: The first level's share of the time left (:func:`level_time_shares`).
    first_level_share = 0.8


@dataclass
class LexResult:
    status: Status
    values: np.ndarray | None = None
    bound: float | None = None
    proven: list[bool] = field(default_factory=list)
    solve_s: float = 0.0
    stats: dict[str, float | str] = field(default_factory=dict)
    #: The caller's hint beat the solver on the first level and was kept.
    hint_won: bool = False


def fix_block(level: Level, value: float, backend: Backend | None = None) -> RowBlock:
    """``expr >= value - slack`` (maximise) or ``expr <= value + slack`` (minimise), in the
    expression ``backend`` solved the level with (None: every back-end, for a level with one
    expression)."""
    if backend is None and level.cpsat_expr is not None:
        raise ValueError(f"{level.name} has a CP-SAT expression: say which back-end solved it")
    slack = level.slack(value)
    e = level.expr if backend is None else level.expr_for(backend)
    lo, hi = -np.inf, np.inf
    if level.sense is Sense.MAXIMIZE:
        lo = value - slack - e.constant
    else:
        hi = value + slack - e.constant
    return RowBlock(
        f"fix_{level.name}",
        np.array([0, len(e.cols)]),
        e.cols,
        e.coefs,
        np.array([lo]),
        np.array([hi]),
        cpsat_scale=level.cpsat_scale,
        backends=frozenset(Backend) if backend is None else frozenset({backend}),
    )


def hint_on_model(model: Model, hint: np.ndarray | None, backend: Backend) -> bool:
    """Is the hint a point of the model (so it may stand in for the solver's answer)?"""
    return hint is not None and not model.violated_rows(hint, backend=backend)


def solve_levels(
    model: Model,
    session: Session,
    options: SolveOptions,
    deadline: Deadline,
    hooks: Hooks,
    hint: np.ndarray | None = None,
) -> LexResult:
    levels = model.levels
    shares = level_time_shares(len(levels), hooks.first_level_share)
    out = LexResult(Status.NO_SOLUTION, proven=[False] * len(levels))
    integer, lb, ub = model.kinds(), model.lb, model.ub
    hint_ok = hint_on_model(model, hint, session.kind)
    fixed_left = options.time_limit_s  # deterministic mode: fixed shares of the limit
    det = options.deterministic
    handover = 0.0
    for i, level in enumerate(levels):
        expr = level.expr_for(session.kind)
        if i and expr.is_constant:  # nothing left to decide at this level
            out.proven[i] = True
            continue
        if det:
            budget = fixed_left * shares[i]
            fixed_left -= budget
        else:  # what handing the model over took is kept back from each level
            budget = deadline.share(shares[i], reserve_s=handover)
        # (in deterministic mode the shares are fixed and the handover's wall time does not
        # decide whether a level runs)
        if out.values is not None and budget <= max(MIN_LEVEL_S, 0.0 if det else 1.5 * handover):
            break  # the next level could not even be handed over within its share
        session.set_level(level)
        if i == 0:
            give = hint_ok and hooks.hint_first_level(session.method)
            session.set_hint(hint if give else None)
        started = time.perf_counter()
        gap = hooks.level_gap(i, session.method, options.mip_gap)
        report = for_level(options.on_progress, i + 1, len(levels), level.name)
        level_options = options
        if gap != options.mip_gap or report is not None:
            level_options = dataclasses.replace(options, mip_gap=gap, on_progress=report)
        if report is not None:
            report(Progress(session.method, "started", milestone=True))
        run = session.run(max(budget, MIN_LEVEL_S), level_options)
        run = _checked(model, session.kind, run)
        if report is not None:
            report(_ended(session.method, run))
        out.solve_s += time.perf_counter() - started
        handover = max(handover, run.handover_s)
        _record(out.stats, level.name, run)
        if i == 0:
            if run.status is Status.INFEASIBLE:
                out.status = Status.INFEASIBLE
                return out
            out.bound = hooks.first_bound(session.method, run.bound)
            run = _hint_if_better(level, session.kind, run, hint if hint_ok else None, out)
            if not run.status.has_solution:
                return out
        elif not run.status.has_solution:
            break  # keep the previous level's point
        assert run.values is not None
        why = hooks.reject(i, run.values)
        if why:
            out.stats[f"{level.name}_status"] = f"rejected: {why}"
            break
        out.proven[i] = run.status is Status.OPTIMAL
        out.values = run.values
        value = expr.value(run.values) if run.objective is None else run.objective
        fixed = hooks.fix_rows(i, level, value, run.values)
        for block in [fix_block(level, value, session.kind)] if fixed is None else fixed:
            session.add_block(block)
        snapped = snap_integers(run.values, integer, lb, ub)
        start = hooks.after_level(i, snapped)
        if start is not snapped and _keeps(model, level, session.kind, run.values, start):
            out.values = start  # a hook's better start for the next level is a better answer
        session.set_hint(start)
    if out.values is not None:
        out.status = Status.OPTIMAL if all(out.proven) else Status.FEASIBLE
    return out


def _ended(method: str, run: LevelRun) -> Progress:
    """The event of a level's end: proven, stopped with a point, or with none."""
    phase = {
        Status.OPTIMAL: "proven optimal",
        Status.INFEASIBLE: "proven infeasible",
        Status.FEASIBLE: "stopped (time share used)",
    }.get(run.status, "stopped without a solution")
    return Progress(method, phase, incumbent=run.objective, bound=run.bound, milestone=True)


def _keeps(model: Model, level: Level, kind: Backend, found: np.ndarray, start: np.ndarray) -> bool:
    """Is the hook's start a point of the model no worse than ``found`` on the solved level?"""
    if model.violated_rows(start, backend=kind):
        return False
    expr = level.expr_for(kind)
    return not level.better(expr.value(found), expr.value(start))


def _checked(model: Model, kind: Backend, run: LevelRun) -> LevelRun:
    """An unproven point of an LP is kept only if it satisfies the model's rows: CBC
    interrupted in the middle of an LP (timeshare at 2,048 jobs, 0.5 s) returned columns that
    run jobs twice the round, and called them feasible. (A MIP's incumbent is feasible by
    construction; checking it would cost time the large MIPs do not have.)"""
    if run.status is not Status.FEASIBLE or run.values is None or model.kinds().any():
        return run
    broken = model.violated_rows(run.values, backend=kind)
    if not broken:
        return run
    stats = {**run.stats, "rejected_point": "breaks " + ", ".join(broken)}
    return dataclasses.replace(run, status=Status.NO_SOLUTION, values=None, stats=stats)


def _record(stats: dict[str, float | str], name: str, run: LevelRun) -> None:
    stats[f"{name}_status"] = run.status.value
    for key in SURFACED_STATS:  # how CBC ended, when not normally
        if run.stats.get(key, "normal") != "normal":
            stats[f"{name}_{key}"] = run.stats[key]


def _hint_if_better(
    level: Level, kind: Backend, run: LevelRun, hint: np.ndarray | None, out: LexResult
) -> LevelRun:
    """A hint better than what the solver found on the first level is the first level's
    incumbent: optimal if it meets the solver's bound. A hint never makes the answer worse."""
    if hint is None:
        return run
    expr = level.expr_for(kind)
    hinted = expr.value(hint)
    found = None if run.values is None else expr.value(run.values)
    if found is not None and not level.better(hinted, found):
        return run
    met = run.bound is not None and not level.better(run.bound, hinted)
    out.hint_won = True
    out.stats[f"{level.name}_incumbent"] = "hint"
    status = Status.OPTIMAL if met else Status.FEASIBLE
    return LevelRun(status, hinted, run.bound, hint.copy(), run.stats, run.handover_s)

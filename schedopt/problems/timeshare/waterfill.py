"""Water filling (Gavel's ``MaxMinFairnessWaterFillingPolicy*``): the leximin allocation of the
weighted throughputs a_j ρ_j, by progressive filling over LPs (formulations/timeshare.md,
"Water filling").

Each LP maximises t with t ≤ a_j ρ_j for the jobs still rising and a_j ρ_j ≥ f_j for the jobs
frozen at their level f_j. A job whose row has a nonzero dual in an optimum is tight in every
optimum (complementary slackness), so it cannot rise above t*: it is frozen at t*. At least
one row has a nonzero dual (they sum to 1), so every LP freezes a job, and at most |J| LPs
give the leximin vector, which is unique (the polytope is convex); HiGHS re-solves each from
the last basis. Gavel instead finds bottlenecks with a MILP per level, with a slack of 1.0001
and an ε of 1e-5.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np

from schedopt.core.status import Status
from schedopt.model.emit_highs import HighsSession

from .columns import Columns
from .data import TimeshareData
from .model import build_model

#: A row's dual counts as nonzero beyond this.
DUAL_TOL = 1e-9
#: A job is frozen this much (relative) below the LP's t*, so that later LPs stay feasible
#: with HiGHS's tolerances.
FREEZE_REL = 1e-9


@dataclass(frozen=True)
class WaterFill:
    status: Status
    #: x over the columns (``data.singles`` by default), or None.
    x: np.ndarray | None
    #: each job's level (a_j ρ_j at the leximin point).
    levels: np.ndarray | None
    lps: int


def water_fill(
    data: TimeshareData, time_left: Callable[[], float], columns: Columns | None = None
) -> WaterFill:
    """The leximin allocation of ``data`` (``data.weights()`` as a_j) over ``columns`` (jobs
    alone by default; with pairs, Gavel's packed variant)."""
    weights = data.weights()
    tm = build_model(data, weights, data.singles if columns is None else columns, levels=1)
    session = HighsSession(tm.model)
    try:
        return _fill(session.highs, tm, data.num_jobs, data.num_types, time_left)
    finally:
        session.close()


def _fill(h, tm, n: int, types: int, time_left: Callable[[], float]) -> WaterFill:
    t_col = tm.t[()]
    x_cols = np.asarray(list(tm.x.cols), dtype=np.int64)
    c3 = n + types  # C1 (n rows), C2 (types rows), then C3 (n rows): model.py's order
    h.changeColCost(t_col, -1.0)  # HiGHS minimises
    rising = np.ones(n, dtype=bool)
    levels = np.zeros(n)
    lps = 0
    values = None
    while rising.any():
        left = time_left()
        if left <= 0:
            return WaterFill(Status.FEASIBLE, None, None, lps)
        h.setOptionValue("time_limit", float(left))
        h.run()
        lps += 1
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return WaterFill(Status.NO_SOLUTION, None, None, lps)
        sol = h.getSolution()
        values = np.asarray(sol.col_value)
        t_star = float(values[t_col])
        duals = np.abs(np.asarray(sol.row_dual)[c3 : c3 + n])
        tight = rising & (duals > DUAL_TOL)
        if not tight.any():  # numerically flat duals: the largest one is still a proof's
            tight = np.zeros(n, dtype=bool)
            tight[np.argmax(np.where(rising, duals, -1.0))] = True
        floor = t_star - FREEZE_REL * max(1.0, abs(t_star))
        for j in np.flatnonzero(tight):
            # C3 row j becomes a_j ρ_j ≥ floor: −a_j ρ_j ≤ −floor, without t
            h.changeCoeff(int(c3 + j), int(t_col), 0.0)
            h.changeRowBounds(int(c3 + j), -highspy.kHighsInf, -floor)
        levels[tight] = t_star
        rising &= ~tight
    assert values is not None
    return WaterFill(Status.OPTIMAL, values[x_cols], levels, lps)

"""Water filling with Gavel's priority reweighting by entity (``max_min_fairness_water_filling.py``
with ``entity_weights``, ``entity_to_job_mapping`` and ``priority_reweighting_policies``):
formulations/timeshare.md, "Water filling", "Entities".

Jobs belong to entities (users, teams), each with a weight E_e and a rule. Every job still
rising rises at a rate set by its current weight w_j: ``fairness`` splits E_e among the
entity's jobs not yet frozen in proportion to their priorities; ``fifo`` gives E_e to the first
of them (in the order of the job ids) and 0 to the rest, which wait at their level. When jobs
freeze, the weights of their entity's other jobs are recomputed, and filling goes on.

Each phase is one LP over the model of ``model.py``: with base weights a_j (the policy's) and
u_j = a_j ρ_j, row j of C3 reads γ_j t − u_j ≤ −U_j, where U_j is the job's level so far and
γ_j = w_j / π_j its rate (0: frozen or waiting). The LP maximises t; every rising job rises by
γ_j t*; a rising job whose row has a nonzero dual is tight in every optimum, so it cannot rise
further: it is frozen (complementary slackness, as in ``waterfill.py``). Each phase freezes at
least one job, so at most |J| LPs, warm-started from the last basis.
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
from .waterfill import DUAL_TOL, FREEZE_REL, WaterFill

#: A phase's t* this close to 0 is 0 (HiGHS's primal tolerance is 1e-7): rising jobs that
#: cannot rise are not lifted by it, nor frozen at a level no allocation has.
ZERO_RISE = 1e-7


@dataclass(frozen=True)
class Entities:
    """Each job row's entity, and each entity's weight E_e > 0 and rule."""

    #: job row → entity index
    entity_of: np.ndarray
    #: E_e per entity
    weight: np.ndarray
    #: per entity: True for ``fifo``, False for ``fairness``
    fifo: np.ndarray
    #: per job row: its position among its entity's jobs (``fifo`` serves the lowest first)
    rank: np.ndarray

    def priorities(self, priority: np.ndarray, frozen: np.ndarray) -> np.ndarray:
        """w_j of every job given the frozen ones (0 for a frozen or waiting job)."""
        n = len(self.entity_of)
        live = ~frozen
        e = self.entity_of
        share = np.bincount(e, weights=np.where(live, priority, 0.0), minlength=len(self.weight))
        with np.errstate(divide="ignore", invalid="ignore"):
            fair = self.weight[e] * priority / share[e]
        # fifo: the live job of lowest rank in its entity
        first = np.full(len(self.weight), np.iinfo(np.int64).max)
        np.minimum.at(first, e[live], self.rank[live])
        head = live & (self.rank == first[e])
        out = np.where(self.fifo[e], np.where(head, self.weight[e], 0.0), fair)
        out = np.where(live, out, 0.0)
        return np.nan_to_num(out, nan=0.0, posinf=0.0)[:n]


def water_fill_entities(
    data: TimeshareData,
    entities: Entities,
    time_left: Callable[[], float],
    columns: Columns | None = None,
) -> WaterFill:
    """Progressive filling with Gavel's reweighting (``levels``: each job's u_j = a_j ρ_j)."""
    weights = data.weights()
    tm = build_model(data, weights, data.singles if columns is None else columns, levels=1)
    session = HighsSession(tm.model)
    try:
        return _fill(session.highs, tm, data, entities, time_left)
    finally:
        session.close()


def _fill(h, tm, data: TimeshareData, entities: Entities, time_left) -> WaterFill:
    n, t_col = data.num_jobs, tm.t[()]
    x_cols = np.asarray(list(tm.x.cols), dtype=np.int64)
    c3 = n + data.num_types  # C1 (n rows), C2 (types rows), then C3 (n rows): model.py's order
    h.changeColCost(t_col, -1.0)  # HiGHS minimises
    # t may go below 0: a phase then stays feasible whatever HiGHS's tolerances did to the
    # levels reached before (the rising jobs' rows relax; t* is ≥ 0 up to those tolerances)
    h.changeColBounds(t_col, -highspy.kHighsInf, highspy.kHighsInf)
    frozen = np.zeros(n, dtype=bool)
    level = np.zeros(n)  # U_j
    lps, values = 0, None
    rows = (c3 + np.arange(n)).astype(np.int32)
    while not frozen.all():
        rate = entities.priorities(data.priority, frozen) / data.priority  # γ_j
        rising = rate > 0
        if not rising.any():  # nothing can rise (cannot happen with Gavel's rules): done
            break
        for j in range(n):  # γ_j t − u_j ≤ −U_j (γ_j = 0: frozen or waiting at U_j)
            h.changeCoeff(int(rows[j]), int(t_col), float(rate[j]))
        left = time_left()
        if left <= 0:
            return WaterFill(Status.FEASIBLE, None, None, lps)
        solved, runs, level = _solve_phase(h, rows, level, rising, time_left)
        lps += runs
        if not solved:
            return WaterFill(Status.NO_SOLUTION, None, None, lps)
        sol = h.getSolution()
        values = np.asarray(sol.col_value)
        t_star = float(values[t_col])
        if abs(t_star) <= ZERO_RISE:  # no job can rise: HiGHS's t* is its tolerance, not a rise
            t_star = 0.0
        duals = np.abs(np.asarray(sol.row_dual)[c3 : c3 + n])
        tight = rising & (duals > DUAL_TOL)
        if not tight.any():  # numerically flat duals: the largest one is still a proof's
            tight = np.zeros(n, dtype=bool)
            tight[np.argmax(np.where(rising, duals, -1.0))] = True
        # every rising job reached U_j + γ_j t* (a little below, for HiGHS's tolerances)
        reached = level + rate * t_star
        level = np.where(rising, reached - FREEZE_REL * np.maximum(1.0, np.abs(reached)), level)
        frozen |= tight
    if values is None:  # no job at all
        return WaterFill(Status.OPTIMAL, np.zeros(len(x_cols)), level, 0)
    return WaterFill(Status.OPTIMAL, values[x_cols], level, lps)


#: Retries of a phase HiGHS calls infeasible: afresh without presolve (HiGHS 1.16's presolve has
#: called feasible phases infeasible), then with the levels of the jobs not rising lowered by
#: this much (relative to max(1, level)): levels reached at HiGHS's tolerances (1e-7), such as
#: a job frozen at 1e-8 that can have 0, are not kept beyond them.
RELAX = (0.0, 1e-7, 1e-6)


def _solve_phase(h, rows, level, rising, time_left) -> tuple[bool, int, np.ndarray]:
    """Solve the phase LP (rows γ_j t − u_j ≤ −U_j): whether HiGHS proved an optimum, the LPs
    run, and the levels it was proved with."""
    n, runs = len(rows), 0
    for attempt, relax in enumerate((None, *RELAX)):
        left = time_left()
        if left <= 0 and runs:
            return False, runs, level
        floor = level if not relax else level - relax * np.maximum(1.0, np.abs(level)) * ~rising
        h.changeRowsBounds(n, rows, np.full(n, -highspy.kHighsInf), -floor)
        if attempt:
            h.clearSolver()
            h.setOptionValue("presolve", "off")
        h.setOptionValue("time_limit", float(max(left, 1e-3)))
        h.run()
        h.setOptionValue("presolve", "choose")
        runs += 1
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            return True, runs, floor
    return False, runs, level

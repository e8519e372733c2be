"""Space sharing by column generation on HiGHS (formulations/timeshare.md, "Space sharing").

The LP starts with every job alone; each round adds the pair columns whose reduced cost under
the LP's duals says they would raise the objective, and HiGHS re-solves from its basis. When
no column prices in, the restricted LP's optimum is the whole LP's (LP duality), so the
statuses are the solver's proofs as for the full model. Level 2 is priced the same way with
its own costs.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model.emit_highs import HighsSession

from .codec import shares_of
from .columns import Columns
from .data import TimeshareData
from .model import L1_REL_TOL, build_model

#: A column prices in when it would improve the objective by more than this per unit.
PRICE_TOL = 1e-9
#: Columns added per round, at most this many per job (the most negative reduced costs).
PER_ROUND_PER_JOB = 2


class _Master:
    """The restricted LP in HiGHS, with the columns it holds."""

    def __init__(
        self, data: TimeshareData, weights: np.ndarray, options: SolveOptions, pairs: Columns
    ):
        self.data, self.weights, self.options = data, weights, options
        tm = build_model(data, weights, data.singles, levels=1)
        self.session = HighsSession(tm.model, verbose=options.verbose)
        self.h = self.session.highs
        self.t_col = tm.t[()]
        self.x_cols = list(tm.x.cols)
        self.columns = data.singles
        self.candidates = pairs
        self.added = np.zeros(len(self.candidates), dtype=bool)
        n, w = data.num_jobs, data.num_types
        self.c1, self.c2, self.c3 = 0, n, n + w
        self.rounds = 0
        #: every candidate's entries, built once: pricing only changes the duals
        self.cand = self.column_entries(self.candidates)

    def column_entries(self, cols: Columns):
        """CSC arrays (starts, rows, values) of ``cols`` in C1 (time), C2 (GPUs) and C3."""
        rows, col, time, rates = cols.member_terms()
        k = len(cols)
        col = np.concatenate([col, np.arange(k)])
        rows = np.concatenate([self.c1 + rows, self.c3 + rows, self.c2 + cols.type])
        vals = np.concatenate([time, -self.weights[rows[: len(time)] - self.c1] * time * rates])
        col = np.concatenate([col[: len(time)], col])
        vals = np.concatenate([vals, cols.gpus])
        order = np.argsort(col, kind="stable")
        starts = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(col, minlength=k), out=starts[1:])
        return starts, rows[order], vals[order], col[order]

    def reduced_costs(self, cost: np.ndarray) -> np.ndarray:
        """d = c − Aᵀy of every candidate pair column (HiGHS minimises; y its row duals)."""
        y = np.asarray(self.h.getSolution().row_dual)
        _, rows, vals, col = self.cand
        return cost - np.bincount(col, weights=vals * y[rows], minlength=len(self.candidates))

    def add(self, idx: np.ndarray, cost: np.ndarray) -> None:
        cols = self.candidates.take(idx)
        starts, rows, vals, _ = self.column_entries(cols)
        k = len(idx)
        status = self.h.addCols(
            k,
            cost.astype(np.float64),
            np.zeros(k),
            np.ones(k),
            len(rows),
            starts[:-1].astype(np.int32),
            rows.astype(np.int32),
            vals.astype(np.float64),
        )
        if status == highspy.HighsStatus.kError:  # none added: pricing would loop on them
            raise RuntimeError(f"HiGHS refused {k} pair columns")
        first = self.h.getNumCol() - k
        self.x_cols.extend(range(first, first + k))
        self.columns = Columns.concat([self.columns, cols])
        self.added[idx] = True

    def price_and_solve(self, cand_cost: np.ndarray, stop: float) -> Status:
        """Solve, add what prices in, repeat: OPTIMAL once nothing does."""
        per_round = max(1, PER_ROUND_PER_JOB * self.data.num_jobs)
        while True:
            self.h.setOptionValue("time_limit", max(0.01, stop - time.perf_counter()))
            self.h.run()
            if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                return Status.FEASIBLE if self._has_point() else Status.NO_SOLUTION
            d = self.reduced_costs(cand_cost)
            d[self.added] = 0.0
            new = np.flatnonzero(d < -PRICE_TOL)
            if not len(new):
                return Status.OPTIMAL
            if len(new) > per_round:
                new = new[np.argpartition(d[new], per_round)[:per_round]]
            self.add(new, cand_cost[new])
            self.rounds += 1
            if time.perf_counter() >= stop:
                return Status.FEASIBLE

    def _has_point(self) -> bool:
        return self.h.getInfo().primal_solution_status == 2

    def point(self) -> np.ndarray:
        return np.asarray(self.h.getSolution().col_value)

    def l2_costs(self, cols: Columns) -> np.ndarray:
        """−(Σ_members m_j a_j time T_{j,c}) / |J|: level 2 as a minimisation (model.py)."""
        rows, col, time, rates = cols.member_terms()
        per_entry = self.data.counts[rows] * self.weights[rows] * time * rates
        total = np.bincount(col, weights=per_entry, minlength=len(cols))
        return -total / max(1, self.data.total_jobs)


def solve(
    data: TimeshareData,
    weights: np.ndarray,
    options: SolveOptions,
    deadline: Deadline,
    pairs: Columns | None = None,
) -> Outcome:
    """The LP over every pair column of ``data`` (``pairs``: those columns, if already made),
    with pair columns priced in."""
    t0 = time.perf_counter()
    stop = t0 + deadline.remaining()
    master = _Master(data, weights, options, data.pair_columns() if pairs is None else pairs)
    h = master.h
    # Level 1: maximise t (HiGHS minimises −t); pair columns cost nothing at level 1.
    h.changeColCost(master.t_col, -1.0)
    status = master.price_and_solve(np.zeros(len(master.candidates)), stop)
    if not master._has_point():
        return Outcome(Status.NO_SOLUTION, explanation="HiGHS found no point of level 1 in time")
    t_star = float(master.point()[master.t_col])
    bound = t_star if status is Status.OPTIMAL else None
    rounds_l1 = master.rounds
    if status is Status.OPTIMAL and not data.instance.efficiency:
        pass
    elif status is Status.OPTIMAL and time.perf_counter() < stop:
        # Level 2: t kept at its optimum, then the mean weighted throughput over all columns.
        lo = t_star - L1_REL_TOL * max(1.0, t_star)
        h.addRow(lo, highspy.kHighsInf, 1, np.array([master.t_col], dtype=np.int32), np.ones(1))
        h.changeColCost(master.t_col, 0.0)
        xc = np.asarray(master.x_cols, dtype=np.int32)
        h.changeColsCost(len(xc), xc, master.l2_costs(master.columns))
        level2 = master.price_and_solve(master.l2_costs(master.candidates), stop)
        if level2 is not Status.OPTIMAL:
            status = Status.FEASIBLE
    else:
        status = Status.FEASIBLE if status is not Status.NO_SOLUTION else status
    values = master.point()
    x = values[np.asarray(master.x_cols, dtype=np.int64)]
    solution = shares_of(data, master.columns, x)
    stats = {
        "pair_columns": float(len(master.candidates)),
        "pair_columns_added": float(master.added.sum()),
        "pricing_rounds_L1": float(rounds_l1),
        "pricing_rounds": float(master.rounds),
    }
    master.session.close()
    return Outcome(status, solution, bound=bound, solve_s=time.perf_counter() - t0, stats=stats)

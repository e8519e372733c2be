"""HiGHS through highspy directly: one ``Highs`` object across all levels.

The model goes over once, in bulk (column bounds and integrality as arrays, rows as CSR
arrays). A solved level is fixed by adding one row; the next objective is set by changing
costs. Nothing is rebuilt between levels (PuLP's adapter rebuilt the whole model per level).
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np

from schedopt.backends.highs_pulp import swallow_highs_banner
from schedopt.core.options import SolveOptions
from schedopt.core.progress import Progress, ProgressCallback, due
from schedopt.core.status import Status

from .core import Model
from .session import LevelRun
from .terms import Backend, Level, RowBlock, Sense

_MS = highspy.HighsModelStatus


class HighsSession:
    method = "milp:highs"
    kind = Backend.MILP

    def __init__(self, model: Model, verbose: bool = False):
        swallow_highs_banner()
        self.model = model
        h = self.highs = highspy.Highs()
        h.setOptionValue("output_flag", bool(verbose))
        n = model.num_cols
        self._integer = model.kinds()
        self._is_mip = bool(self._integer.any())
        if n:
            h.addVars(n, model.lb, model.ub)
            # HighsVarType's codes: 0 continuous, 1 integer (Model.kinds uses the same).
            integrality = self._integer.astype(np.uint8)
            idx = np.arange(n, dtype=np.int32)
            h.changeColsIntegrality(n, idx, integrality)
        for block in model.blocks:
            self.add_block(block)
        # HiGHS's own time limit is not checked everywhere: on fair share's 4,096-GPU round a
        # level-3 MIP given 1.1 s ran 4.1-4.6 s (its root heuristics, 1 run in 3). An interrupt
        # at the run's end, from HiGHS's MIP and IPM callbacks, keeps the limit (10 of 10
        # runs within it, benchmarks/RESULTS.md "HiGHS past its time limit").
        self._stop_at = math.inf
        # The same callback reports progress (SolveOptions.on_progress), a few times a second.
        self._progress: ProgressCallback | None = None
        self._reported = -math.inf
        h.cbMipInterrupt.subscribe(self._interrupt)
        h.cbIpmInterrupt.subscribe(self._stop)
        self._costed = np.zeros(0, dtype=np.int64)
        self._level: Level | None = None
        self._sign = 1.0
        self._hint: np.ndarray | None = None

    def add_block(self, block: RowBlock) -> None:
        if Backend.MILP not in block.backends or not len(block):
            return
        status = self.highs.addRows(
            len(block),
            block.lo,
            block.hi,
            len(block.cols),
            block.starts[:-1].astype(np.int32),
            block.cols.astype(np.int32),
            block.coefs,
        )
        if status == highspy.HighsStatus.kError:
            # HiGHS adds none of the block's rows then: solving on would drop a constraint
            raise RuntimeError(f"HiGHS refused the rows of {block.cid} ({len(block)} rows)")

    def set_level(self, level: Level) -> None:
        h = self.highs
        if len(self._costed):
            h.changeColsCost(
                len(self._costed), self._costed.astype(np.int32), np.zeros(len(self._costed))
            )
        # Always a minimisation (a maximum as the minimum of its negation): HiGHS 1.16's own
        # maximise sense searched far worse on admission at 1,024 GPUs × 1,000 jobs (L1 at
        # 4,014 with a 39% gap after 8 s, against proven 6,540 in 5.5 s negated; PuLP's
        # adapter negates too).
        self._sign = -1.0 if level.sense is Sense.MAXIMIZE else 1.0
        cols, inverse = np.unique(level.expr.cols, return_inverse=True)
        costs = np.zeros(len(cols))
        np.add.at(costs, inverse, level.expr.coefs)  # a column named twice: coefficients add
        if len(cols):
            h.changeColsCost(len(cols), cols.astype(np.int32), self._sign * costs)
        h.changeObjectiveOffset(self._sign * level.expr.constant)
        h.changeObjectiveSense(highspy.ObjSense.kMinimize)
        self._costed, self._level = cols, level

    def set_hint(self, values: np.ndarray | None) -> None:
        self._hint = values

    def run(self, time_limit_s: float, options: SolveOptions) -> LevelRun:
        h, entered = self.highs, time.perf_counter()
        h.setOptionValue("time_limit", max(0.01, time_limit_s))
        h.setOptionValue("mip_rel_gap", options.mip_gap)
        h.setOptionValue("mip_abs_gap", 1e-9)
        h.setOptionValue("random_seed", options.seed)
        # HiGHS fixes its thread pool at the first run of a process and fails any later run
        # that asks for another size, so `threads` is not passed (its MIP search is serial).
        if self._hint is not None and self.model.num_cols and self._is_mip:
            # A MIP start. An LP gets none: setSolution discards the simplex basis HiGHS keeps
            # between levels (and a caller's warm basis), which is the better start; with it,
            # timeshare's level 2 re-solved from scratch (3,280 iterations against 27).
            n = self.model.num_cols
            h.setSolution(n, np.arange(n, dtype=np.int32), self._hint.astype(np.float64))
        started = time.perf_counter()
        self._stop_at = started + max(0.01, time_limit_s)
        self._progress = options.on_progress
        h.run()
        status_code, info = h.getModelStatus(), h.getInfo()
        has_primal = info.primal_solution_status == 2  # kSolutionStatusFeasible
        objective = self._sign * info.objective_function_value if has_primal else None
        values = np.asarray(h.getSolution().col_value) if has_primal else None
        if self._hint is not None and not self._consistent(objective, values):
            # HiGHS 1.16 can return the MIP start's columns with the objective of a better point
            # it found in presolve's reduced space (fairshare's small-s1: objective 90, columns
            # of the start, worth 230). Such a point is not trusted: solved again without it.
            h.clearSolver()
            left = time_limit_s - (time.perf_counter() - started)
            h.setOptionValue("time_limit", max(0.01, left))
            h.run()
            status_code, info = h.getModelStatus(), h.getInfo()
            has_primal = info.primal_solution_status == 2
            objective = self._sign * info.objective_function_value if has_primal else None
            values = np.asarray(h.getSolution().col_value) if has_primal else None
        ended = time.perf_counter()
        self._stop_at = math.inf  # runs outside ``run`` (column generation) keep their own
        self._progress = None
        bound: float | None = None
        if status_code == _MS.kOptimal:
            status = Status.OPTIMAL
            bound = self._sign * info.mip_dual_bound if self._is_mip else objective
        elif status_code in (_MS.kInfeasible, _MS.kUnboundedOrInfeasible):
            status = Status.INFEASIBLE
        else:
            status = Status.FEASIBLE if has_primal else Status.NO_SOLUTION
            if self._is_mip and math.isfinite(info.mip_dual_bound):
                bound = self._sign * info.mip_dual_bound
        stats: dict[str, float | str] = {
            "solver": "highs",
            "model_status": h.modelStatusToString(status_code),
            "mip_nodes": float(info.mip_node_count),
        }
        handover = started - entered + time.perf_counter() - ended
        return LevelRun(status, objective, bound, values, stats, handover)

    def _interrupt(self, event: highspy.HighsCallbackEvent) -> None:
        now = time.perf_counter()
        if now >= self._stop_at:
            event.interrupt()
        elif self._progress is not None and due(self._reported, now):
            self._reported = now
            self._report(event.data_out)

    def _stop(self, event: highspy.HighsCallbackEvent) -> None:
        """The interior-point callback: the time limit only (its data holds no MIP bounds)."""
        if time.perf_counter() >= self._stop_at:
            event.interrupt()

    def _report(self, out: highspy.cb.HighsCallbackOutput) -> None:
        """The MIP's incumbent and bound so far, in the level's units (HiGHS minimises
        ``sign`` × the level); infinite values (none yet) are None."""
        assert self._progress is not None
        primal, dual = self._sign * out.mip_primal_bound, self._sign * out.mip_dual_bound
        self._progress(
            Progress(
                self.method,
                incumbent=primal if math.isfinite(primal) else None,
                bound=dual if math.isfinite(dual) else None,
            )
        )

    def _consistent(self, objective: float | None, values: np.ndarray | None) -> bool:
        """Is ``objective`` the level's value at ``values``?"""
        if objective is None or values is None or self._level is None:
            return True
        found = self._level.expr.value(values)
        return abs(found - objective) <= 1e-6 * max(1.0, abs(objective))

    def close(self) -> None:
        self.highs = None  # type: ignore[assignment]

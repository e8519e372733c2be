"""HiGHS through PuLP's highspy adapter: the model is handed over in memory (no file written).

PuLP's own HiGHS adapter reports a time-limited run as ``LpStatusOptimal``; we read HiGHS's
model status, primal solution status and MIP dual bound ourselves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import highspy
import pulp

from schedopt.core.status import Status

from .highs_quiet import swallow_highs_banner
from .milp_run import MilpRun


class _HighsWithHint(pulp.HiGHS):
    """PuLP's HiGHS adapter plus a MIP start, applied just before the run."""

    def __init__(
        self, hint: Mapping[pulp.LpVariable, float] | None, stop_at: float, **kwargs: object
    ):
        super().__init__(**kwargs)
        self._hint = dict(hint or {})
        self._stop_at = stop_at
        self.run_started: float | None = None
        self.run_ended: float | None = None

    def callSolver(self, lp: pulp.LpProblem) -> None:
        # Passing a large model to HiGHS takes a while: the time limit is what is left *now*.
        self.run_started = time.perf_counter()
        left = max(0.01, self._stop_at - self.run_started)
        lp.solverModel.setOptionValue("time_limit", left)
        if self._hint:
            index = [v.index for v in self._hint]
            value = [float(x) for x in self._hint.values()]
            lp.solverModel.setSolution(len(index), index, value)
        lp.solverModel.run()
        self.run_ended = time.perf_counter()


def solve_highs(prob, time_limit_s, mip_gap, threads, seed, hint, msg) -> MilpRun:
    swallow_highs_banner()
    cmd = _HighsWithHint(
        hint,
        time.perf_counter() + time_limit_s,
        msg=msg,
        timeLimit=time_limit_s,
        gapRel=mip_gap,
        # HiGHS fixes its thread pool at the first run of a process and fails any later run
        # that asks for another size, so `threads` is not passed (its MIP search is serial).
        random_seed=seed,
        mip_abs_gap=1e-9,
    )
    entered = time.perf_counter()
    prob.solve(cmd)
    # Time spent outside HiGHS's own clock: building its model from PuLP's, and reading the
    # values back. Callers re-solving the same model budget for it (it does not shrink).
    handover_s = (
        (cmd.run_started or entered)
        - entered
        + time.perf_counter()
        - (cmd.run_ended or time.perf_counter())
    )
    h: highspy.Highs = prob.solverModel
    model_status = h.getModelStatus()
    info = h.getInfo()
    sign = -1.0 if prob.sense == pulp.LpMaximize else 1.0
    constant = float(prob.objective.constant) if prob.objective is not None else 0.0
    has_primal = info.primal_solution_status == 2  # kSolutionStatusFeasible
    MS = highspy.HighsModelStatus
    is_mip = any(v.cat == pulp.LpInteger for v in prob.variables())
    objective = sign * info.objective_function_value + constant if has_primal else None
    bound: float | None = None
    if model_status == MS.kOptimal:
        status = Status.OPTIMAL
        bound = sign * info.mip_dual_bound + constant if is_mip else objective
    elif model_status in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
        status = Status.INFEASIBLE
    else:
        status = Status.FEASIBLE if has_primal else Status.NO_SOLUTION
        if is_mip and math.isfinite(info.mip_dual_bound):
            bound = sign * info.mip_dual_bound + constant
    stats: dict[str, float | str] = {
        "solver": "highs",
        "model_status": h.modelStatusToString(model_status),
        "mip_nodes": float(info.mip_node_count),
        "handover_s": handover_s,
    }
    return MilpRun(status, objective, bound, stats)

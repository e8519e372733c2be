"""Solve a PuLP model with HiGHS or CBC and report status, objective and bound honestly.

PuLP's own HiGHS adapter reports a time-limited run as ``LpStatusOptimal``; we read HiGHS's
model status, primal solution status and MIP dual bound ourselves. For CBC we read the solution
file's status line (via PuLP) and the best possible objective from CBC's log.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import highspy
import pulp

from schedopt.core.status import Status


class MilpSolver(str, Enum):
    HIGHS = "highs"
    CBC = "cbc"


@dataclass(frozen=True)
class MilpRun:
    status: Status
    objective: float | None
    bound: float | None
    stats: Mapping[str, float | str]

    @property
    def has_solution(self) -> bool:
        return self.status.has_solution


class _HighsWithHint(pulp.HiGHS):  # type: ignore[misc]
    """PuLP's HiGHS adapter plus a MIP start, applied just before the run."""

    def __init__(self, hint: Mapping[pulp.LpVariable, float] | None, **kwargs: object):
        super().__init__(**kwargs)
        self._hint = dict(hint or {})

    def callSolver(self, lp: pulp.LpProblem) -> None:
        if self._hint:
            index = [v.index for v in self._hint]
            value = [float(x) for x in self._hint.values()]
            lp.solverModel.setSolution(len(index), index, value)
        lp.solverModel.run()


def solve_pulp(
    prob: pulp.LpProblem,
    solver: MilpSolver,
    *,
    time_limit_s: float,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: int = 0,
    hint: Mapping[pulp.LpVariable, float] | None = None,
    msg: bool = False,
) -> MilpRun:
    """Solve ``prob`` in place (variables get their values) and return the honest outcome."""
    time_limit_s = max(time_limit_s, 0.01)
    if solver is MilpSolver.HIGHS:
        return _solve_highs(prob, time_limit_s, mip_gap, threads, seed, hint, msg)
    return _solve_cbc(prob, time_limit_s, mip_gap, threads, seed, hint, msg)


_BANNER_SHOWN = False


def _swallow_highs_banner() -> None:
    """HiGHS prints its banner from C on the first ``Highs()`` of a process; keep stdout clean
    (the CLI's ``--json`` output must be parseable) by creating that first one with fd 1 muted."""
    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        return
    _BANNER_SHOWN = True
    try:
        saved = os.dup(1)
    except OSError:
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _solve_highs(prob, time_limit_s, mip_gap, threads, seed, hint, msg) -> MilpRun:
    _swallow_highs_banner()
    cmd = _HighsWithHint(
        hint,
        msg=msg,
        timeLimit=time_limit_s,
        gapRel=mip_gap,
        # HiGHS fixes its thread pool at the first run of a process and fails any later run
        # that asks for another size, so `threads` is not passed (its MIP search is serial).
        random_seed=seed,
        mip_abs_gap=1e-9,
    )
    prob.solve(cmd)
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
    stats = {
        "solver": "highs",
        "model_status": h.modelStatusToString(model_status),
        "mip_nodes": float(info.mip_node_count),
    }
    return MilpRun(status, objective, bound, stats)


_BEST_POSSIBLE = re.compile(r"best possible ([-+0-9.eE]+)")
_BOUND_LINE = re.compile(r"Lower bound:\s*([-+0-9.eE]+)")


def _solve_cbc(prob, time_limit_s, mip_gap, threads, seed, hint, msg) -> MilpRun:
    if hint:
        for var, value in hint.items():
            var.setInitialValue(value)
    with tempfile.TemporaryDirectory(prefix="schedopt-cbc-") as tmp:
        log_path = os.path.join(tmp, "cbc.log")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PuLP 3 announces the bundled CBC's retirement
            cmd = pulp.PULP_CBC_CMD(
                msg=msg,
                timeLimit=time_limit_s,
                gapRel=mip_gap,
                threads=threads,
                warmStart=bool(hint),
                logPath=log_path,
                options=[f"randomCbcSeed {seed + 1}"],
            )
            prob.solve(cmd)
        log = Path(log_path).read_text() if os.path.exists(log_path) else ""
    sol = prob.sol_status
    objective: float | None = None
    if sol in (1, 2):
        # An empty objective (e.g. no SLO job at all) has no value in PuLP: it is 0.
        value = pulp.value(prob.objective) if prob.objective is not None else None
        objective = float(value) if value is not None else 0.0
    bound: float | None = None
    if sol == pulp.LpSolutionOptimal:
        status, bound = Status.OPTIMAL, objective
    elif prob.status == pulp.LpStatusInfeasible:
        status = Status.INFEASIBLE
    elif sol == pulp.LpSolutionIntegerFeasible:
        status = Status.FEASIBLE
    else:
        status = Status.NO_SOLUTION
    if status is not Status.OPTIMAL:
        # CBC minimises internally; its log reports the bound in the model's own sense.
        found = _BEST_POSSIBLE.findall(log) or _BOUND_LINE.findall(log)
        if found:
            bound = float(found[-1]) + 0.0
            if prob.sense == pulp.LpMaximize and bound < 0 and (objective or 0) >= 0:
                bound = -bound
    stats = {"solver": "cbc", "cbc_status": pulp.LpStatus.get(prob.status, "?")}
    return MilpRun(status, objective, bound, stats)


def write_model(prob: pulp.LpProblem, path: str, fmt: str) -> None:
    """Write the model as ``mps`` or ``lp`` for an external solver."""
    if fmt == "mps":
        prob.writeMPS(path)
    elif fmt == "lp":
        prob.writeLP(path)
    else:
        raise ValueError(f"unknown model format {fmt!r}; use 'mps' or 'lp'")


def var_value(v: pulp.LpVariable) -> float:
    x = v.varValue
    return 0.0 if x is None else float(x)

"""Solve a PuLP model with HiGHS or CBC and report status, objective and bound honestly.

HiGHS runs in process through highspy (``highs_pulp``); CBC runs as a child process that the
solve owns (``cbc``). Both are held to ``time_limit_s`` counted from the call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import pulp

from .cbc import solve_cbc
from .export import write_model
from .highs_pulp import solve_highs
from .milp_run import MilpRun, MilpSolver

__all__ = ["MilpRun", "MilpSolver", "solve_pulp", "var_value", "write_model"]


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
    max_nodes: int | None = None,
) -> MilpRun:
    """Solve ``prob`` in place (variables get their values) and return the honest outcome.

    ``time_limit_s`` counts from this call, including the time to hand the model to the solver
    and to read the answer back. ``max_nodes``: CBC's node limit (deterministic mode); HiGHS
    through PuLP takes none (deterministic HiGHS runs through ``model.emit_highs``).
    """
    time_limit_s = max(time_limit_s, 0.01)
    if solver is MilpSolver.HIGHS:
        return solve_highs(prob, time_limit_s, mip_gap, threads, seed, hint, msg)
    stop_at = time.perf_counter() + time_limit_s
    return solve_cbc(prob, stop_at, mip_gap, threads, seed, hint, msg, max_nodes)


def var_value(v: pulp.LpVariable) -> float:
    x = v.varValue
    return 0.0 if x is None else float(x)

"""Run a CP-SAT model and report status and bound honestly."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from schedopt.core.status import Status
from schedopt.core.stopping import runaway_cap_s


@dataclass(frozen=True)
class CpsatRun:
    status: Status
    objective: float | None
    bound: float | None
    stats: Mapping[str, float | str]


_STATUS = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.UNKNOWN: Status.NO_SOLUTION,
    cp_model.MODEL_INVALID: Status.NO_SOLUTION,
}


def new_solver() -> cp_model.CpSolver:
    """A CP-SAT solver that leaves SIGINT to Python (run it with :func:`solve`). CP-SAT catches
    it by default (``catch_sigint_signal``): a Ctrl-C then only ended that search, as if its
    limit were reached, and on return it set SIGINT to the system's default, so the next Ctrl-C
    killed the process with no ``finally`` run (#17)."""
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False
    return solver


def solve(
    solver: cp_model.CpSolver,
    model: cp_model.CpModel,
    callback: cp_model.CpSolverSolutionCallback | None = None,
) -> Any:
    """``solver.solve(model, callback)``, with a Ctrl-C (or the CLI's SIGTERM) honoured at once:
    in the main thread the search runs in a helper thread (CP-SAT releases the GIL) while this
    one waits, so that Python's signal handlers run; on KeyboardInterrupt the search is stopped,
    joined, and the exception goes on to the caller. A wait in the main thread, not a search
    there, is what lets Python act on a signal before CP-SAT returns (in a callback at best)."""
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model, callback)  # signals are the main thread's business
    out: list[Any] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            out.append(solver.solve(model, callback))
        except BaseException as err:  # a callback's error, given to the caller as its own
            errors.append(err)

    thread = threading.Thread(target=search, name="cp-sat", daemon=True)
    thread.start()
    try:
        thread.join()  # a lock wait: interrupted by signals (POSIX)
    except BaseException:
        solver.stop_search()
        thread.join()
        raise
    if errors:
        raise errors[0]
    return out[0]


def make_solver(
    *,
    time_limit_s: float,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: int = 0,
    verbose: bool = False,
    linearization_level: int = 1,
    deterministic: bool = False,
) -> cp_model.CpSolver:
    """``deterministic``: stop on CP-SAT's deterministic time (``time_limit_s`` of its
    deterministic seconds) so that a run is reproducible; the wall clock then only caps a
    runaway run at 10 × the limit + 10 s (SolveOptions.deterministic)."""
    solver = new_solver()
    p = solver.parameters
    p.max_time_in_seconds = max(time_limit_s, 0.01)
    if deterministic:
        p.max_deterministic_time = p.max_time_in_seconds
        p.max_time_in_seconds = runaway_cap_s(p.max_time_in_seconds)
    p.num_workers = threads
    p.random_seed = seed % 2**31  # an int32 field; LNS derives seed + step from the user's
    p.relative_gap_limit = mip_gap
    p.log_search_progress = verbose
    p.linearization_level = linearization_level
    return solver


class _OnSolution(cp_model.CpSolverSolutionCallback):
    """Calls ``report(objective, bound)`` on CP-SAT's improving solutions, at most every
    ``every_s`` seconds (the last one is always in the run's result)."""

    def __init__(self, report: Callable[[float, float], None], every_s: float):
        super().__init__()
        self._report, self._every_s = report, every_s
        self._last = -math.inf

    def on_solution_callback(self) -> None:
        now = time.perf_counter()
        if now - self._last >= self._every_s:
            self._last = now
            self._report(self.objective_value, self.best_objective_bound)


def run(
    model: cp_model.CpModel,
    solver: cp_model.CpSolver,
    on_solution: Callable[[float, float], None] | None = None,
    every_s: float = 0.5,
) -> CpsatRun:
    """Solve ``model``; a time-limited run is FEASIBLE (with a solution) or NO_SOLUTION.
    ``on_solution(objective, bound)``, in CP-SAT's scaled units, hears of improving solutions
    at most every ``every_s`` seconds."""
    callback = None if on_solution is None else _OnSolution(on_solution, every_s)
    code = solve(solver, model, callback)
    if code == cp_model.MODEL_INVALID:
        # A bug in a model builder, never a user error: say what CP-SAT says.
        raise RuntimeError(f"CP-SAT rejected the model: {model.validate()}")
    status = _STATUS[code]
    has_objective = model.has_objective()
    objective = solver.objective_value if status.has_solution and has_objective else None
    # CP-SAT's bound is valid whenever it found a solution. Without one (UNKNOWN) it may still
    # have a real bound (an LP bound, say), but when it computed none it reports 0.0, which
    # would read as a proof (measured on a 1,024-GPU model stopped during presolve): a 0.0
    # bound without a solution is therefore not reported.
    bound = None
    if has_objective and status is not Status.INFEASIBLE:
        b = solver.best_objective_bound
        if math.isfinite(b) and (status.has_solution or b != 0.0):
            bound = b
    if status is Status.OPTIMAL and solver.parameters.relative_gap_limit == 0 and has_objective:
        bound = objective
    stats: dict[str, float | str] = {
        "solver": "cpsat",
        "branches": float(solver.num_branches),
        "conflicts": float(solver.num_conflicts),
        "wall_s": float(solver.wall_time),
    }
    return CpsatRun(status, objective, bound, stats)


def add_hint(model: cp_model.CpModel, values: Mapping[cp_model.IntVar, int]) -> None:
    model.clear_hints()
    for var, value in values.items():
        model.add_hint(var, int(value))

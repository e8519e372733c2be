"""Solve a PuLP model with HiGHS or CBC and report status, objective and bound honestly.

PuLP's own HiGHS adapter reports a time-limited run as ``LpStatusOptimal``; we read HiGHS's
model status, primal solution status and MIP dual bound ourselves. For CBC we read the solution
file's status line (via PuLP) and the best possible objective from CBC's log.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import highspy
import pulp

from schedopt.core.registry import MethodKind, MethodSpec, Runner
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
    """Solve ``prob`` in place (variables get their values) and return the honest outcome.

    ``time_limit_s`` counts from this call, including the time to hand the model to the solver.
    """
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
    stats = {
        "solver": "highs",
        "model_status": h.modelStatusToString(model_status),
        "mip_nodes": float(info.mip_node_count),
        "handover_s": handover_s,
    }
    return MilpRun(status, objective, bound, stats)


_BEST_POSSIBLE = re.compile(r"best possible ([-+0-9.eE]+)")
_BOUND_LINE = re.compile(r"Lower bound:\s*([-+0-9.eE]+)")


class _CbcWatchdog:
    """Keeps CBC to the time limit: CBC checks its ``-sec`` limit only between phases and was
    measured overshooting a 10 s limit by 8 s on a 53k-variable model. At ``stop_at`` the
    watchdog sends SIGINT to the CBC child (CBC then stops and writes its best solution), and
    SIGKILL ``KILL_GRACE_S`` later if it is still running. Linux only (children found in /proc);
    elsewhere CBC's own limit is all there is.
    """

    KILL_GRACE_S = 0.5

    def __init__(self, executable: str, stop_at: float):
        self._exe = os.path.realpath(executable)
        self._stop_at = stop_at
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self.interrupted = False

    def __enter__(self) -> _CbcWatchdog:
        if os.path.isdir("/proc"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _children(self) -> list[int]:
        me, found = os.getpid(), []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid == me and os.path.realpath(f"/proc/{entry}/exe") == self._exe:
                    found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
        return found

    def _watch(self) -> None:
        if self._done.wait(max(0.0, self._stop_at - time.perf_counter())):
            return
        for sig, wait in ((signal.SIGINT, self.KILL_GRACE_S), (signal.SIGKILL, 0.0)):
            pids = self._children()
            if not pids:
                return
            self.interrupted = True
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
            if self._done.wait(wait):
                return


def _solve_cbc(prob, time_limit_s, mip_gap, threads, seed, hint, msg) -> MilpRun:
    stop_at = time.perf_counter() + time_limit_s
    if hint:
        for var, value in hint.items():
            var.setInitialValue(value)
    interrupted = False
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
                logPath=None if msg else log_path,
                options=[f"randomCbcSeed {seed % (2**31 - 1) + 1}"],  # CBC: 1..2**31-1
            )
            try:
                with _CbcWatchdog(cmd.path, stop_at) as dog:
                    prob.solve(cmd)
            except pulp.PulpSolverError:
                if not dog.interrupted:
                    raise
                prob.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
            interrupted = dog.interrupted
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
        # CBC solves a maximisation (-max) as the minimisation of the negated objective, and its
        # log reports "best possible" in that negated sense (checked on a knapsack).
        found = _BEST_POSSIBLE.findall(log) or _BOUND_LINE.findall(log)
        if found:
            bound = float(found[-1])
            if prob.sense == pulp.LpMaximize:
                bound = -bound
    if interrupted and status is Status.OPTIMAL:
        status = Status.FEASIBLE  # stopped by the watchdog: CBC's "optimal" is not a proof
    stats = {
        "solver": "cbc",
        "cbc_status": pulp.LpStatus.get(prob.status, "?"),
        "watchdog": "interrupted" if interrupted else "idle",
    }
    return MilpRun(status, objective, bound, stats)


def milp_methods(make_solver: Callable[[MilpSolver], Runner]) -> tuple[MethodSpec, ...]:
    """The ``milp:highs`` and ``milp:cbc`` methods of a problem whose MILP module offers
    ``make_solver(MilpSolver) -> runner`` (both take a hint as a MIP start)."""
    return tuple(
        MethodSpec(
            f"milp:{solver.value}",
            MethodKind.EXACT,
            make_solver(solver),
            f"MILP (PuLP) solved by {'HiGHS' if solver is MilpSolver.HIGHS else 'CBC'}",
            supports_hint=True,
        )
        for solver in MilpSolver
    )


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

"""CBC as a child process owned by one solve: write the model, run CBC, read the answer, clean up.

PuLP's ``PULP_CBC_CMD`` runs CBC and waits for it with no way to stop it; CBC checks its own
``-sec`` limit only between phases (measured 8 s over a 10 s limit on a 53k-variable model).
So we run PuLP's bundled CBC ourselves, on the MPS file PuLP writes, holding the ``Popen``:
at the run's deadline this solve sends SIGINT to *its* CBC (CBC stops and writes its best
solution), then SIGKILL if CBC still runs after a grace period. No other process is ever
signalled, so solves in several threads of one process do not disturb each other.

Every file of a run (model, MIP start, solution) lives in one directory
``<tmp>/schedopt-cbc-<pid>-XXXX`` removed in a ``finally``; CBC's log is read from a pipe,
never written to disk. A process killed before its ``finally`` (SIGTERM, SIGKILL) leaves its
directory behind: the next CBC run of any process sweeps directories whose pid is dead.

Statuses are proofs: OPTIMAL and INFEASIBLE only from a run that ended on its own (exit code
0, never signalled) and, for INFEASIBLE, only with a proof in the log. CBC 2.10 answers
"Integer infeasible" when its own time limit cuts pre-processing short ("Pre-processing says
infeasible"; seen at -sec 0.3 on a feasible 45k-variable admission model), so that message is
trusted only if the run ended before its time limit could have been reached.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

import pulp

from schedopt.core.status import Status

from .milp_run import MilpRun

_log = logging.getLogger(__name__)

RUN_DIR_PREFIX = "schedopt-cbc-"
_RUN_DIR = re.compile(re.escape(RUN_DIR_PREFIX) + r"(\d+)-")
#: Lines of CBC's log kept for the stats when a run does not end normally.
LOG_TAIL_LINES = 12
#: Time kept for reading the solution back: a constant plus a cost per model variable
#: (reading CBC's solution, assigning PuLP's values, removing the run directory).
READ_BACK_S = 0.05
READ_BACK_S_PER_VARIABLE = 3e-6
#: PuLP's MPS writer: measured 0.65-1.0 s for 283k non-zeros (45k variables) on a quiet
#: machine, 2 s on a loaded one. A run that cannot even write its model in time is not
#: started; the rate is learnt from this process's writes (see ``_learn_write_rate``).
WRITE_S_PER_NONZERO = 3e-6
_write_rate = WRITE_S_PER_NONZERO
#: The least time worth giving CBC (it must read the model before it can find anything).
MIN_RUN_S = 0.1
#: Between CBC's own limit, SIGINT and SIGKILL CBC may finish its phase and write its best
#: solution: a share of the run, between MIN_GRACE_S and MAX_GRACE_S (CBC overran its own
#: limit by 0.08 s and stopped 0.05 s after SIGINT, measured on a loaded machine).
GRACE_SHARE = 0.08
MIN_GRACE_S = 0.1
MAX_GRACE_S = 1.0

#: CBC's cut passes at the root in deterministic mode (``-passCuts``; its default is 100 below
#: 500 columns, up to 100 "if the objective still drops" below 5,000, 20 beyond). The node
#: budget (``-maxNodes``) does not bound them: on the first level of cosched's and reconfig's
#: small models (80 nodes) 79 and 100 passes, 6.66 and 5.22 CPU s; at 20 passes 5.94 and
#: 3.01 CPU s, the same 13,488 and a better 1,132,677 against 1,149,538 (at 10: 4.56 and
#: 2.62 CPU s but worse, 14,452 and 1,312,197). benchmarks/RESULTS.md, #17.
DETERMINISTIC_CUT_PASSES = 20
#: CLP's primal feasibility tolerance on an LP (its default 1e-7): a row may be broken by this
#: much. At 1e-7, timeshare's level 2 broke the row fixing level 1 by 1e-7 on top of the
#: level's own 1e-7 (L1 2e-7 below its optimum, HiGHS's point exact; #16).
LP_PRIMAL_TOLERANCE = 1e-9
_BEST_POSSIBLE = re.compile(r"best possible ([-+0-9.eE]+)")
_BOUND_LINE = re.compile(r"Lower bound:\s*([-+0-9.eE]+)")
#: Log lines that are CBC's own proof of infeasibility (LP relaxation, or search exhausted).
_INFEASIBLE_PROOFS = (
    "Problem is infeasible",
    "Result - Problem proven infeasible",
    "Result - Linear relaxation infeasible",
)
_PREPROCESS_INFEASIBLE = "Pre-processing says infeasible"


def cbc_executable() -> str:
    """PuLP's bundled CBC (a function so that tests can stand in a fake one)."""
    return pulp.PULP_CBC_CMD.pulp_cbc_path


# --- stale run directories -------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return True  # never treat pid 0 (os.kill(0, ...) means "my process group") as dead
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # someone else's process, or a number we cannot check: leave it
    return True


def sweep_stale_runs(root: str | None = None) -> list[str]:
    """Remove ``schedopt-cbc-<pid>-*`` directories of processes that no longer exist."""
    root = root or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError), os.scandir(root) as entries:
        for entry in entries:
            m = _RUN_DIR.match(entry.name)
            if m and entry.is_dir(follow_symlinks=False) and not _pid_alive(int(m[1])):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


# --- one run -----------------------------------------------------------------------------------
@dataclass
class _LogReader:
    """Drains CBC's output (so CBC never blocks on a full pipe), echoes it if asked, keeps the
    last lines, the last bound and whether a proof of infeasibility was printed."""

    echo: bool
    tail: collections.deque[str]
    best_possible: str | None = None
    lower_bound: str | None = None
    proof: bool = False
    preprocess_infeasible: bool = False

    def read(self, stream) -> None:
        for line in stream:
            if self.echo:
                sys.stdout.write(line)
            self.tail.append(line.rstrip("\n"))
            if m := _BEST_POSSIBLE.search(line):
                self.best_possible = m[1]
            elif m := _BOUND_LINE.search(line):
                self.lower_bound = m[1]
            if any(p in line for p in _INFEASIBLE_PROOFS):
                self.proof = True
            if _PREPROCESS_INFEASIBLE in line:
                self.preprocess_infeasible = True


def _write_inputs(prob, run_dir, hint) -> tuple[str, str | None, dict[str, pulp.LpVariable]]:
    mps = os.path.join(run_dir, "model.mps")
    variables, names, _, _ = prob.writeMPS(mps, rename=1)
    by_name = {names[v.name]: v for v in variables}
    if not hint:
        return mps, None, by_name
    # CBC's MIP start format, as PuLP writes it; a variable not in the hint keeps its value.
    mst = os.path.join(run_dir, "start.mst")
    with open(mst, "w") as f:
        f.write("Stopped on time - objective value 0\n")
        for i, v in enumerate(variables):
            x = hint.get(v, v.varValue or 0)
            f.write(f"{i:>7} {names[v.name]} {x:>15} {0:>23}\n")
    return mps, mst, by_name


def _read_solution(path: str) -> tuple[str, dict[str, float]] | None:
    """CBC's solution file: its status line and the values it lists (None if unreadable).
    ``-printingOptions normal`` lists non-zero columns only: every other variable is 0."""
    try:
        with open(path) as f:
            first = f.readline().strip()
            values = {}
            for line in f:
                parts = line.split()
                if parts and parts[0] == "**":  # CBC marks infeasible rows/columns
                    parts = parts[1:]
                if len(parts) >= 3:
                    values[parts[1]] = float(parts[2])
    except (OSError, ValueError):
        return None
    return first, values


def _read_binary_solution(path: str, text: list[float]) -> list[float] | None:
    """The column values of CBC's binary solution file at full precision, or None when it is
    missing, not of this model, or not the point of the text solution ``text`` (column values
    in the MPS file's order).

    CBC's text solution rounds to 8 significant digits: timeshare's level-1 value, read so, was
    fixed up to 5e-9 (relative) off, and level 2, steep in it, came out 1.5e-6 apart from
    HiGHS's on the same model (#16). The binary file (``-saveSolution``, CBC 2.10) holds two
    ints (rows m, columns n), the objective, then doubles: row activities (m), row duals
    (m), column values (n), reduced costs (n)."""
    head = struct.Struct("<iid")
    try:
        with open(path, "rb") as f:
            data = f.read()
        rows, cols, _ = head.unpack_from(data)
    except (OSError, struct.error):
        return None
    if cols != len(text) or rows < 0 or len(data) != head.size + 8 * (2 * rows + 2 * cols):
        return None
    values = struct.unpack_from(f"<{cols}d", data, head.size + 16 * rows)
    for x, t in zip(values, text, strict=True):
        if not abs(x - t) <= 1e-7 * max(1.0, abs(t)):  # NaN fails too
            return None
    return list(values)


def _has_incumbent(line: str) -> bool:
    return line.startswith("Optimal") or (
        line.startswith("Stopped") and "objective value" in line and "no integer" not in line
    )


def classify(line: str | None, ended: str, log: _LogReader, limit_reached: bool) -> Status:
    """The status a run has proved. ``ended`` is "normal" (exit 0, never signalled),
    "interrupted" (SIGINT by the watchdog), "killed" or "abnormal" (any other exit)."""
    if line is None:
        return Status.NO_SOLUTION
    if ended == "normal":
        if line.startswith("Optimal"):
            return Status.OPTIMAL
        if line.startswith(("Infeasible", "Integer infeasible")):
            # A verdict is void when CBC's time limit may have cut its phase short (CBC 2.10's
            # pre-processing then says "infeasible"; the root LP says "infeasible or too
            # expensive"): trusted only with a proof line from a run that ended before it.
            proved = log.proof or log.preprocess_infeasible
            return Status.INFEASIBLE if proved and not limit_reached else Status.NO_SOLUTION
    return Status.FEASIBLE if _has_incumbent(line) else Status.NO_SOLUTION


def solve_cbc(prob, stop_at, mip_gap, threads, seed, hint, msg, max_nodes=None) -> MilpRun:
    """Solve ``prob`` with CBC so that this call returns by ``stop_at`` (perf_counter time).
    ``max_nodes``: CBC's branch-and-bound node limit (deterministic mode: a budget of work, so
    that with one seed and no ``-threads`` the answer does not follow the clock), with the
    root's cut passes bounded too (DETERMINISTIC_CUT_PASSES)."""
    sweep_stale_runs()
    read_back_s = READ_BACK_S + READ_BACK_S_PER_VARIABLE * prob.numVariables()
    nonzeros = sum(len(c) for c in prob.constraints())
    if stop_at - time.perf_counter() < _write_rate * nonzeros + read_back_s + MIN_RUN_S:
        return _not_started("too little time to write the model and run CBC")
    run_dir = tempfile.mkdtemp(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-")
    proc: subprocess.Popen[str] | None = None
    reader: threading.Thread | None = None
    log = _LogReader(msg, collections.deque(maxlen=LOG_TAIL_LINES))
    try:
        writing = time.perf_counter()
        mps, mst, by_name = _write_inputs(prob, run_dir, hint)
        sol = os.path.join(run_dir, "solution.sol")
        kill_at = stop_at - read_back_s
        now = time.perf_counter()
        _learn_write_rate(now - writing, nonzeros)
        if kill_at - now < MIN_RUN_S / 2:
            return _not_started("writing the model used the time limit")
        # CBC's own limit first (a clean stop), SIGINT one grace later, SIGKILL one more grace
        # later. Stopping takes longer after a long search (a bigger tree to tear down) and on
        # a busy machine: a 20 s run on a loaded 2-core machine outlived a 0.3 s grace.
        grace = min(MAX_GRACE_S, max(MIN_GRACE_S, GRACE_SHARE * (kill_at - now)))
        sec = max(0.01, kill_at - 2 * grace - now)
        args = [cbc_executable(), mps]
        if prob.sense == pulp.LpMaximize:
            args.append("-max")
        if mst:
            args += ["-mips", mst]
        args += [
            "-sec",
            f"{sec:.3f}",
            "-randomCbcSeed",
            str(seed % (2**31 - 1) + 1),
            "-ratio",
            str(mip_gap),
        ]
        if max_nodes is not None:
            args += ["-maxNodes", str(max_nodes), "-passCuts", str(DETERMINISTIC_CUT_PASSES)]
        if not prob.isMIP():
            args += ["-primalTolerance", f"{LP_PRIMAL_TOLERANCE:g}"]
        args += [*_threads_args(threads), "-timeMode", "elapsed", "-solve"]
        # The text solution carries 8 significant digits (CBC's "%15.8g"); the binary one
        # (saveSolution) the doubles themselves, read when it agrees with the text.
        exact = os.path.join(run_dir, "solution.bin")
        args += ["-printingOptions", "normal", "-solution", sol, "-saveSolution", exact]
        launched = time.perf_counter()
        proc = _launch(args)
        reader = threading.Thread(target=log.read, args=(proc.stdout,), daemon=True)
        reader.start()
        ended = _supervise(proc, kill_at - grace, kill_at)
        ran_s = time.perf_counter() - launched
        reader.join()
        answer = _read_solution(sol) if ended in ("normal", "interrupted") else None
        status = classify(answer and answer[0], ended, log, limit_reached=ran_s >= sec)
        if status.has_solution and answer:
            values = answer[1]
            text = [values.get(name, 0.0) for name in by_name]
            full = _read_binary_solution(exact, text)
            for v, x in zip(by_name.values(), text if full is None else full, strict=True):
                v.varValue = x
        return _outcome(prob, status, ended, log, proc.returncode)
    finally:
        if proc is not None:
            if proc.poll() is None:  # an exception (e.g. KeyboardInterrupt) left CBC running
                with contextlib.suppress(OSError):
                    proc.kill()
            with contextlib.suppress(Exception):
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if reader is not None:
            reader.join(timeout=1.0)
        shutil.rmtree(run_dir, ignore_errors=True)


def _threads_args(threads: int) -> list[str]:
    """CBC's ``-threads`` switch, only for more than one thread. Any ``-threads`` value turns
    on CBC 2.10's threaded branch-and-bound, which deadlocks now and then even at 1 thread:
    on a 10-row admission model, 3 of 1,500 runs with ``-threads 1`` never ended (not even
    on SIGINT), 0 of 1,500 without it (``benchmarks/cbc_threads.py``)."""
    return ["-threads", str(threads)] if threads > 1 else []


def _learn_write_rate(elapsed_s: float, nonzeros: int) -> None:
    """Follow a slower machine at once, a faster one gradually (never below the default)."""
    global _write_rate
    if nonzeros < 10_000:  # too small to measure anything but overheads
        return
    seen = elapsed_s / nonzeros
    rate = seen if seen > _write_rate else 0.7 * _write_rate + 0.3 * seen
    _write_rate = max(WRITE_S_PER_NONZERO, rate)


def _launch(args: list[str]) -> subprocess.Popen[str]:
    # CBC block-buffers its log into a pipe: a killed CBC would take its last 4 KB with it.
    # stdbuf (coreutils) makes it line-buffered and execs CBC, so the pid stays CBC's.
    stdbuf = shutil.which("stdbuf") if sys.platform.startswith("linux") else None
    return subprocess.Popen(
        [stdbuf, "-oL", *args] if stdbuf else args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )


def _supervise(proc: subprocess.Popen[str], interrupt_at: float, kill_at: float) -> str:
    """Wait for ``proc``; SIGINT it at ``interrupt_at``, SIGKILL it at ``kill_at``."""
    try:
        proc.wait(max(0.0, interrupt_at - time.perf_counter()))
        return "normal" if proc.returncode == 0 else "abnormal"
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGINT)  # only ever this solve's own child
    try:
        proc.wait(max(0.0, kill_at - time.perf_counter()))
        return "interrupted"
    except subprocess.TimeoutExpired:
        pass
    proc.kill()
    proc.wait()
    return "killed"


def _bound(prob, log: _LogReader) -> float | None:
    # CBC solves a maximisation (-max) as the minimisation of the negated objective, and its
    # log reports "best possible" in that negated sense (checked on a knapsack).
    found = log.best_possible or log.lower_bound
    if found is None:
        return None
    with contextlib.suppress(ValueError):
        bound = float(found)
        return -bound if prob.sense == pulp.LpMaximize else bound
    return None


def _objective(prob) -> float:
    # An empty objective (e.g. no SLO job at all) has no value in PuLP: it is 0.
    value = pulp.value(prob.objective) if prob.objective is not None else None
    return float(value) if value is not None else 0.0


def _outcome(prob, status: Status, ended: str, log: _LogReader, returncode: int) -> MilpRun:
    objective = _objective(prob) if status.has_solution else None
    bound = objective if status is Status.OPTIMAL else _bound(prob, log)
    stats: dict[str, float | str] = {"solver": "cbc", "cbc_end": ended}
    if ended != "normal" or status is Status.NO_SOLUTION:
        stats["cbc_log_tail"] = "\n".join(log.tail)
    if ended == "abnormal":
        stats["cbc_end"] = f"abnormal (exit code {returncode})"
        _log.warning(
            "CBC ended abnormally (exit code %s); its log ends:\n%s",
            returncode,
            stats["cbc_log_tail"],
        )
    return MilpRun(status, objective, bound, stats)


def _not_started(why: str) -> MilpRun:
    return MilpRun(
        Status.NO_SOLUTION, None, None, {"solver": "cbc", "cbc_end": f"not started: {why}"}
    )

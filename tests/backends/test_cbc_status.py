"""CBC's statuses are proofs (issue 7, item 3), and each solve signals only its own CBC (item 4).

A fake CBC (``fake_cbc.py``) makes the abnormal endings deterministic: an interrupted run that
claims "Infeasible" or "Optimal", a run deaf to SIGINT, a crash, and CBC 2.10's "Integer
infeasible" when its own time limit cuts pre-processing short (the false INFEASIBLE seen on
``schedopt generate admission --size large --seed 1``).
"""

from __future__ import annotations

import collections
import os
import random
import threading
import time

import pulp
import pytest

from schedopt.backends import cbc
from schedopt.backends.milp import MilpSolver, solve_pulp
from schedopt.core.status import Status
from tests.timing import slowdown

from . import fake_cbc

#: What a solve may take beyond its limit here: the watchdog's SIGKILL comes before the limit,
#: this is for a loaded 2-core machine (Python thread wake-ups, process start-up).
MARGIN_S = 1.5


def one_binary() -> tuple[pulp.LpProblem, pulp.LpVariable]:
    prob = pulp.LpProblem("one", pulp.LpMaximize)
    x = prob.add_variable("x", cat=pulp.LpBinary)
    prob += x
    prob += x <= 1, "c"
    return prob, x


def timed_solve(prob, limit: float):
    started = time.perf_counter()
    run = solve_pulp(prob, MilpSolver.CBC, time_limit_s=limit)
    return run, time.perf_counter() - started


def test_cbc_deaf_to_sigint_is_killed_within_the_limit(tmp_path, monkeypatch, private_tmp):
    fake_cbc.install(monkeypatch, tmp_path, "ignore-sigint")
    run, wall = timed_solve(one_binary()[0], 1.5)
    assert wall < 1.5 + MARGIN_S * slowdown()
    assert run.status is Status.NO_SOLUTION
    assert run.stats["cbc_end"] == "killed"
    assert "Welcome to the fake CBC" in run.stats["cbc_log_tail"]  # the log is kept
    assert run.surfaced("L1")["L1_cbc_end"] == "killed"
    assert list(private_tmp.iterdir()) == []  # the watchdog's path cleans up too


def test_interrupted_infeasible_claim_is_not_infeasible(tmp_path, monkeypatch, private_tmp):
    fake_cbc.install(monkeypatch, tmp_path, "infeasible-on-sigint")
    run, wall = timed_solve(one_binary()[0], 1.5)
    assert wall < 1.5 + MARGIN_S * slowdown()
    assert run.stats["cbc_end"] == "interrupted"
    assert run.status is Status.NO_SOLUTION
    assert list(private_tmp.iterdir()) == []


def test_interrupted_optimal_claim_is_only_feasible(tmp_path, monkeypatch, private_tmp):
    fake_cbc.install(monkeypatch, tmp_path, "optimal-on-sigint")
    prob, x = one_binary()
    run, _ = timed_solve(prob, 1.5)
    assert run.stats["cbc_end"] == "interrupted"
    assert run.status is Status.FEASIBLE  # the incumbent is kept, the claim is not
    assert run.objective == 1.0 and x.varValue == 1.0


def test_crash_is_no_solution_with_the_log_kept(tmp_path, monkeypatch, private_tmp):
    fake_cbc.install(monkeypatch, tmp_path, "crash")
    run, wall = timed_solve(one_binary()[0], 30)
    assert wall < 10  # it ended at once: nothing waits for the limit
    assert run.status is Status.NO_SOLUTION
    assert run.stats["cbc_end"] == "abnormal (exit code 3)"
    tail = run.stats["cbc_log_tail"]
    assert "fake: out of memory" in tail and "fake log line 29" in tail
    assert "fake log line 0\n" not in tail  # only the last lines
    assert list(private_tmp.iterdir()) == []


def test_preprocessing_verdict_cut_short_by_the_limit_is_not_infeasible(
    tmp_path, monkeypatch, private_tmp
):
    # The fake ends on its own just after its -sec limit and before the watchdog's SIGINT
    # (6 s gives a grace of about 0.45 s between the two).
    fake_cbc.install(monkeypatch, tmp_path, "preprocess-after-limit")
    run, wall = timed_solve(one_binary()[0], 6.0)
    assert run.stats["cbc_end"] == "normal"
    assert wall < 6.0 + MARGIN_S * slowdown()
    assert run.status is Status.NO_SOLUTION
    assert "Pre-processing says infeasible" in run.stats["cbc_log_tail"]


def test_preprocessing_verdict_within_the_limit_is_infeasible(tmp_path, monkeypatch):
    fake_cbc.install(monkeypatch, tmp_path, "preprocess-at-once")
    run, _ = timed_solve(one_binary()[0], 30)
    assert run.status is Status.INFEASIBLE


def _log(*lines: str) -> cbc._LogReader:
    reader = cbc._LogReader(False, collections.deque(maxlen=cbc.LOG_TAIL_LINES))
    reader.read(line + "\n" for line in lines)
    return reader


@pytest.mark.parametrize("ended", ["interrupted", "killed", "abnormal"])
def test_no_proof_from_a_run_that_did_not_end_normally(ended) -> None:
    proof = _log("Problem is infeasible - 0.00 seconds", "Result - Problem proven infeasible")
    for line in ("Infeasible - objective value 0", "Integer infeasible - objective value 0"):
        assert cbc.classify(line, ended, proof, limit_reached=False) is Status.NO_SOLUTION
    optimal = "Optimal - objective value 3"
    assert cbc.classify(optimal, ended, _log(), limit_reached=False) is Status.FEASIBLE


def test_classify_normal_endings() -> None:
    pre = _log("Pre-processing says infeasible or unbounded")
    line = "Integer infeasible - objective value 6820000.00000000"
    assert cbc.classify(line, "normal", pre, limit_reached=True) is Status.NO_SOLUTION
    assert cbc.classify(line, "normal", pre, limit_reached=False) is Status.INFEASIBLE
    assert cbc.classify(line, "normal", _log(), limit_reached=False) is Status.NO_SOLUTION
    lp = _log("Problem is infeasible - 0.00 seconds")
    assert cbc.classify("Infeasible - objective value 1", "normal", lp, False) is Status.INFEASIBLE
    assert cbc.classify("Infeasible - objective value 1", "normal", lp, True) is Status.NO_SOLUTION
    no_int = "Stopped on time (no integer solution - continuous used) - objective value 6"
    assert cbc.classify(no_int, "normal", _log(), limit_reached=True) is Status.NO_SOLUTION
    stopped = "Stopped on time - objective value 6"
    assert cbc.classify(stopped, "normal", _log(), limit_reached=True) is Status.FEASIBLE
    assert cbc.classify("Optimal - objective value 6", "normal", _log(), False) is Status.OPTIMAL
    assert cbc.classify(None, "normal", _log(), False) is Status.NO_SOLUTION


def test_real_cbc_proves_integer_infeasibility_in_preprocessing() -> None:
    prob = pulp.LpProblem("odd", pulp.LpMaximize)
    y = prob.add_variable("y", 0, 3, cat=pulp.LpInteger)
    z = prob.add_variable("z", 0, 3, cat=pulp.LpInteger)
    prob += y + z
    prob += 2 * y + 2 * z == 3, "odd"  # LP-feasible, no integer point
    run, _ = timed_solve(prob, 30)
    assert run.status is Status.INFEASIBLE


# --- two solves in two threads (item 4) ------------------------------------------------------
def market_split(m: int = 5, n: int = 40, seed: int = 1) -> pulp.LpProblem:
    """Cornuéjols–Dawande market split: tiny, and far beyond CBC in 20 s."""
    rng = random.Random(seed)
    prob = pulp.LpProblem("market_split", pulp.LpMinimize)
    x = [prob.add_variable(f"x{i}", cat=pulp.LpBinary) for i in range(n)]
    slack = [(prob.add_variable(f"s{k}", 0), prob.add_variable(f"t{k}", 0)) for k in range(m)]
    prob += pulp.lpSum(s + t for s, t in slack)
    for s, t in slack:
        a = [rng.randint(0, 99) for _ in range(n)]
        prob += pulp.lpSum(ai * xi for ai, xi in zip(a, x, strict=True)) + s - t == sum(a) // 2
    return prob


@pytest.mark.slow
def test_two_threads_each_return_near_their_own_limit_signalling_only_their_cbc(monkeypatch):
    launched: dict[int, set[int]] = collections.defaultdict(set)  # thread -> CBC pids
    signalled: list[tuple[int, int, int]] = []  # (thread, pid, signal)
    real_launch, real_kill = cbc._launch, os.kill

    def launch(args):
        proc = real_launch(args)
        launched[threading.get_ident()].add(proc.pid)
        return proc

    def kill(pid, sig):
        if sig != 0:  # 0 only asks whether a pid is alive (the sweep of stale directories)
            signalled.append((threading.get_ident(), pid, sig))
        return real_kill(pid, sig)

    monkeypatch.setattr(cbc, "_launch", launch)
    monkeypatch.setattr(os, "kill", kill)
    walls: dict[float, float] = {}
    runs = {}

    def solve(limit: float) -> None:
        runs[limit], walls[limit] = timed_solve(market_split(), limit)

    threads = [threading.Thread(target=solve, args=(limit,)) for limit in (2.0, 20.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(runs) == {2.0, 20.0}
    assert walls[2.0] < 2.0 + MARGIN_S * slowdown()
    # Not stopped by the other solve's watchdog at 2 s: CBC's own limit (a grace of 8% per
    # step before the kill time) is the earliest it may end.
    assert 20.0 * 0.75 < walls[20.0] < 20.0 + 2 * MARGIN_S * slowdown()
    for run in runs.values():
        assert run.status in (Status.FEASIBLE, Status.NO_SOLUTION)
    for thread, pid, _ in signalled:
        assert pid in launched[thread], "a watchdog signalled a process it did not start"


# --- CBC's threaded mode --------------------------------------------------------------------


@pytest.mark.parametrize(("threads", "switch"), [(1, None), (2, "2")])
def test_threads_switch_only_for_several_threads(monkeypatch, threads, switch):
    """Any ``-threads`` value runs CBC 2.10's threaded search, which deadlocked in 3 of 1,500
    runs of a 10-row model at ``-threads 1`` (the CI failure of the brute-force test)."""
    launched: list[list[str]] = []
    real_launch = cbc._launch

    def spy(args):
        launched.append(args)
        return real_launch(args)

    monkeypatch.setattr(cbc, "_launch", spy)
    prob, _ = one_binary()
    run = solve_pulp(prob, MilpSolver.CBC, time_limit_s=10, threads=threads)
    assert run.status is Status.OPTIMAL
    args = launched[0]
    given = args[args.index("-threads") + 1] if "-threads" in args else None
    assert given == switch

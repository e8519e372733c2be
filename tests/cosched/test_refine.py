"""Farley's θ with the case models on worker processes (formulations/cosched.md, "The cases on
worker processes"; `refine.py`): the same θ as in this process when every case is decided,
a valid one when the deadline stops it, and no worker left running."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.executor import ProcessExecutor
from schedopt.problems.cosched import decomp, generate_custom
from schedopt.problems.cosched.data import build_data
from schedopt.problems.cosched.farley import CaseState, farley_theta
from tests.executor.procs import wait_gone


@functools.cache
def _data():
    return build_data(generate_custom(8, 8, 16, 16, 0, (0, 1), scale=4))


def _duals(seed: int) -> tuple[np.ndarray, np.ndarray]:
    data = _data()
    rng = np.random.default_rng(seed)
    pi = rng.uniform(0, 40, len(data.jobs))
    y = -rng.uniform(0, 5, len(data.pools))
    return pi, y


def test_the_workers_prove_the_same_theta_and_leave_nothing_running() -> None:
    data = _data()
    pool = ProcessExecutor(2)
    with pool:
        for seed in range(3):
            pi, y = _duals(seed)
            inline = farley_theta(data, pi, y, None, Deadline.after(120))
            found: list = []
            par = farley_theta(data, pi, y, None, Deadline.after(120), found, None, None, pool)
            assert inline is not None and par is not None
            assert par == pytest.approx(inline, rel=1e-9, abs=1e-9), seed
            assert inline < 1.0  # some case binds: the workers had work
            for group in found:  # (job, combination) pairs of distinct jobs
                jobs = [j for j, _ in group]
                assert len(set(jobs)) == len(jobs)
        pids = set(pool.worker_pids())
        assert pids  # the case models ran on the workers
    assert not wait_gone(pids, 5.0)


def test_a_deadline_leaves_a_valid_theta() -> None:
    """Stopped at once or soon, θ is at most the one every case decided gives (each case not
    finished keeps its key, a lower bound on its ratio)."""
    data = _data()
    pi, y = _duals(0)
    full = farley_theta(data, pi, y, None, Deadline.after(120))
    assert full is not None
    pool = ProcessExecutor(2)
    with pool:
        for seconds in (0.0, 0.05, 0.3):
            got = farley_theta(data, pi, y, None, Deadline.after(seconds), None, None, None, pool)
            assert got is not None and got <= full + 1e-9, seconds
        pids = set(pool.worker_pids())
    assert not wait_gone(pids, 5.0)


def test_deterministic_runs_keep_the_case_models_here() -> None:
    """Deterministic mode: the order results come back in would change the groups found, so
    the case models stay in this process (no worker starts)."""
    data = _data()
    pi, y = _duals(1)
    pool = ProcessExecutor(2)
    with pool:
        farley_theta(data, pi, y, None, Deadline.after(120), None, None, CaseState(True), pool)
        assert pool.worker_pids() == []


def test_colgen_picks_case_workers_at_200_jobs_only_with_time(monkeypatch) -> None:
    """The rule ``colgen`` (and ``auto``) starts case workers by: 200 jobs with a minute,
    not 40 jobs, not 10 s, not in deterministic mode nor when ``params`` name workers, and
    only where the process may use 2 cores (its affinity, not the machine's count)."""
    big = generate_custom(256, 256, 200, 200, 0, (0, 1), scale=4)
    small = generate_custom(41, 41, 40, 40, 0, (0, 1))
    plain = SolveOptions()
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {7}, raising=False)
    assert decomp.case_workers(big, plain, Deadline.after(60)) == 0  # one core of 64
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert decomp.case_workers(big, plain, Deadline.after(60)) == decomp.CASE_WORKERS
    assert decomp.case_workers(big, plain, Deadline.after(5)) == 0
    assert decomp.case_workers(small, plain, Deadline.after(60)) == 0
    det = SolveOptions(deterministic=True)
    assert decomp.case_workers(big, det, Deadline.after(60)) == 0
    named = SolveOptions(params={"workers": 1})
    assert decomp.case_workers(big, named, Deadline.after(60)) == 0
    # the packing plan on a worker of its own: no hint, and case workers after its share
    assert decomp.packing_aside(big, plain, Deadline.after(60))
    assert not decomp.packing_aside(big, plain, Deadline.after(12))  # 8.4 s left after it
    assert not decomp.packing_aside(small, plain, Deadline.after(60))
    assert not decomp.packing_aside(big, det, Deadline.after(60))
    hinted = SolveOptions(hint=object())
    assert not decomp.packing_aside(big, hinted, Deadline.after(60))


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no case workers")
def test_auto_with_case_workers_keeps_the_limit_and_leaves_no_worker() -> None:
    """Issue #17's 200 jobs with 20 s: ``auto`` starts the case workers (10 s or more left
    after the packing seed) and makes the packing plan on a worker of its own; their start-up
    and join fit the limit; none outlives it."""
    import time

    import schedopt
    from schedopt.core.status import Status
    from tests.executor.procs import worker_pids
    from tests.timing import promised_s

    inst = generate_custom(256, 256, 200, 200, 0, (0, 1), scale=4)
    started = time.perf_counter()
    r = schedopt.solve(inst, "auto", time_limit_s=20.0)
    assert time.perf_counter() - started <= promised_s(20.0), r.stats
    assert r.stats["case_workers"] == decomp.CASE_WORKERS
    assert "packing_aside_plan" in r.stats  # the packing ran aside (its plan or not, by load)
    assert r.status is Status.FEASIBLE
    assert r.objectives is not None and r.best_bound is not None
    assert r.best_bound <= r.objectives[0] + 1e-6
    assert not worker_pids(os.getpid())


def test_the_finer_programme_raises_theta_and_keeps_it_valid(monkeypatch) -> None:
    """Case models stopped at once (deterministic time 10⁻⁴ s: left open, the same on any
    load) and the first programme at 3 cells a pool: θ with the finer programme on the case
    that sets it is at least θ without it (FINE_CELLS = 3), above it on some duals, and at
    most θ with every case decided (up to CP-SAT's π rounded up to 10⁻⁴: the programme does
    not round π) (formulation, "The programme on the case that sets θ, and the cases it
    uncovers")."""
    from schedopt.problems.cosched import case_dp, farley

    data = _data()
    raised = 0
    for seed in range(6):
        pi, y = _duals(seed)
        full = farley_theta(data, pi, y, None, Deadline.after(120))
        monkeypatch.setattr(farley, "CASE_S", 1e-4)
        monkeypatch.setattr(case_dp, "CELLS", 3)
        fine = farley_theta(data, pi, y, None, Deadline.after(120), None, None, CaseState(True))
        monkeypatch.setattr(case_dp, "FINE_CELLS", 3)
        coarse = farley_theta(data, pi, y, None, Deadline.after(120), None, None, CaseState(True))
        monkeypatch.undo()
        assert full is not None and fine is not None and coarse is not None
        assert coarse - 1e-12 <= fine <= full * (1 + 1e-4), seed
        raised += fine > coarse + 1e-9
    assert raised >= 2, raised


def test_cases_left_open_still_give_the_decided_theta_here(monkeypatch) -> None:
    """Case models stopped at once (deterministic time 10⁻⁴ s): on this 16-job instance the
    programmes and the cases they uncover on the heap give θ as with every case decided (up
    to CP-SAT's π rounded up to 10⁻⁴). Without taking the heap's cases again, seeds 0 and 3
    stop at 0.633 and 0.705 against 0.656 and 0.725."""
    from schedopt.problems.cosched import farley

    data = _data()
    for seed in range(6):
        pi, y = _duals(seed)
        full = farley_theta(data, pi, y, None, Deadline.after(120))
        monkeypatch.setattr(farley, "CASE_S", 1e-4)
        got = farley_theta(data, pi, y, None, Deadline.after(120), None, None, CaseState(True))
        monkeypatch.undo()
        assert full is not None and got is not None
        assert got == pytest.approx(full, rel=1e-4), seed


@pytest.mark.slow  # the packing's worker starts (an interpreter importing schedopt): 1-5 s
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no packing aside")
def test_the_packing_worker_is_stopped_when_the_rounds_fail(monkeypatch) -> None:
    """An exception in the rounds while the packing runs on its worker: the worker is killed
    on the way out (not left to run to the packing's deadline, 18 s here)."""
    import time

    import schedopt
    from tests.executor.procs import worker_pids

    def failing(*args, **kwargs):
        until = time.monotonic() + 30
        while not worker_pids(os.getpid()):  # the packing's worker has started
            assert time.monotonic() < until, "no packing worker"
            time.sleep(0.05)
        raise RuntimeError("the rounds failed")

    monkeypatch.setattr(decomp, "generate", failing)
    inst = generate_custom(256, 256, 200, 200, 0, (0, 1), scale=4)
    with pytest.raises(RuntimeError, match="the rounds failed"):
        schedopt.solve(inst, "auto", time_limit_s=60.0)
    assert not worker_pids(os.getpid())


def test_a_freed_case_worker_starts_its_next_case_before_the_result_is_read() -> None:
    """The refinement hands out one case beyond the free workers (refine.AHEAD), so the worker
    whose result comes back is already running the next case while this process reads the
    result (and maybe runs the programme); θ the same as in one process."""
    from tests.executor.fakes import CountingPool

    data = _data()
    pi, y = _duals(0)
    inline = farley_theta(data, pi, y, None, Deadline.after(120))
    pool = CountingPool(2)
    got = farley_theta(data, pi, y, None, Deadline.after(120), [], None, None, pool)
    assert got is not None and inline is not None
    assert got == pytest.approx(inline, rel=1e-9, abs=1e-9)
    assert len(pool.at_yield) >= 3
    # every result but the last two is read with both workers running
    assert all(running == 2 for running, _ in pool.at_yield[:-2]), pool.at_yield

"""The time limit at every size: deadlines reached inside a method, the hint as fallback, the
size guard before building, and heuristics that stop their optional work in time."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

import schedopt
from schedopt.core import registry
from schedopt.core.errors import ModelTooLargeError
from schedopt.core.registry import MethodKind, MethodSpec, Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import (
    Deadline,
    DeadlineReached,
    Ticker,
    level_limits,
    thread_cpu_times,
    too_slow_to_build,
)
from schedopt.problems.admission import generate, generate_custom
from schedopt.problems.admission.data import build_data, estimate_num_variables
from tests.timing import promised_s


def _with_method(monkeypatch: pytest.MonkeyPatch, problem: str, run) -> str:
    """Register a throw-away method on ``problem`` for one test."""
    spec = registry.get_problem(problem)
    fake = MethodSpec("heuristic:fake", MethodKind.HEURISTIC, run, "test double")
    monkeypatch.setitem(
        registry._PROBLEMS, problem, replace(spec, methods={**spec.methods, fake.name: fake})
    )
    return fake.name


def test_ticker_checks_every_nth_call() -> None:
    tick = Ticker(Deadline(time.perf_counter() - 1.0), "counting", every=3)
    tick()
    tick()
    with pytest.raises(DeadlineReached, match="while counting"):
        tick()
    Ticker(None, "never")()  # no deadline: never raises


def test_deadline_reached_inside_a_method_is_an_honest_no_solution(monkeypatch) -> None:
    def run(inst, options, deadline):
        raise DeadlineReached("building the model data")

    name = _with_method(monkeypatch, "admission", run)
    result = schedopt.solve(generate("tiny", 0), name, time_limit_s=1.0)
    assert result.status is Status.NO_SOLUTION
    assert result.solution is None
    assert "building the model data" in (result.explanation or "")


def _with_hint(monkeypatch, answer: Status, hint_from_seed: int = 1):
    """Solve small seed 1 with a method that always answers ``answer`` and nothing else,
    hinted with the EDF plan of small seed ``hint_from_seed``; (hint, result)."""
    hint = schedopt.solve(generate("small", hint_from_seed), "heuristic:edf", time_limit_s=5)
    name = _with_method(monkeypatch, "admission", lambda i, o, d: Outcome(answer))
    result = schedopt.solve(generate("small", 1), name, time_limit_s=1.0, hint=hint.solution)
    return hint.solution, result


def test_the_hint_is_returned_when_the_method_finds_nothing(monkeypatch) -> None:
    previous, result = _with_hint(monkeypatch, Status.NO_SOLUTION)
    assert result.status is Status.FEASIBLE
    assert result.solution == previous
    assert "hint kept" in result.method
    assert result.best_bound is None  # a fallback proves nothing


def test_a_hint_that_no_longer_fits_is_reported_not_raised(monkeypatch) -> None:
    _, result = _with_hint(monkeypatch, Status.NO_SOLUTION, hint_from_seed=2)
    assert result.status is Status.NO_SOLUTION
    assert "violates this instance" in (result.explanation or "")


def test_a_proof_of_infeasibility_is_not_replaced_by_the_hint(monkeypatch) -> None:
    _, result = _with_hint(monkeypatch, Status.INFEASIBLE)
    assert result.status is Status.INFEASIBLE


def test_methods_work_to_a_deadline_that_keeps_back_the_finish(monkeypatch) -> None:
    seen: list[float] = []

    def run(inst, options, deadline):
        seen.append(deadline.remaining())
        return Outcome(Status.NO_SOLUTION)

    name = _with_method(monkeypatch, "admission", run)
    inst = generate("large", 0)
    schedopt.solve(inst, name, time_limit_s=2.0)
    reserve = registry.get_problem("admission").finish_reserve_s(inst)
    assert reserve > 0.05
    assert seen[0] <= 2.0 - reserve + 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cheap_size_estimate_bounds_the_model_from_above(seed: int) -> None:
    inst = generate_custom(hosts=4, jobs=40, slots=8, seed=seed)
    assert estimate_num_variables(inst) >= build_data(inst, check_size=False).num_variables


def test_an_oversize_model_is_refused_before_it_is_built() -> None:
    # 300 jobs × 10,000 slots × 3 options: ~9M variables. Building the data alone would take
    # seconds; the refusal comes from the estimate, in well under a second.
    inst = generate_custom(hosts=2, jobs=300, slots=10_000, slot_s=60.0, seed=0)
    for method in ("cpsat", "milp:highs"):
        started = time.perf_counter()
        with pytest.raises(ModelTooLargeError, match="variables"):
            schedopt.solve(inst, method, time_limit_s=10)
        assert time.perf_counter() - started < promised_s(0.5)


def test_a_greedy_out_of_time_keeps_every_guarantee_or_says_so() -> None:
    inst = generate_custom(hosts=64, jobs=4000, slots=12, seed=3)
    admitted = {j.id for j in inst.jobs if j.admitted}
    assert admitted
    for limit in (0.05, 0.3, 1.0):
        started = time.perf_counter()
        result = schedopt.solve(inst, "heuristic:edf", time_limit_s=limit)
        assert time.perf_counter() - started <= promised_s(limit)
        if result.solution is None:
            assert result.status is Status.NO_SOLUTION and result.explanation
            continue
        kept = {p.job_id for p in result.solution.plans if p.admitted}
        assert admitted <= kept  # validated too: every kept deadline is met


def test_a_reserve_stretches_with_the_measured_slowdown(monkeypatch) -> None:
    """Beside other work the process gets a third of a core: validation's reserve, measured
    at CALIBRATED_SLOWDOWN, is kept back 3 / CALIBRATED_SLOWDOWN times over (#16: fair
    share's 1.45 s reserve took 4-8 s at load 8-11)."""
    from schedopt.core import stopping

    wall, cpu = [100.0], [10.0]
    monkeypatch.setattr(stopping.time, "perf_counter", lambda: wall[0])
    monkeypatch.setattr(stopping.time, "process_time", lambda: cpu[0])
    monkeypatch.setattr(stopping, "thread_cpu_times", lambda: None)  # not Linux: the clocks
    deadline = stopping.Deadline(110.0).reserving(1.0)
    assert deadline.remaining() == pytest.approx(9.0)  # nothing measured yet: as measured
    wall[0], cpu[0] = 103.0, 11.0  # 3 s of wall for 1 s of CPU: 3 × slower
    factor = 3.0 / stopping.CALIBRATED_SLOWDOWN
    assert deadline.remaining() == pytest.approx(110.0 - 1.0 * factor - 103.0)
    assert deadline.earlier(1.0).remaining() == pytest.approx(110.0 - 1.0 - factor - 103.0)
    wall[0], cpu[0] = 106.0, 10.5  # 6 s of wall for 0.5 s of CPU (12×): capped at MAX_SLOWDOWN
    top = stopping.MAX_SLOWDOWN / stopping.CALIBRATED_SLOWDOWN
    assert deadline.remaining() == pytest.approx(110.0 - top - 106.0)
    wall[0] = 108.5
    with pytest.raises(stopping.DeadlineReached):
        deadline.check("validating")


def test_a_quiet_process_keeps_the_plain_reserve(monkeypatch) -> None:
    from schedopt.core import stopping

    wall, cpu = [100.0], [10.0]
    monkeypatch.setattr(stopping.time, "perf_counter", lambda: wall[0])
    monkeypatch.setattr(stopping.time, "process_time", lambda: cpu[0])
    monkeypatch.setattr(stopping, "thread_cpu_times", lambda: None)
    deadline = stopping.Deadline(110.0).reserving(1.0)
    wall[0], cpu[0] = 105.0, 14.0  # 5 s for 4 s: no slower than the reserve was measured at
    assert deadline.remaining() == pytest.approx(4.0)


def test_waiting_on_workers_does_not_stretch_the_reserve(monkeypatch) -> None:
    """Where the thread's CPU times are read (Linux), time blocked (on worker processes) is no
    slowness: before, 3 s of waiting for 1 s of CPU read as 3× slower and kept back one extra
    reserve (#17). Time runnable but waiting for a CPU still stretches it."""
    from schedopt.core import stopping

    wall, cpu, thread = [100.0], [10.0], [(7, 10.0, 2.0)]
    monkeypatch.setattr(stopping.time, "perf_counter", lambda: wall[0])
    monkeypatch.setattr(stopping.time, "process_time", lambda: cpu[0])
    monkeypatch.setattr(stopping, "thread_cpu_times", lambda: thread[0])
    deadline = stopping.Deadline(110.0).reserving(1.0)
    wall[0], cpu[0], thread[0] = 103.0, 11.0, (7, 11.0, 2.0)  # 1 s on a CPU, 2 s blocked
    assert deadline.stretch_factor() == 1.0
    assert deadline.remaining() == pytest.approx(6.0)
    wall[0], cpu[0], thread[0] = 106.0, 12.0, (7, 12.0, 6.0)  # then 1 s on a CPU, 3 s queued
    assert deadline.stretch_factor() == pytest.approx(3.0 / stopping.CALIBRATED_SLOWDOWN)
    wall[0], thread[0] = 106.1, (8, 12.0, 2.0)  # another thread's times say nothing: clocks
    assert deadline.stretch_factor() == pytest.approx(3.0 / stopping.CALIBRATED_SLOWDOWN)
    wall[0], cpu[0] = 106.2, 14.0  # the clocks: 6.2 s of wall for 4 s of CPU
    assert deadline.stretch_factor() == pytest.approx(6.2 / 4.0 / stopping.CALIBRATED_SLOWDOWN)
    thread[0] = (7, 12.0, 6.0)
    deadline = stopping.Deadline(110.0).reserving(1.0)
    wall[0], cpu[0], thread[0] = (106.5, 12.05, (7, 12.04, 6.01))  # blocked throughout
    assert deadline.stretch_factor() == 1.0


@pytest.mark.skipif(
    thread_cpu_times() is None, reason="the thread's CPU times are read on Linux only"
)
def test_a_parent_blocked_on_a_worker_keeps_the_plain_reserve() -> None:
    from schedopt.core import stopping
    from schedopt.executor import Task, make_executor

    with make_executor("process", jobs=1) as pool:
        (warm,) = pool.run([Task("warm", time.sleep, (0.0,))])
        assert warm.ok  # the worker started
        deadline = Deadline.after(30.0).reserving(1.0)
        (slept,) = pool.run([Task("sleep", time.sleep, (1.0,))], deadline=deadline)
        assert slept.ok
        # blocked for 1 s on the worker: the clocks alone read that as MAX_SLOWDOWN
        wall, cpu = deadline.since[:2]
        assert stopping.slowdown(wall, cpu) == stopping.MAX_SLOWDOWN
        assert deadline.stretch_factor() == 1.0


def test_a_model_is_not_handed_over_without_the_time_to_load_it() -> None:
    """CP-SAT given 0.01 s after a 10.3 s build returned after 1.13 s (loading the model):
    such a run is not started (#16)."""
    from schedopt.model.method import too_late_to_hand_over

    assert too_late_to_hand_over(Deadline.after(0.5), build_s=10.0) is not None
    assert "hand it to the solver" in (too_late_to_hand_over(Deadline.after(0.5), 10.0) or "")
    assert too_late_to_hand_over(Deadline.after(5.0), build_s=10.0) is None


def test_a_cpu_share_lasts_until_its_cpu_and_never_past_its_cap(monkeypatch) -> None:
    """A stage that needs 1.6 CPU s, with 40% of the 10 s left as its wall share and at most
    60%: quiet it ends at its wall share; where the process gets a quarter of a core it goes
    on past it until it has had its CPU, and never past 60% (the wall deadline wins, #17)."""
    from schedopt.core import stopping

    wall, cpu = [100.0], [10.0]
    monkeypatch.setattr(stopping.time, "perf_counter", lambda: wall[0])
    monkeypatch.setattr(stopping.time, "process_time", lambda: cpu[0])
    monkeypatch.setattr(stopping, "thread_cpu_times", lambda: None)
    outer = stopping.Deadline(110.0)
    quiet = outer.cpu_share(0.4, 1.6, 0.6)
    wall[0], cpu[0] = 102.0, 12.0  # quiet: its CPU by 102, the wall share still ends at 104
    assert quiet.remaining() == pytest.approx(2.0)
    wall[0], cpu[0] = 104.0, 14.0
    assert quiet.expired()

    wall[0], cpu[0] = 100.0, 10.0
    slow = outer.cpu_share(0.4, 1.6, 0.6)
    wall[0], cpu[0] = 104.5, 10.0 + 4.5 / 4  # a quarter of a core: 1.125 CPU s by the share
    assert not slow.expired()  # (a wall share would have ended at 104)
    # the CPU left, 0.475 s, at 4 wall s a CPU s: past the cap at 106, so the cap
    assert slow.remaining() == pytest.approx(1.5)
    inner = slow.earlier(0.5)  # a share inside the stage: of its end as it stands now
    assert type(inner) is stopping.Deadline and inner.remaining() == pytest.approx(1.0)
    wall[0], cpu[0] = 105.0, 11.6  # its CPU had: it ends (past its wall share)
    assert slow.expired()
    wall[0], cpu[0] = 100.0, 10.0
    starved = outer.cpu_share(0.4, 1.6, 0.6)
    wall[0], cpu[0] = 106.0, 10.5  # the cap: 60% of the time left, whatever CPU is missing
    assert starved.expired()
    with pytest.raises(stopping.DeadlineReached):
        starved.check("pricing")


def test_a_deterministic_level_gets_a_node_budget_and_the_runaway_cap() -> None:
    """HiGHS's and CBC's sessions take their deterministic limits from one place: the node
    budget (100 a second, at least 50) and 10 x the limit + 10 s of wall; outside
    deterministic mode no budget and the limit itself."""
    assert level_limits(2.0, True) == (200, 30.0)
    assert level_limits(0.1, True) == (50, 11.0)
    assert level_limits(2.0, False) == (None, 2.0)


def test_a_model_too_slow_to_build_is_refused_with_its_estimate() -> None:
    """Admission's, fair share's and MoE placement's ``too_big_for``: the variables times the
    seconds each (times ``factor``) against the time left."""
    assert too_slow_to_build(1000, 1e-3, 2.0) is None
    assert too_slow_to_build(1000, 1e-3, 2.0, factor=3.0) == (
        "not enough time to build the exact model (1,000 variables, about 3.0 s to build; "
        "2.0 s left)"
    )
    assert too_slow_to_build(1000, 1e-3, 1.0) is not None  # not strictly less: refused

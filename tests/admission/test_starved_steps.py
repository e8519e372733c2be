"""``decomp:lp`` on a starved machine (#17: 256 GPUs × 800 jobs and 1,024 × 3,200 at a third
of a core): a repair step gets its CP-SAT time in CPU seconds, and when the whole LP is not
started the coarser LP parts follow the first ones.
A starved machine is stood in for by ``tests/slower.py`` (the wall clock runs faster than the
process's CPU time) or by sleeps in the LP steps."""

from __future__ import annotations

import time

from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom, guide, repair
from schedopt.problems.admission.bound import L1Bound, l1_bound
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.lp_round import lp_round
from tests.slower import slower_machine


def _steps_seconds(monkeypatch, deterministic: bool) -> list[float]:
    """The CP-SAT limits a repair asks for on a machine 3× slower (a spy on improve_group)."""
    data = build_data(generate_custom(hosts=8, jobs=240, slots=6, seed=1))
    start = lp_round(data, l1_bound(data, 60))
    assert start is not None
    asked: list[float] = []

    def spy(sub, hint, seconds, *args, **kwargs):
        asked.append(seconds)
        time.sleep(0.05)  # CPU-free: the wall clock (3× faster) runs, the CPU time does not
        return None

    monkeypatch.setattr(repair, "improve_group", spy)
    with slower_machine(3.0):
        repair.repair(data, start, Deadline.after(30.0), max_steps=6, deterministic=deterministic)
    return asked


def test_a_repair_steps_time_is_in_cpu_seconds(monkeypatch) -> None:
    # The process got a third of a core or less (its steps sleep on a clock 3× faster): once
    # measured, a step's limit is its CPU seconds times MAX_SLOWDOWN (3) on the wall clock
    # (a step of STEP_S wall seconds got a third of its CPU and gained nothing). In
    # deterministic mode the limit is CP-SAT's deterministic time, not stretched. No step
    # gains, so both repairs ask for the same groups in the same order.
    stretched = _steps_seconds(monkeypatch, deterministic=False)
    work = _steps_seconds(monkeypatch, deterministic=True)
    assert len(stretched) == len(work) == 6
    assert work[0] == repair.STEP_S and set(work) <= {repair.STEP_S, 2 * repair.STEP_S}
    # the first step may come before anything is measured (MIN_MEASURED_S)
    assert all(abs(s - 3 * w) < 1e-9 for s, w in zip(stretched[1:], work[1:], strict=True))


class _Rungs:
    """``_by_parts`` replaced: the first rung sleeps ``first_s``, each call is recorded."""

    def __init__(self, first_s: float):
        self.first_s = first_s
        self.calls: list[tuple[int, bool]] = []

    def __call__(self, data, seconds, deadline, part_jobs=guide.LP_PART_JOBS, scout=True):
        self.calls.append((part_jobs, scout))
        if len(self.calls) == 1:
            time.sleep(self.first_s)
        return L1Bound(None, {len(self.calls): 1.0}, True, 0.0)


def _staged_with_first_rung(monkeypatch, first_s: float, seconds: float):
    data = build_data(generate_custom(hosts=8, jobs=400, slots=6, seed=0))
    rungs = _Rungs(first_s)
    whole: list[float] = []

    def whole_lp(sub, limit, *args, **kwargs):
        whole.append(limit)
        return L1Bound(None, {}, False, limit)

    monkeypatch.setattr(guide, "_by_parts", rungs)
    monkeypatch.setattr(guide, "l1_bound", whole_lp)
    lps, ran_whole = guide._staged(data, seconds, None)
    return lps, ran_whole, rungs.calls, whole


def test_the_coarser_parts_follow_when_the_whole_lp_is_not_started(monkeypatch) -> None:
    # The first parts took a third of the LP phase: less than WHOLE_OVER_PARTS (3) times
    # that is left, at least COARSER_OVER_PARTS (2) times: no whole LP, the coarser parts
    # (LP_PART_JOBS, no second scout) after the first, whose point stays the rounding's.
    lps, ran_whole, calls, whole = _staged_with_first_rung(monkeypatch, 1.0, 3.5)
    assert not whole and not ran_whole
    assert calls == [(guide.STAGE_PART_JOBS, True), (guide.LP_PART_JOBS, False)]
    assert [lp.admit for lp in lps] == [{1: 1.0}, {2: 1.0}]


def test_no_coarser_parts_without_twice_the_first_parts_time(monkeypatch) -> None:
    lps, ran_whole, calls, whole = _staged_with_first_rung(monkeypatch, 1.0, 2.6)
    assert not whole and not ran_whole
    assert calls == [(guide.STAGE_PART_JOBS, True)]
    assert len(lps) == 1


def test_the_whole_lp_follows_the_first_parts_given_the_time(monkeypatch) -> None:
    lps, ran_whole, calls, whole = _staged_with_first_rung(monkeypatch, 0.3, 3.0)
    assert ran_whole and len(whole) == 1
    assert calls == [(guide.STAGE_PART_JOBS, True)]
    assert len(lps) == 2

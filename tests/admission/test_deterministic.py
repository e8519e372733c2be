"""Reproducible solving (issue 7, item 2): ``deterministic=True`` gives the same answer on a
busy or a quiet machine, and a replay run twice gives the same report.

A busier machine is simulated by a wall clock that runs fast: every wall-clock budget
(``auto``'s heuristic share, CP-SAT's level shares, LNS steps) shrinks, as it would on a machine
that many times slower. Without the deterministic option (checked by hand) the ``cpsat`` and
``auto`` answers change (at 4× ``auto(cpsat < heuristic:edf)`` becomes ``auto(cpsat)`` with
another plan) and so do the replay reports.
"""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt.problems.admission import generate
from schedopt.problems.admission.driver import replay

from .test_driver import CLUSTER, _config, _jobs

SPEEDS = (4.0, 20.0)


def _on_a_slower_machine(monkeypatch: pytest.MonkeyPatch, speed: float) -> None:
    real, t0 = time.perf_counter, time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: t0 + (real() - t0) * speed)


def _answer(result) -> tuple:
    return result.method, result.status, result.objectives, result.solution.model_dump_json()


@pytest.fixture(scope="module")
def medium():
    return generate("medium", seed=3)  # CP-SAT stops on the limit here (FEASIBLE)


@pytest.mark.parametrize("method", ["cpsat", "auto"])
def test_deterministic_solve_does_not_depend_on_the_wall_clock(
    monkeypatch: pytest.MonkeyPatch, medium, method: str
) -> None:
    quiet = schedopt.solve(medium, method, time_limit_s=1.0, deterministic=True)
    assert quiet.solution is not None
    for speed in SPEEDS:
        with monkeypatch.context() as m:
            _on_a_slower_machine(m, speed)
            busy = schedopt.solve(medium, method, time_limit_s=1.0, deterministic=True)
        assert _answer(quiet) == _answer(busy), speed


def _fingerprint(report) -> tuple:
    return (
        [(r.round, r.time_s, r.admitted, r.rejected, r.running, r.status) for r in report.rounds],
        report.outcomes,
        report.allocations,
        report.guarantees,
        report.dropped,
        report.summary().split("\n")[1:],  # all but the solve time
    )


@pytest.mark.parametrize("method", ["cpsat", "auto"])
def test_a_deterministic_replay_gives_the_same_report_twice(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    cfg = _config(method, deterministic=True)
    first = replay(CLUSTER, _jobs(), cfg)
    assert first.slo_admitted > 0
    for speed in (*SPEEDS, 200.0):
        with monkeypatch.context() as m:
            _on_a_slower_machine(m, speed)
            again = replay(CLUSTER, _jobs(), cfg)
        assert _fingerprint(first) == _fingerprint(again), speed


@pytest.mark.slow  # two runs of 5 s limits: 5-6 s
def test_decomp_lp_runs_its_repair_steps_on_any_machine() -> None:
    """``decomp:lp`` in deterministic mode (#17): the join's repair takes ``repair_steps`` of
    the limit, each on CP-SAT's deterministic time, and the guide's LPs run to their end, so
    a contested instance (its start below the bound: the repair has work) gets the same steps
    and the same answer on a machine emulated 4 x slower (tests/slower.py)."""
    from schedopt.problems.admission import generate_custom
    from schedopt.problems.admission.lpdecomp import repair_steps
    from tests.slower import slower_machine

    inst = generate_custom(hosts=8, jobs=200, slots=12, seed=3)
    limit = 5.0
    quiet = schedopt.solve(inst, "decomp:lp", time_limit_s=limit, deterministic=True)
    assert "deterministic" not in quiet.stats  # honoured: nothing to say
    assert quiet.best_bound is not None and quiet.objective < quiet.best_bound  # work left
    assert quiet.stats["repair_steps"] == repair_steps(limit) == 3
    with slower_machine(4.0):
        busy = schedopt.solve(inst, "decomp:lp", time_limit_s=limit, deterministic=True)
    assert _answer(quiet) == _answer(busy)
    assert quiet.best_bound == busy.best_bound
    steps = ("repair_steps", "repair_improved", "repair_lp_steps", "repair_lp_rounded")
    assert [quiet.stats[k] for k in steps] == [busy.stats[k] for k in steps]

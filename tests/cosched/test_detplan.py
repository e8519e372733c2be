"""``colgen``'s and ``auto``'s plan in deterministic mode (formulations/cosched.md,
"Deterministic mode"): every step stops on its work, the wall clock only a runaway cap, so
the same plan and bound come back on a machine 20 times slower (#17)."""

from __future__ import annotations

import functools

import pytest

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.cosched import generate_custom
from tests.timing import slowdown

#: The emulated machine's slowdown, counted from a quiet machine: the limits are cut by what
#: this leaves over the machine's own slowdown now (tests/timing.py), so a run beside other work
#: is not emulated 20 x slower than it already is (at load 17, 8 x 20: the polishing's ladder
#: was cut by the runaway cap, 5 steps against 3, on main 4da5eec).
SLOWER = 20
#: What ``colgen``'s plan steps record in a result's stats (decomp.py).
PLAN_STEPS = ("dive", "ladder_steps", "polish_columns", "polish_ladder_steps", "polished")


@functools.cache
def _instance():
    # 40 jobs: the master MIP over the polished columns has a root of seconds (unbudgeted it
    # took 6.7 s to close here; a wall-clock share stopped it on the slower machine)
    return generate_custom(24, 24, 32, 40, 1, (0, 1))


def _plan(result) -> tuple:
    s = result.solution
    assert s is not None
    return s, result.objectives, result.best_bound


def _slower(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every wall-clock limit cut so that the run is SLOWER times slower than on a quiet
    machine (by SLOWER over the machine's slowdown now, at least 1): CP-SAT's and HiGHS's
    own time limits, and every share of the deadline a step gets (Deadline.share). The
    deadline itself (the runaway cap, 10 x the limit + 10 s) is kept: the run's fixed work
    must fit in it, and it is what a slower machine may reach."""
    import highspy
    from ortools.sat.python import cp_model

    factor = max(1.0, SLOWER / slowdown())
    solve = cp_model.CpSolver.solve

    def cpsat(self, *args, **kwargs):
        self.parameters.max_time_in_seconds = self.parameters.max_time_in_seconds / factor
        return solve(self, *args, **kwargs)

    set_option = highspy.Highs.setOptionValue

    def highs(self, name, value):
        return set_option(self, name, value / factor if name == "time_limit" else value)

    share = Deadline.share

    def cut(self, fraction: float, reserve_s: float = 0.0) -> float:
        return share(self, fraction, reserve_s) / factor

    monkeypatch.setattr(cp_model.CpSolver, "solve", cpsat)
    monkeypatch.setattr(highspy.Highs, "setOptionValue", highs)
    monkeypatch.setattr(Deadline, "share", cut)


@pytest.mark.slow  # two deterministic runs each: 13-16 s a method on a quiet machine
@pytest.mark.parametrize("method", ["colgen", "auto"])
def test_deterministic_plan_does_not_depend_on_the_machines_speed(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice in deterministic mode, the second run with every wall-clock limit cut 20 times:
    the same plan (groups, options, starts), objectives and bound. Until 2026-12-05 the
    master MIP stopped on a share of the wall clock (HiGHS has no deterministic time limit)
    and, 20 times slower, answered another plan here. The limit (runaway cap 10 x 20 + 10 s,
    10.5 s at 20 x) leaves the run's fixed work (3 s quiet) a margin of 3 x."""
    inst = _instance()

    def run():
        return schedopt.solve(
            inst, method, time_limit_s=10, deterministic=True, params={"rounds": 5}
        )

    first = run()
    _slower(monkeypatch)
    second = run()
    assert first.status is second.status is schedopt.Status.FEASIBLE
    assert _plan(first) == _plan(second)
    # the plan's steps (the dive, the ladder of sub-MIPs on node budgets, polishing and its
    # ladder) did the same work: ran, and alike
    assert first.stats["ladder_steps"] >= 1 and "dive" in first.stats
    assert {k: first.stats.get(k) for k in PLAN_STEPS} == {
        k: second.stats.get(k) for k in PLAN_STEPS
    }

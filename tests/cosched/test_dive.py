"""The restricted master's plan (formulations/cosched.md, "Diving and the ladder of
sub-MIPs"): the dive and the ladder pick plans of the master's scheduled groups only, never
worse than where they start, and the ladder run to the end is the MIP over every column (#17)."""

from __future__ import annotations

import functools

import pytest

import schedopt
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.executor import make_executor
from schedopt.problems.cosched import colgen, decomp, dive, generate_custom
from schedopt.problems.cosched.colgen import Column, Master
from schedopt.problems.cosched.heuristics import heuristic_data


@functools.cache
def _columns(seed: int) -> tuple:
    """Scheduled groups of a few rounds of column generation from the packing plan, and that
    plan's groups (deterministic mode, far deadlines)."""
    inst = generate_custom(12, 12, 16, 16, seed, (0, 1))
    hint = schedopt.solve(inst, "heuristic:packing", time_limit_s=5, deterministic=True).solution
    data = heuristic_data(inst)
    start, plan = decomp._start(inst, data, SolveOptions(hint=hint), Deadline.after(60))
    with make_executor("inline") as ex:
        gen = colgen.generate(data, start, Deadline.after(600), ex, Deadline.after(600), 6, True)
    return data, gen.columns, plan


def _master(seed: int) -> Master:
    data, columns, _ = _columns(seed)
    return Master.of(data, columns)


def _assert_plan(master: Master, plan: list[Column]) -> None:
    """Every job in exactly one group, every group a column of the master, the pools' hosts
    not exceeded (C1, C4: the master's rows)."""
    data = master.data
    jobs = sorted(j for c in plan for j, _ in c.members)
    assert jobs == list(range(len(data.jobs)))
    assert all(Master.key(c) in master.keys for c in plan)
    for p, hosts in enumerate(data.hosts):
        assert sum(c.hosts[p] for c in plan) <= hosts


@pytest.mark.parametrize("seed", [0, 1])
def test_the_dive_answers_a_plan_of_the_columns_and_puts_the_bounds_back(seed: int) -> None:
    master = _master(seed)
    lp = master.solve(60.0)
    assert lp is not None
    plan = dive.dive(master, Deadline.after(60))
    assert plan is not None
    _assert_plan(master, plan)
    assert dive.cost(master.data, plan) >= lp[0] - 1e-6
    after = master.solve(60.0)  # every fixed column free again: the same LP
    assert after is not None and after[0] == pytest.approx(lp[0], abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_ladder_run_to_the_end_is_the_mip_over_every_column(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From 5 columns growing by 1.3 a step, every step proven on this small master: the
    ladder climbs to every column and answers the MIP's optimum over all of them, from the
    packing plan (never above it)."""
    data, _, plan = _columns(seed)
    monkeypatch.setattr(dive, "LADDER_FIRST", 5)
    master = _master(seed)
    got, steps = dive.ladder(master, plan, Deadline.after(600))
    _assert_plan(master, got)
    assert steps >= 5
    assert dive.cost(data, got) <= dive.cost(data, plan) + 1e-9
    whole = _master(seed)
    whole.solve(60.0)
    best, proven = dive.integer(whole, 600.0)
    assert proven and best is not None
    assert dive.cost(data, got) == pytest.approx(dive.cost(data, best), abs=1e-6)


def test_the_ladder_stops_at_the_first_step_not_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step not proven optimal (its time or node budget) ends the ladder: the next, larger
    step would stop as early and cost the time of the steps after it."""
    data, _, plan = _columns(0)
    monkeypatch.setattr(dive, "LADDER_FIRST", 5)
    real = dive.integer
    calls: list[int] = []

    def unproven(master, seconds, start=None, seed=None):
        calls.append(len(master.columns))
        return real(master, seconds, start, seed)[0], len(calls) < 2

    monkeypatch.setattr(dive, "integer", unproven)
    got, steps = dive.ladder(_master(0), plan, Deadline.after(600))
    assert steps == 2 and len(calls) == 2 and calls[0] < calls[1]
    assert dive.cost(data, got) <= dive.cost(data, plan) + 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_polishing_also_schedules_the_dive_plans_neighbours(seed: int) -> None:
    """Polishing adds the groups one step from the dive's plan too, when it differs from the
    ladder's: more columns than from the ladder's plan alone, and never a dearer plan than
    the ladder's."""
    data, columns, _ = _columns(seed)
    master = _master(seed)
    dived = dive.dive(master, Deadline.after(60))
    assert dived is not None
    chosen, _ = dive.ladder(master, dived, Deadline.after(60), 0)
    assert {Master.key(c) for c in chosen} != {Master.key(c) for c in dived}

    def polished(also):
        stats: dict[str, float] = {}
        plan = decomp._polished(data, columns, chosen, lambda f: 60.0, stats, 0, also)
        return plan, stats["polish_columns"]

    _, n_alone = polished(None)
    both, n_both = polished(dived)
    assert n_both > n_alone
    assert dive.cost(data, both) <= dive.cost(data, chosen) + 1e-9

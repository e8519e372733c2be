"""``decomp:physical`` with ``deterministic=True`` (#17; budgets.py): widening stops on budgets
of work fixed by the limit, every phase works to the solve's deadline itself (the runaway
cap), and the stats, not only the answer, are the same on a slower machine (the answer itself:
tests/conformance/test_deterministic.py)."""

from __future__ import annotations

import time

import pytest

import schedopt
from schedopt.core.stopping import runaway_cap_s
from schedopt.problems.reconfig import budgets, columns, generate
from tests.slower import slower_machine


def _w7_targets(monkeypatch) -> list[tuple[int, float, int | None]]:
    """Every W7 target tried from now on: (target, its deadline's end, its node budget)."""
    seen: list[tuple[int, float, int | None]] = []
    real = columns.Columns.plan

    def plan(self, lam, deadline, nodes=None):
        seen.append((lam, deadline.end, nodes))
        return real(self, lam, deadline, nodes)

    monkeypatch.setattr(columns.Columns, "plan", plan)
    return seen


def test_w7_tries_its_budget_of_targets_each_on_its_node_budget(monkeypatch) -> None:
    seen = _w7_targets(monkeypatch)
    began = time.perf_counter()
    result = schedopt.solve(
        generate("tiny", 0), "decomp:physical", time_limit_s=1.0, deterministic=True
    )
    work = budgets.work_of(1.0)
    assert result.stats.get("widened") == 1.0
    assert len(seen) == work.targets  # (at 1 s W7 would go on: 3 targets at 3 s)
    assert {nodes for _, _, nodes in seen} == {work.nodes}
    # no share of the clock: every target works to the runaway cap itself (W7's share of
    # widening, SHORT_COLUMN_SHARE = 0.3 of it, would end before half of it)
    assert min(end for _, end, _ in seen) > began + 0.5 * runaway_cap_s(1.0)


def test_w7_shares_the_clock_outside_deterministic_mode(monkeypatch) -> None:
    seen = _w7_targets(monkeypatch)
    schedopt.solve(generate("tiny", 0), "decomp:physical", time_limit_s=1.0)
    assert seen and {nodes for _, _, nodes in seen} == {None}


@pytest.mark.parametrize("limit_s", [1.0, 3.0])
def test_the_stats_do_not_depend_on_the_machines_speed(limit_s: float) -> None:
    """The same plan, bound and stats (none of them a time) 20 times slower."""
    inst = generate("tiny", 0)
    quiet = schedopt.solve(inst, "decomp:physical", time_limit_s=limit_s, deterministic=True)
    with slower_machine(20.0):
        busy = schedopt.solve(inst, "decomp:physical", time_limit_s=limit_s, deterministic=True)
    assert quiet.stats.get("widened") == 1.0
    assert quiet.solution == busy.solution
    assert (quiet.best_bound, quiet.stats) == (busy.best_bound, busy.stats)

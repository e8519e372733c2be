"""The shared decomposition driver and the weak-duality LP bound (#17)."""

from __future__ import annotations

import itertools
import os
import time

import numpy as np
import pytest

from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.executor import Task
from schedopt.model import decompose
from schedopt.model.lp_bound import Relaxation, StagedLp, dual_bound, solve_relaxation
from tests.timing import promised_s


def _knapsack() -> Relaxation:
    # max 5a + 4b + 3c  s.t.  2a + 3b + c <= 4,  a + b + c >= 1,  a, b, c in [0, 1]
    return Relaxation(
        c=np.array([5.0, 4.0, 3.0]),
        starts=np.array([0, 3, 6]),
        cols=np.array([0, 1, 2, 0, 1, 2]),
        coefs=np.array([2.0, 3.0, 1.0, 1.0, 1.0, 1.0]),
        lo=np.array([-np.inf, 1.0]),
        hi=np.array([4.0, np.inf]),
        lb=np.zeros(3),
        ub=np.ones(3),
    )


def _best_vertex_value(r: Relaxation) -> float:
    """The LP optimum by brute force over a fine grid (the bound must be above it)."""
    best = -np.inf
    grid = np.linspace(0.0, 1.0, 21)
    for x in itertools.product(grid, repeat=len(r.c)):
        v = np.asarray(x)
        rows = [
            float(r.coefs[r.starts[i] : r.starts[i + 1]] @ v[r.cols[r.starts[i] : r.starts[i + 1]]])
            for i in range(len(r.lo))
        ]
        if all(r.lo[i] - 1e-9 <= rows[i] <= r.hi[i] + 1e-9 for i in range(len(rows))):
            best = max(best, float(r.c @ v))
    return best


def test_any_multipliers_give_a_bound() -> None:
    r = _knapsack()
    best = _best_vertex_value(r)
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert dual_bound(r, rng.normal(scale=3.0, size=2)) >= best - 1e-9


def test_the_lp_bound_is_the_lp_optimum() -> None:
    r = _knapsack()
    lp = solve_relaxation(r, time_limit_s=10)
    assert lp.solved
    assert lp.bound == pytest.approx(28 / 3)  # a = c = 1, b = 1/3
    assert lp.bound >= _best_vertex_value(r) - 1e-9


def test_a_staged_lp_holds_each_stage_and_starts_from_its_basis() -> None:
    # stage 1: max 5a + 4b + 3c = 28/3; stage 2 with it held: max b (b = 1/3 is forced, as
    # 5a + 4b + 3c = 28/3 needs a = c = 1); stage 3, min c, still under the held row
    lp = StagedLp(_knapsack())
    x = lp.maximise(np.array([5.0, 4.0, 3.0]), 10.0)
    assert x is not None and float(np.array([5.0, 4.0, 3.0]) @ x) == pytest.approx(28 / 3)
    lp.hold(np.array([0, 1, 2]), np.array([5.0, 4.0, 3.0]), 28 / 3 - 1e-9, np.inf)
    y = lp.maximise(np.array([0.0, 1.0, 0.0]), 10.0)
    assert y is not None and y[1] == pytest.approx(1 / 3) and y[0] == pytest.approx(1.0)
    z = lp.maximise(np.array([0.0, 0.0, -1.0]), 10.0)  # min c, with the first stage held
    assert z is not None and z[2] == pytest.approx(1.0)
    assert lp.maximise(np.array([1.0, 0.0, 0.0]), 0.0) is None  # no time: no point


def _sleep(budget: decompose.Budget) -> None:
    time.sleep(budget.deadline().remaining())


def _ok(x: int, seconds: object) -> int:
    return x


def _boom(x: int, seconds: object) -> int:
    raise RuntimeError(f"part {x} failed")


def test_the_driver_joins_what_came_back_and_names_what_did_not() -> None:
    seen: dict[str, object] = {}

    def join(answers, deadline):
        seen.update(answers)
        return ("joined", sorted(answers)), {}

    d = decompose.Decomposition(
        part=lambda p, budget: Task(f"part{p}", _boom if p == 1 else _ok, (p, budget)),
        count=3,
        join=join,
        bound=lambda seconds: decompose.Bound(7.0),
    )
    out = decompose.run(d, Deadline.after(5))
    assert out.status is Status.FEASIBLE
    assert out.bound == 7.0
    assert seen == {"part0": 0, "part2": 2}
    assert "part1: RuntimeError: part 1 failed" in out.stats["parts_failed"]


def test_budgets_fit_the_deadline() -> None:
    budgets: list[float] = []

    def part(p: int, budget: decompose.Budget) -> Task:
        budgets.append(budget.seconds)
        return Task(f"part{p}", _sleep, (budget,))

    d = decompose.Decomposition(
        part=part,
        count=4,
        join=lambda answers, deadline: (None, {}),
        bound=lambda seconds: decompose.Bound(None),
    )
    started = time.perf_counter()
    out = decompose.run(d, Deadline.after(1.0))
    assert time.perf_counter() - started <= promised_s(1.0)
    assert out.status is Status.NO_SOLUTION and out.explanation
    assert len(budgets) == 4 and sum(budgets) <= 1.0


def test_a_budget_ends_at_the_callers_end_on_this_machine() -> None:
    # a worker that starts late (start-up, a queue) gets what is left, not its whole share
    late = decompose.Budget(5.0, until=time.monotonic() + 0.2)
    assert late.deadline().remaining() <= 0.2
    assert decompose.Budget(5.0).deadline().remaining() > 4.0


@pytest.mark.slow
def test_parts_in_a_process_pool_keep_the_deadline_and_leave_no_worker() -> None:
    d = decompose.Decomposition(
        part=lambda p, budget: Task(f"part{p}", _sleep, (budget,)),
        count=4,
        join=lambda answers, deadline: (sorted(answers), {}),
        bound=lambda seconds: decompose.Bound(None),
    )
    started = time.perf_counter()
    out = decompose.run(d, Deadline.after(3.0), executor="process", workers=2)
    assert time.perf_counter() - started <= promised_s(3.0)
    assert out.stats["executor"] == "process"
    assert _children() == []


def _children() -> list[int]:
    """Live child processes of this one (Linux /proc)."""
    me, out = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                out.append(int(name))
    return out

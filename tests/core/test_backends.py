"""The solver adapters report status, objective and bound honestly, in the model's own sense."""

from __future__ import annotations

import random
import time

import pulp
import pytest

from schedopt.backends.milp import MilpSolver, solve_pulp
from schedopt.core.status import Status
from tests.timing import promised_s, quiet_s


def knapsack(sense: int, n: int, seed: int = 3) -> pulp.LpProblem:
    rng = random.Random(seed)
    prob = pulp.LpProblem("knapsack", sense)
    x = [prob.add_variable(f"x{i}", cat="Binary") for i in range(n)]
    sign = 1 if sense == pulp.LpMaximize else -1
    prob += pulp.lpSum(sign * rng.randint(50, 100) * v for v in x)
    for _ in range(30):
        prob += pulp.lpSum(rng.randint(1, 50) * v for v in x) <= n * 5
    return prob


@pytest.mark.parametrize("solver", list(MilpSolver))
@pytest.mark.parametrize("sense", [pulp.LpMaximize, pulp.LpMinimize])
def test_time_limited_run_is_feasible_with_a_bound_on_the_right_side(solver, sense) -> None:
    prob = knapsack(sense, 2000)
    started = time.perf_counter()
    run = solve_pulp(prob, solver, time_limit_s=1.0)
    assert time.perf_counter() - started < promised_s(1.0)
    assert run.status is not Status.OPTIMAL  # never "optimal" on a time-out
    if run.status is Status.NO_SOLUTION and quiet_s(1.0) < 0.5:
        # A first incumbent within 1 s is a speed (0.1-0.2 s quiet): on a machine that gives
        # this process less than half of a quiet one, nothing in time is honest too.
        pytest.skip(f"no incumbent in 1 s at slowdown {1.0 / quiet_s(1.0):.1f}")
    assert run.status is Status.FEASIBLE
    assert run.objective is not None and run.bound is not None
    if sense == pulp.LpMaximize:
        assert run.bound >= run.objective
    else:
        assert run.bound <= run.objective
    assert pulp.value(prob.objective) == pytest.approx(run.objective)


@pytest.mark.parametrize("solver", list(MilpSolver))
def test_small_run_is_optimal_and_infeasible_is_infeasible(solver) -> None:
    prob = knapsack(pulp.LpMaximize, 12)
    run = solve_pulp(
        prob, solver, time_limit_s=30
    )  # tiny: solved at once; the margin is for a loaded machine
    assert run.status is Status.OPTIMAL and run.bound == pytest.approx(run.objective)
    bad = pulp.LpProblem("bad", pulp.LpMaximize)
    y = bad.add_variable("y", 0, 1, cat="Integer")
    bad += y
    bad += y >= 2
    assert solve_pulp(bad, solver, time_limit_s=30).status is Status.INFEASIBLE


@pytest.mark.parametrize("solver", list(MilpSolver))
def test_hint_is_accepted(solver) -> None:
    prob = knapsack(pulp.LpMaximize, 30)
    hint = {v: 0.0 for v in prob.variables()}
    assert solve_pulp(prob, solver, time_limit_s=10, hint=hint).status is Status.OPTIMAL


def test_cpsat_without_a_solution_does_not_report_its_default_bound() -> None:
    from ortools.sat.python import cp_model

    from schedopt.backends import cpsat as backend

    model = cp_model.CpModel()
    xs = [model.new_bool_var(f"x{i}") for i in range(200_000)]
    model.add(sum(xs[:100_000]) <= 5_000)
    model.maximize(sum(xs))
    run = backend.run(model, backend.make_solver(time_limit_s=0.02))
    if run.status is Status.NO_SOLUTION:
        assert run.bound is None or run.bound >= 105_000

"""B3U (formulations/fairshare.md): each unit's covering minimum is exact, alone and with
other units' recursions run beside it; the bound is below L3 of the exact optimum on tiny
rounds at any multipliers and along their ray (``unit_search``), at least B3L at the same
ones, and ``decomp`` reports its search where it is larger."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.fairshare import generate_custom, join_levels
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.l3_bound import arrays, lagrangian, need_gpus
from schedopt.problems.fairshare.l3_units import (
    covering_min,
    covering_minima,
    unit_bound,
    unit_search,
)
from schedopt.problems.fairshare.strategies import instances

from ..timing import PROOF_LIMIT_S

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(
    jobs=st.lists(
        st.lists(st.tuples(st.sampled_from([1, 2, 4, 8]), st.floats(-50, 50)), max_size=3),
        min_size=1,
        max_size=5,
    ),
    need=st.integers(0, 12),
)
def test_the_covering_minimum_is_the_enumerated_one(jobs, need: int) -> None:
    width = max(1, max(len(j) for j in jobs))
    costs = np.full((len(jobs), width), np.inf)
    gpus = np.zeros((len(jobs), width))
    for r, options in enumerate(jobs):
        for o, (n, c) in enumerate(options):
            costs[r, o], gpus[r, o] = c, n
    assert covering_min(costs, gpus, need) == pytest.approx(_enumerated(jobs, need), abs=1e-9)


def _enumerated(jobs: list[list[tuple[int, float]]], need: int) -> float:
    best = np.inf
    for pick in itertools.product(*[[None, *range(len(j))] for j in jobs]):
        got = sum(jobs[r][o][0] for r, o in enumerate(pick) if o is not None)
        if got >= need:
            best = min(best, sum(jobs[r][o][1] for r, o in enumerate(pick) if o is not None))
    return best


@SETTINGS
@given(
    units=st.lists(
        st.tuples(
            st.lists(
                st.lists(st.tuples(st.sampled_from([1, 2, 4]), st.floats(-50, 50)), max_size=3),
                min_size=1,
                max_size=4,
            ),
            st.integers(0, 10),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_the_units_recursions_run_together_are_each_enumerated_one(units) -> None:
    rows = [(v, job) for v, (jobs, _) in enumerate(units) for job in jobs]
    rows = rows[::-1]  # (the units' rows interleaved with each other's order)
    width = max(1, max(len(job) for _, job in rows))
    costs, gpus = np.full((len(rows), width), np.inf), np.zeros((len(rows), width))
    for r, (_, options) in enumerate(rows):
        for o, (n, c) in enumerate(options):
            costs[r, o], gpus[r, o] = c, n
    need = np.array([float(m) for _, m in units] + [3.0])  # (a last unit without rows: 0)
    got = covering_minima(costs, gpus, np.array([v for v, _ in rows]), need)
    for v, (jobs, m) in enumerate(units):
        assert got[v] == pytest.approx(_enumerated(jobs, m), abs=1e-9)
    assert got[-1] == 0.0


def _at_optimum(inst, mu: list[float]):
    """The proven optimum's L3 and what a bound at ``μ`` takes (arrays, GPUs needed at L1*,
    the prices, the floor at L2*), or None where HiGHS proves no optimum in the limit."""
    best = schedopt.solve(inst, "milp:highs", time_limit_s=PROOF_LIMIT_S)
    if best.status is not Status.OPTIMAL:
        return None
    l1, l2, l3 = best.objectives
    data = build_data(inst, check_size=False)
    a = arrays(data)
    return l3, a, need_gpus(data, l1), np.asarray(mu[: len(a.capacity)]), l2 * (1 - 1e-9)


@SETTINGS
@given(
    inst=instances(max_jobs=5),
    lam=st.floats(0.0, 500.0),
    mu=st.lists(st.floats(0.0, 100.0), min_size=4, max_size=4),
)
def test_b3us_search_is_below_the_optimum_and_above_its_start(inst, lam, mu) -> None:
    at = _at_optimum(inst, mu)
    if at is None:
        return
    l3, a, need, prices, floor = at
    value = unit_search(a, need, floor, lam, prices, Deadline.after(30))
    assert value <= l3 + 1e-6 * max(1.0, l3)
    assert value >= unit_bound(a, need, floor, lam, prices) - 1e-9


@SETTINGS
@given(
    inst=instances(max_jobs=5),
    lam=st.floats(0.0, 500.0),
    mu=st.lists(st.floats(0.0, 100.0), min_size=4, max_size=4),
    rho=st.floats(0.0, 100.0),
)
def test_b3u_is_below_the_optimum_and_above_b3l(inst, lam: float, mu: list[float], rho) -> None:
    at = _at_optimum(inst, mu)
    if at is None:
        return
    l3, a, need, prices, floor = at
    value = unit_bound(a, need, floor, lam, prices)
    assert value <= l3 + 1e-6 * max(1.0, l3)
    # B3L at the same (λ, μ) and any ρ (here one for every counted unit) is never above it
    at_rho = np.where(need > 0, rho, 0.0)
    cost = a.base - lam * a.eff + prices[a.gtype] * a.n - at_rho[a.unit][:, None] * a.n
    b3l = (
        a.restart_constant
        + lam * floor
        - float(prices @ a.capacity)
        + float(at_rho @ need)
        + float(np.minimum(cost.min(axis=1), 0.0).sum())
    )
    assert b3l <= value + 1e-6 * max(1.0, abs(value))
    searched, _ = lagrangian(a, need, floor, lam, prices)
    assert searched <= value + 1e-6 * max(1.0, abs(value))


def test_decomp_reports_b3u_where_it_is_above_b3l(monkeypatch) -> None:
    seen: list[float] = []
    start: list[float] = []

    def recorded(*args):  # type: ignore[no-untyped-def]
        seen.append(unit_search(*args))
        start.append(unit_bound(*args[:5]))  # at B3L's (λ, μ), where the search starts
        return seen[-1]

    monkeypatch.setattr(join_levels, "unit_search", recorded)
    dual_values: list[float] = []
    l3_dual = join_levels.l3_dual

    def dual(*args):  # type: ignore[no-untyped-def]
        out = l3_dual(*args)
        dual_values.append(out.value)
        return out

    monkeypatch.setattr(join_levels, "l3_dual", dual)
    inst = generate_custom(gpus=1024, tenants=20, jobs=1500, seed=0)
    got = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert len(seen) == 1 and len(dual_values) == 1
    assert seen[0] >= start[0] > dual_values[0] + 1.0  # the units' rows kept: above the LP
    assert got.stats["L3_bound"] == pytest.approx(seen[0])
    assert got.stats["L3_bound"] <= got.objectives[2]

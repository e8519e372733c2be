"""B3L (formulations/fairshare.md): below L3 of the exact optimum on tiny rounds, at the
multipliers it searches and at any others; L1 settled only where it is the optimum's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.bound import bounds
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.l3_bound import (
    arrays,
    l1_settled,
    l2_upper_bound,
    l3_lower_bound,
    lagrangian,
    need_gpus,
)
from schedopt.problems.fairshare.strategies import instances

from ..timing import PROOF_LIMIT_S

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)


def _optimum(inst):
    result = schedopt.solve(inst, "milp:highs", time_limit_s=PROOF_LIMIT_S)
    return result if result.status is Status.OPTIMAL else None


@SETTINGS
@given(inst=instances(max_jobs=5))
def test_b3l_is_at_most_the_optimums_l3(inst) -> None:
    best = _optimum(inst)
    if best is None:
        return
    l1, l2, l3 = best.objectives
    data = build_data(inst, check_size=False)
    whole = bounds(data)
    need = need_gpus(data, l1)
    for floor in (None, l2 * (1 - 1e-9)):
        value = l3_lower_bound(data, need, floor, np.asarray(whole.prices), Deadline.after(30))
        assert value <= l3 + 1e-6 * max(1.0, l3)
        assert value >= whole.l3 - 1e-9  # never below B3


@SETTINGS
@given(
    inst=instances(max_jobs=5),
    lam=st.floats(0.0, 500.0),
    mu=st.lists(st.floats(0.0, 100.0), min_size=4, max_size=4),
)
def test_any_multipliers_give_a_bound(inst, lam: float, mu: list[float]) -> None:
    # weak duality: the bound holds at every λ, μ (ρ by bisection), not only the searched ones
    best = _optimum(inst)
    if best is None:
        return
    l1, l2, l3 = best.objectives
    data = build_data(inst, check_size=False)
    a = arrays(data)
    prices = np.asarray(mu[: len(a.capacity)])
    value, _ = lagrangian(a, need_gpus(data, l1), l2 * (1 - 1e-9), lam, prices)
    assert value <= l3 + 1e-6 * max(1.0, l3)


@SETTINGS
@given(inst=instances(max_jobs=5))
def test_l1_is_settled_only_at_the_optimums_share(inst) -> None:
    best = _optimum(inst)
    if best is None:
        return
    data = build_data(inst, check_size=False)
    b1 = bounds(data).l1
    worse = schedopt.solve(inst, "heuristic:astraea", time_limit_s=5)
    if worse.solution is not None and worse.objectives[0] < best.objectives[0] - 1e-9:
        assert not l1_settled(data, worse.objectives[0], b1)


def test_decomp_reports_b3l_behind_its_plan() -> None:
    inst = generate_custom(gpus=256, tenants=12, jobs=300, seed=0)
    result = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert result.solution is not None
    l3 = result.objectives[2]
    assert result.stats["L3_bound_rows"] == "L1 fix, L2 floor"  # B1 settles L1 here
    assert 0 < result.stats["L3_bound"] <= l3


@SETTINGS
@given(inst=instances(max_jobs=5))
def test_b2l_is_at_least_the_optimums_l2(inst) -> None:
    # behind the optimum's own L1 and behind a heuristic's (lower) one: both hold L2*
    best = _optimum(inst)
    if best is None:
        return
    l1, l2, _ = best.objectives
    data = build_data(inst, check_size=False)
    whole = bounds(data)
    shares = [l1]
    worse = schedopt.solve(inst, "heuristic:astraea", time_limit_s=5)
    if worse.solution is not None:
        shares.append(worse.objectives[0])
    for t_hat in shares:
        value = l2_upper_bound(
            data, need_gpus(data, t_hat), np.asarray(whole.prices), Deadline.after(30)
        )
        assert value >= l2 - 1e-6 * max(1.0, l2)


@SETTINGS
@given(
    inst=instances(max_jobs=5),
    mu=st.lists(st.floats(0.0, 100.0), min_size=4, max_size=4),
)
def test_b2l_at_any_prices(inst, mu: list[float]) -> None:
    best = _optimum(inst)
    if best is None:
        return
    l1, l2, _ = best.objectives
    data = build_data(inst, check_size=False)
    a = arrays(data)
    value, _ = lagrangian(
        replace(a, base=np.where(np.isfinite(a.base), 0.0, np.inf), restart_constant=0.0),
        need_gpus(data, l1),
        0.0,
        1.0,
        np.asarray(mu[: len(a.capacity)]),
    )
    assert -value >= l2 - 1e-6 * max(1.0, l2)


def test_decomp_reports_b2l_below_b2() -> None:
    inst = generate_custom(gpus=256, tenants=12, jobs=300, seed=0)
    result = schedopt.solve(inst, "decomp", time_limit_s=30, params={"parts": 2})
    assert result.solution is not None
    b2 = bounds(build_data(inst, check_size=False)).l2
    assert result.objectives[1] <= result.stats["L2_bound"] < b2

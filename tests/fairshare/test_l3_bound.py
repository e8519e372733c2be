"""B3L (formulations/fairshare.md): below L3 of the exact optimum on tiny rounds, at the
multipliers it searches and at any others; L1 settled only where it is the optimum's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.problems.fairshare import generate_custom
from schedopt.problems.fairshare.bound import bounds
from schedopt.problems.fairshare.data import build_data
from schedopt.problems.fairshare.l2_bound import l2_prices
from schedopt.problems.fairshare.l3_bound import (
    arrays,
    at_point,
    l1_settled,
    l3_dual,
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
        value = l3_dual(data, need, floor, np.asarray(whole.prices), Deadline.after(30)).value
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
        value, _, _ = l2_prices(
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


def _omega_lp(data, need: np.ndarray, floor: float) -> float:
    """The LP of min L3 over the rows B3L relaxes (C1, C4a, C2, the fix rows, the L2 floor),
    written here from the data alone: the value B3L's Lagrangian dual can reach at best."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    jobs = [j for j in data.jobs if j.options]
    types = sorted(data.type_capacity)
    units = [u for u in range(len(need)) if need[u] > 0]
    uix = {u: i for i, u in enumerate(units)}
    first_fix = len(jobs) + len(types) + 1
    r, c, v, cost, kept = [], [], [], [], []
    for row, job in enumerate(jobs):
        for o, opt in enumerate(job.options):
            col = len(cost)
            cost.append(data.frag_cost * opt.extra_hosts)
            r += [row, len(jobs) + types.index(opt.gpu_type), len(jobs) + len(types)]
            c += [col] * 3
            v += [1.0, float(opt.n), -opt.eff]
            if job.unit in uix:
                r.append(first_fix + uix[job.unit])
                c.append(col)
                v.append(-float(opt.n))
            if o == job.prev_option:
                kept.append((col, job.restart_cost))
    first_keep = first_fix + len(units)
    for i, (col, restart) in enumerate(kept):
        r += [first_keep + i] * 2
        c += [len(cost), col]
        v += [1.0, -1.0]
        cost.append(-restart)
    rhs = np.concatenate(
        [
            np.ones(len(jobs)),
            [data.type_capacity[g] for g in types],
            [-floor],
            [-need[u] for u in units],
            np.zeros(len(kept)),
        ]
    )
    a = sp.csr_matrix((v, (r, c)), shape=(len(rhs), len(cost)))
    res = linprog(cost, A_ub=a, b_ub=rhs, bounds=(0, 1), method="highs")
    assert res.status == 0
    return float(res.fun) + data.restart_constant


def _after_astraea():
    """Astraea's plan on 128 GPUs × 200 jobs: the data, ``m_v(t̂)``, its L2 as the floor and
    B2's prices (where B3L's first search stalls at 40% of the LP)."""
    from schedopt.problems.fairshare.heuristics import AstraeaParams, run_astraea

    inst = generate_custom(gpus=128, tenants=8, jobs=200, seed=0)
    data = build_data(inst, check_size=False)
    state, problem = run_astraea(data, AstraeaParams())
    assert not problem
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    l2 = sum(
        data.jobs[i].options[r.option].eff for i, r in enumerate(state.raw) if r.option is not None
    )
    return data, need_gpus(data, t_hat), l2 * (1 - 1e-9), np.asarray(bounds(data).prices)


def test_b3l_reaches_the_lp_of_the_rows_it_relaxes() -> None:
    # the search over (λ, μ) with each ρ_v set alone stalled at 40% of this LP (1,029 against
    # 2,596); the joint search over (λ, μ, ρ) reaches it
    data, need, floor, prices = _after_astraea()
    lp = _omega_lp(data, need, floor)
    dual = l3_dual(data, need, floor, prices, Deadline.after(60))
    assert dual.value <= lp + 1e-6 * max(1.0, abs(lp))  # (weak duality: never above it)
    assert dual.value >= lp - 1e-3 * max(1.0, abs(lp))
    # the multipliers returned give the value returned
    value, _ = at_point(arrays(data), need, floor, dual.lam, dual.mu, dual.rho)
    assert value == pytest.approx(dual.value, rel=1e-9)


@pytest.mark.parametrize("limit", ["JOINT_MAX_UNITS", "JOINT_MAX_JOBS"])
def test_the_joint_search_is_left_out_above_its_unit_or_job_count(monkeypatch, limit) -> None:
    from schedopt.problems.fairshare import l3_bound

    data, need, floor, prices = _after_astraea()
    size = int((need > 0).sum()) if limit == "JOINT_MAX_UNITS" else len(data.jobs)
    assert l3_bound.joint_search_runs(need, len(data.jobs))
    monkeypatch.setattr(l3_bound, limit, size - 1)
    assert not l3_bound.joint_search_runs(need, len(data.jobs))
    alone = l3_dual(data, need, floor, prices, Deadline.after(60)).value
    assert alone < _omega_lp(data, need, floor) * (1 - 1e-2)  # the first search stalls here


def test_the_joint_search_is_left_out_when_its_steps_do_not_fit(monkeypatch) -> None:
    # cut short it spent the rest of B3L's time for little: at 16,384 GPUs 0.45 s of wall
    # for +0.3% of B3L (2026-12-05), so it runs only when the time left covers its steps
    from schedopt.problems.fairshare import l3_bound

    data, need, floor, prices = _after_astraea()
    lp = _omega_lp(data, need, floor)
    assert l3_dual(data, need, floor, prices, Deadline.after(60)).value >= lp * (1 - 1e-3)
    monkeypatch.setattr(l3_bound, "JOINT_NEED_STEPS", 10**9)  # never time for them
    assert l3_dual(data, need, floor, prices, Deadline.after(60)).value < lp * (1 - 1e-2)


@SETTINGS
@given(
    rows=st.lists(
        st.lists(st.sampled_from([-3.0, -1.0, 0.0, 0.5, 2.0, np.inf]), min_size=3, max_size=3),
        min_size=1,
        max_size=12,
    ),
    gpus=st.lists(st.sampled_from([1.0, 2.0, 4.0]), min_size=3, max_size=3),
    rho=st.sampled_from([0.0, 0.25, 1.0]),
)
@example(rows=[[-1.0, -1.0, np.inf], [0.5, -3.0, -3.0]], gpus=[1.0, 2.0, 4.0], rho=0.0)
def test_the_per_job_minima_are_the_first_least_option(rows, gpus, rho: float) -> None:
    # option by option (l3_lagrangian._per_job) as np.argmin row by row: the least cost and the
    # GPUs of the first option that reaches it (ties between counts are frequent here)
    from schedopt.problems.fairshare.l3_lagrangian import _per_job

    cost = np.array(rows)
    n = np.tile(np.array(gpus), (len(cost), 1))
    n[~np.isfinite(cost)] = 0.0  # (padded options: no GPUs, +inf)
    shifted = cost - rho * n
    pick = np.argmin(shifted, axis=1)
    at = np.arange(len(cost))
    least, got = _per_job(np.ascontiguousarray(cost.T), np.ascontiguousarray(n.T), rho + 0 * at)
    assert np.array_equal(least, np.minimum(shifted[at, pick], 0.0))
    assert np.array_equal(got, np.where(shifted[at, pick] < 0.0, n[at, pick], 0.0))


def test_the_kept_costs_are_those_of_the_point_asked() -> None:
    # Arrays.costs keeps its last answer for the supergradient at the same point: a new
    # point, or the same array of μ changed in place, gets its own
    data, _, _, _ = _after_astraea()
    a = arrays(data)
    mu = np.array([0.5] * len(a.capacity))

    def fresh(lam: float) -> np.ndarray:
        return (a.base - lam * a.eff + mu[a.gtype] * a.n).T

    assert np.array_equal(a.costs(1.0, mu), fresh(1.0))
    assert np.array_equal(a.costs(2.0, mu), fresh(2.0))
    mu[0] = 3.0
    assert np.array_equal(a.costs(2.0, mu), fresh(2.0))


@pytest.mark.parametrize("stall", [True, False])
def test_the_first_search_stops_on_its_stall_rule(monkeypatch, stall: bool) -> None:
    # at 16,384 GPUs, where the joint search does not fit, the search over (λ, μ) crept on
    # to its 60th step: with values flat from the planes on it stops PLANE_STALL_STEPS steps
    # into them
    from schedopt.problems.fairshare import l3_bound

    data, need, floor, prices = _after_astraea()
    monkeypatch.setattr(l3_bound, "JOINT_MAX_UNITS", 0)
    if not stall:
        monkeypatch.setattr(l3_bound, "PLANE_STALL_STEPS", 0)
    calls, first = [0], 1 + 2 + l3_bound.LAMBDA_STEPS  # (λ = 0, then the golden section)
    top = [-np.inf]

    def flat(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        value, rho = lagrangian(*args, **kwargs)
        if calls[0] <= first:
            top[0] = max(top[0], value)
            return value, rho
        return top[0] + 1e-9 * calls[0], rho  # (flat from the planes on)

    monkeypatch.setattr(l3_bound, "lagrangian", flat)
    l3_dual(data, need, floor, prices, Deadline.after(60))
    planes = calls[0] - first
    if stall:
        assert planes == l3_bound.PLANE_STALL_STEPS + 1
    else:
        assert planes > l3_bound.PLANE_STALL_STEPS + 1


def _lagrangian_all_rows(a, need, floor, lam, mu, near):  # type: ignore[no-untyped-def]
    """``lagrangian`` with every job in the bisection of ρ (before it took the counted
    units' jobs only)."""
    from schedopt.problems.fairshare.l3_lagrangian import RHO_STEPS, _per_job

    units, counted = len(need), need > 0
    costs, n = a.costs(lam, mu), a.columns[3]
    if near is None:
        finite = np.abs(costs[np.isfinite(costs)])
        lo, hi = np.zeros(units), np.full(units, float(finite.max(initial=0.0)) + 1.0)
        steps = RHO_STEPS
    else:
        lo, hi, steps = 0.5 * near, 2.0 * near + 1.0, RHO_STEPS // 2
    for _ in range(steps):
        mid = np.where(counted, 0.5 * (lo + hi), 0.0)
        got = np.bincount(a.unit, weights=_per_job(costs, n, mid[a.unit])[1], minlength=units)
        lo, hi = np.where(got < need, mid, lo), np.where(got < need, hi, mid)
    best, best_rho = -np.inf, lo
    for rho in (np.where(counted, lo, 0.0), np.where(counted, hi, 0.0)):
        least, _ = _per_job(costs, n, rho[a.unit])
        value = (
            a.restart_constant
            + lam * floor
            - float(mu @ a.capacity)
            + float(rho @ need)
            + float(least.sum())
        )
        if value > best:
            best, best_rho = value, rho
    return best, best_rho


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bisection_over_the_counted_units_jobs_gives_every_jobs(seed: int) -> None:
    # ρ_v bisected over the counted units' jobs only: the same value and ρ, bit for bit, as
    # over every job, with half the units not counted, from scratch and from a nearby ρ
    data, need, floor, prices = _after_astraea()
    a = arrays(data)
    need = need.copy()
    need[seed % 2 :: 2] = 0.0
    assert (need > 0).any() and np.isin(a.unit, np.flatnonzero(need <= 0)).any()
    rng = np.random.default_rng(seed)
    for _ in range(5):
        lam, mu = float(rng.uniform(0, 5)), prices * rng.uniform(0, 5, size=len(prices))
        value, rho = lagrangian(a, need, floor, lam, mu)
        expect = _lagrangian_all_rows(a, need, floor, lam, mu, None)
        assert value == expect[0] and np.array_equal(rho, expect[1])
        near = rho * rng.uniform(0.5, 1.5, size=len(rho))
        again = lagrangian(a, need, floor, lam, mu, near)
        expect = _lagrangian_all_rows(a, need, floor, lam, mu, near)
        assert again[0] == expect[0] and np.array_equal(again[1], expect[1])

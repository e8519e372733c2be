"""R' (C11's switches in the group space), its exact case bounds and the exact group scheduler
(formulations/cosched.md, "R': C11's switches in the columns, and exact pricing")."""

from __future__ import annotations

import itertools
import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedopt.core.stopping import Deadline
from schedopt.io.instance_json import loads
from schedopt.problems.cosched.data import JobData, OptionData, build_data
from schedopt.problems.cosched.farley import CaseState, Combos, farley_bound, farley_theta
from schedopt.problems.cosched.group_exact import schedule_exact
from schedopt.problems.cosched.instance import CoschedInstance
from schedopt.problems.cosched.schedule import Planned, cycle_bound, cycle_window, schedule_group
from schedopt.problems.cosched.strategies import instances

from .bruteforce import _schedule, best_groups, least_cost

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)


def _job(index: int, duration: int, slo: int, switch: int) -> JobData:
    opt = OptionData(0, 0, 1, duration, 0, 0)
    return JobData(index, f"j{index}", ((opt,),), 0, slo, switch, 1, 0, 0)


def test_two_jobs_on_one_pool_pay_both_switches() -> None:
    """R3' and not R3: 40 + 40 ms with switches of 10 fit a cycle of 100, not of 95 (R3, with
    one switch dropped, admits 95: 40 + 40 + 20 − 10 = 90)."""
    for slo, fits in ((95, False), (99, False), (100, True)):
        members = [(j, j.phases[0][:1]) for j in (_job(0, 40, slo, 10), _job(1, 40, slo, 10))]
        got = schedule_exact(members, 10.0)
        assert (isinstance(got, Planned)) is fits, (slo, got)
        if isinstance(got, Planned):
            assert got.cycle == 100


def _crossed() -> CoschedInstance:
    """Two on-policy jobs crossing three pools in opposite orders, 3 ms per phase: every
    chain and pool load is 9 ms, yet no cycle of 9 exists (each chain is then back to back
    and B's start is left no slot on all three pools), so the least cycle is above every
    bound of cycle_bound."""
    pools = [
        {
            "name": n,
            "hosts": 1,
            "gpus_per_host": 1,
            "host_memory_gib": 1.0,
            "price_per_gpu_hour": 1.0,
        }
        for n in ("a", "b", "c")
    ]

    def job(name: str, order: str) -> dict:
        return {
            "id": name,
            "phases": [
                {
                    "name": f"p{k}",
                    "options": [{"pool": p, "gpus": 1, "duration_ms": 3, "resident_gib": 0.0}],
                }
                for k, p in enumerate(order)
            ],
            "staleness": 0,
            "slo_ms": 30,
            "params_b": 0.0,
            "switch_ms": 0,
        }

    doc = {
        "problem": "cosched",
        "schema_version": 1,
        "pools": pools,
        "jobs": [job("A", "abc"), job("B", "cba")],
    }
    return loads(json.dumps(doc))  # type: ignore[return-value]


def test_the_exact_scheduler_finds_the_least_cycle_beyond_the_simple_bounds() -> None:
    inst = _crossed()
    data = build_data(inst)
    members = [(j, tuple(ph[0] for ph in j.phases)) for j in data.jobs]
    choice = {j.index: (0, 0, 0) for j in data.jobs}
    least = next(T for T in range(1, 31) if _schedule(inst, [0, 1], choice, T))
    assert least > cycle_bound(members) == 9
    got = schedule_exact(members, 20.0)
    assert isinstance(got, Planned) and got.cycle == least


@SETTINGS
@given(inst=instances(max_jobs=3))
def test_the_exact_scheduler_agrees_with_brute_force(inst) -> None:
    """All jobs in one group on their first offered options: a cycle exists iff the
    exhaustive search finds one, and the exact scheduler's cycle is the least."""
    if inst.chance is not None:
        return
    data = build_data(inst)
    if any(not opts for j in data.jobs for opts in j.phases):
        return
    members = [(j, tuple(ph[0] for ph in j.phases)) for j in data.jobs]
    choice = {j.index: tuple(ph[0].index for ph in j.phases) for j in data.jobs}
    order = [j.index for j in data.jobs]
    slo = min(j.slo for j in data.jobs)
    least = next((T for T in range(1, slo + 1) if _schedule(inst, order, choice, T)), None)
    got = schedule_exact(members, 20.0)
    assert got is not None  # decided: tiny models
    assert (got.cycle if got else None) == least


@SETTINGS
@given(inst=instances(max_jobs=3), seed=st.integers(0, 2**16), scale=st.floats(0.0, 3.0))
def test_the_farley_bound_over_r_prime_is_below_the_brute_force_optimum(inst, seed, scale):
    """With every case refined by CP-SAT's exact bound (R'), random duals still never give a
    bound above the optimum."""
    ref = least_cost(inst)
    if ref is None:
        return
    data = build_data(inst)
    rng = np.random.default_rng(seed)
    cost = max(ref[0], 1.0)
    pi = rng.uniform(-0.2, 1.0, len(data.jobs)) * scale * cost
    y = -rng.uniform(0, 1, len(data.pools)) * scale * cost / 4
    found: list = []
    bound = farley_bound(data, pi, y, None, Deadline.after(60), found)
    assert bound is None or bound <= ref[0] + 1e-6, (bound, ref[0])
    combos = [Combos(data, j) for j in data.jobs]
    for group in found:  # every group found has a positive value and distinct jobs
        jobs = [j for j, _ in group]
        assert len(set(jobs)) == len(jobs)
        assert all(0 <= c < len(combos[j].options) for j, c in group)


def test_refining_the_cases_never_lowers_the_bound() -> None:
    from schedopt.problems.cosched import generate_custom

    inst = generate_custom(4, 4, 8, 8, 0, (0,), scale=4)
    data = build_data(inst)
    rng = np.random.default_rng(0)
    pi = rng.uniform(0, 20, len(data.jobs))
    y = np.zeros(len(data.pools))
    plain = farley_bound(data, pi, y)
    refined = farley_bound(data, pi, y, None, Deadline.after(60))
    assert plain is not None and refined is not None
    assert refined >= plain - 1e-9


@SETTINGS
@given(
    inst=instances(max_jobs=3),
    seed=st.integers(0, 2**16),
    scale=st.floats(0.1, 3.0),
    exact=st.booleans(),
)
def test_theta_prices_every_schedulable_group_nonnegative(inst, seed, scale, exact) -> None:
    """Farley's claim itself: with θ from the surrogate knapsacks over R' (``exact`` False)
    or the exact case bounds, every group that has a periodic schedule (found by brute force)
    has ``θ (Σ_S π + y·h) ≤ c(h)``."""
    if inst.chance is not None:
        return
    data = build_data(inst)
    rng = np.random.default_rng(seed)
    pi = rng.uniform(-0.2, 1.0, len(data.jobs)) * scale * 100
    y = -rng.uniform(0, 1, len(data.pools)) * scale * 25
    theta = farley_theta(data, pi, y, None, Deadline.after(60) if exact else None)
    if theta is None:
        return
    jobs = list(range(len(data.jobs)))
    for r in range(1, len(jobs) + 1):
        for members in itertools.combinations(jobs, r):
            for hosts in best_groups(inst, list(members)):
                cost = sum(n * c for n, c in zip(hosts, data.cost, strict=True))
                value = sum(pi[j] for j in members) + float(np.dot(y, hosts))
                assert theta * value <= cost + 1e-6, (members, hosts, theta, value, cost)


@SETTINGS
@given(inst=instances(max_jobs=3))
def test_both_schedulers_search_the_same_cycle_window(inst) -> None:
    """The heuristic and the exact scheduler answer a cycle inside ``cycle_window`` (the
    least exact one at its bottom or above), and neither answers one when it is empty."""
    if inst.chance is not None:
        return
    data = build_data(inst)
    if any(not opts for j in data.jobs for opts in j.phases):
        return
    members = [(j, tuple(ph[0] for ph in j.phases)) for j in data.jobs]
    lo, hi = cycle_window(members)
    heuristic = schedule_group(members)
    exact = schedule_exact(members, 20.0)
    if lo > hi:
        assert heuristic is None and exact is False
        return
    for got in (heuristic, exact):
        if isinstance(got, Planned):
            assert lo <= got.cycle <= hi
    if isinstance(heuristic, Planned):
        assert isinstance(exact, Planned) and exact.cycle <= heuristic.cycle


@SETTINGS
@given(
    inst=instances(max_jobs=3),
    seed=st.integers(0, 2**16),
    scale=st.floats(0.1, 3.0),
    move=st.floats(0.0, 0.5),
)
def test_theta_from_earlier_exact_bounds_prices_every_schedulable_group_nonnegative(
    inst, seed, scale, move
) -> None:
    """Farley's claim when the cases' exact bounds of an earlier call, moved by the duals'
    rises, stand in for CP-SAT (CaseState.proven): θ (Σ_S π + y·h) ≤ c(h) for every group
    with a periodic schedule (brute force), at duals moved from the earlier ones."""
    if inst.chance is not None:
        return
    data = build_data(inst)
    rng = np.random.default_rng(seed)
    pi0 = rng.uniform(-0.2, 1.0, len(data.jobs)) * scale * 100
    y0 = -rng.uniform(0, 1, len(data.pools)) * scale * 25
    state = CaseState()
    farley_theta(data, pi0, y0, None, Deadline.after(60), None, None, state)
    pi = pi0 * (1 + rng.uniform(-move, move, len(pi0)))
    y = y0 * (1 + rng.uniform(-move, move, len(y0)))
    theta = farley_theta(data, pi, y, None, Deadline.after(60), None, None, state)
    if theta is None:
        return
    jobs = list(range(len(data.jobs)))
    for r in range(1, len(jobs) + 1):
        for members in itertools.combinations(jobs, r):
            for hosts in best_groups(inst, list(members)):
                cost = sum(n * c for n, c in zip(hosts, data.cost, strict=True))
                value = sum(pi[j] for j in members) + float(np.dot(y, hosts))
                assert theta * value <= cost + 1e-6, (members, hosts, theta, value, cost)

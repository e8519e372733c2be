"""The whole-slot rows B1c, the Lagrangian bound B1L, LP rounding and repair (#17): every bound
at least the brute-force optimum, every plan valid, the time limit kept at scale."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.model.lp_bound import lagrangian_bound
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import assemble, guaranteed_value
from schedopt.problems.admission.bound import L1Bound, l1_bound
from schedopt.problems.admission.cuts import least_weight
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.heuristics import refill_best_effort
from schedopt.problems.admission.lagrange import Prices
from schedopt.problems.admission.lp_round import lp_round
from schedopt.problems.admission.repair import repair
from schedopt.problems.admission.strategies import instances
from schedopt.problems.admission.validate import validate
from tests.timing import promised_s

from .bruteforce import best_first_level

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(
    work=st.integers(1, 60),
    per_slot=st.lists(st.integers(0, 25), min_size=1, max_size=3),
    weights=st.lists(st.integers(0, 8), min_size=3, max_size=3),
    slots=st.integers(0, 5),
)
def test_least_weight_is_the_least_over_every_whole_slot_plan(work, per_slot, weights, slots):
    w = tuple(float(x) for x in weights[: len(per_slot)])
    truth = None
    for ks in itertools.product(range(slots + 1), repeat=len(per_slot)):
        if sum(ks) <= slots and sum(k * o for k, o in zip(ks, per_slot, strict=True)) >= work:
            cost = sum(k * x for k, x in zip(ks, w, strict=True))
            truth = cost if truth is None else min(truth, cost)
    assert least_weight(work, tuple(per_slot), w, slots) == truth


@SETTINGS
@given(inst=instances(max_jobs=4, max_slots=3))
def test_b1c_and_b1l_are_at_least_the_brute_force_optimum(inst) -> None:
    truth = best_first_level(inst)
    if truth is None:  # infeasible: no plan keeps the earlier guarantees, nothing to bound
        return
    data = build_data(inst)
    lp = l1_bound(data, time_limit_s=30)
    assert lp.bound is not None and lp.bound >= truth - 1e-6
    prices = Prices(data)
    rng = np.random.default_rng(0)
    starts = [np.array([max(0.0, lp.prices.get(k, 0.0)) for k in prices.keys])]
    starts += [rng.exponential(2.0, len(prices.keys)) for _ in range(3)]
    for lam in starts:  # any multipliers >= 0 give a bound; the steps keep it one
        value, _ = prices.oracle(lam)
        assert lam @ prices.rhs + value >= truth - 1e-6
        lb = lagrangian_bound(prices.rhs, prices.oracle, lam, time.perf_counter() + 5)
        assert lb.bound >= truth - 1e-6


def test_whole_slot_rows_tighten_the_lp_on_a_contested_instance() -> None:
    data = build_data(generate_custom(hosts=8, jobs=200, slots=12, seed=1))
    weak = l1_bound(data, 30, whole_slots=False).bound
    strong = l1_bound(data, 30).bound
    assert weak is not None and strong is not None and strong < weak - 1.0


@SETTINGS
@given(inst=instances(max_jobs=8, max_slots=4))
def test_rounded_and_repaired_plans_are_valid(inst) -> None:
    data = build_data(inst)
    lp = l1_bound(data, 30)
    raw = lp_round(data, lp)
    if raw is None:  # only when an earlier guarantee could not be placed
        assert any(j.admitted_before for j in data.jobs)
        return
    assert validate(inst, assemble(data, raw, optimal_admission=False)) == []
    before = guaranteed_value(data, raw)
    fixed, _ = repair(data, raw, Deadline.after(1.0))
    assert guaranteed_value(data, fixed) >= before
    for job in data.jobs:
        if job.admitted_before:
            assert fixed[job.index].admitted
    solution = assemble(data, refill_best_effort(data, fixed), optimal_admission=False)
    assert validate(inst, solution) == []
    # no LP value at all (its parts ran out of time), jobs ordered by another plan's admissions
    prior = {i: 0.5 * bool(r.admitted) for i, r in enumerate(fixed)}
    blind = lp_round(data, L1Bound(None, {}, False, 0.0), prior=prior)
    if blind is not None:
        assert validate(inst, assemble(data, blind, optimal_admission=False)) == []


@settings(
    derandomize=True, deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow]
)
@given(inst=instances(max_jobs=8, max_slots=4))
def test_decomp_lp_answers_are_valid_and_bounded(inst) -> None:
    _check_decomp_lp(inst, {})


def test_decomp_lp_with_parts_in_worker_processes_is_valid() -> None:
    # two parts (each group on its capacity share) in a process pool, then the join's repair
    inst = generate_custom(hosts=4, jobs=60, slots=6, seed=2)
    _check_decomp_lp(inst, {"executor": "process", "workers": 2, "parts": 2})


def test_decomp_lp_in_one_process_says_it_ran_no_parts() -> None:
    # inline, the groups are improved in the join: the stats must not claim joined parts
    inst = generate_custom(hosts=4, jobs=60, slots=6, seed=2)
    inline = schedopt.solve(inst, "decomp:lp", time_limit_s=5)
    assert inline.stats["decomposition"].startswith("no parts")
    pooled = schedopt.solve(
        inst, "decomp:lp", time_limit_s=5, params={"executor": "process", "workers": 2, "parts": 2}
    )
    assert pooled.stats["decomposition"].startswith("joined from 2 parts")
    for r in (inline, pooled):  # the phases' walls (benchmark rows keep them, #17)
        st = r.stats
        assert st["guide_s"] >= 0 and st["start_s"] >= 0 and st["parts_s"] >= 0
        assert st["guide_s"] + st["start_s"] <= st["bound_s"] + 2e-3
        assert st["bound_s"] + st["parts_s"] + st["join_s"] <= r.wall_s + 3e-3
    assert pooled.stats["parts_s"] > 0.0


def _check_decomp_lp(inst, params) -> None:
    result = schedopt.solve(inst, "decomp:lp", time_limit_s=5, params=params)
    assert result.status is not Status.OPTIMAL  # a decomposition proves nothing by itself
    if result.solution is None:
        assert result.status is Status.NO_SOLUTION and result.explanation
        return
    assert schedopt.get_problem("admission").validate(inst, result.solution) == []
    if result.best_bound is not None:
        assert result.best_bound >= result.objective - 1e-6


@pytest.mark.slow
@pytest.mark.parametrize(("hosts", "jobs"), [(32, 800), (128, 3200)])
@pytest.mark.parametrize("method", ["decomp:lp", "auto"])
def test_time_limit_at_scale(hosts: int, jobs: int, method: str) -> None:
    inst = generate_custom(hosts=hosts, jobs=jobs, slots=12, seed=0)
    started = time.perf_counter()
    result = schedopt.solve(inst, method, time_limit_s=5.0)
    assert time.perf_counter() - started <= promised_s(5.0), result.stats
    assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)
    if result.objective is not None:  # a bound every run: B1 + B1c, B1L or at least B0
        assert result.best_bound is not None, result.stats
        assert math.isfinite(result.best_bound) and result.best_bound >= result.objective - 1e-6

"""The start plan's backfill (``backfill.py``; formulations/admission.md, "LP rounding and
repair", step 2)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import assemble, guaranteed_value
from schedopt.problems.admission.backfill import backfill
from schedopt.problems.admission.bound import l1_bound
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.guide import guide
from schedopt.problems.admission.heuristics import refill_best_effort
from schedopt.problems.admission.lagrange import Prices
from schedopt.problems.admission.lp_round import lp_round
from schedopt.problems.admission.lpdecomp import greedy_plans, start_plan
from schedopt.problems.admission.priced import priced_plans
from schedopt.problems.admission.strategies import instances
from schedopt.problems.admission.validate import validate

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)


def _check(inst, data, before, after) -> None:
    assert guaranteed_value(data, after) >= guaranteed_value(data, before)
    for job in data.jobs:
        if job.is_slo and before[job.index].admitted:
            # nobody admitted is dropped or moved to a later (less valuable) tier
            assert after[job.index].admitted
            assert after[job.index].tier <= before[job.index].tier
    assert all(after[j.index].admitted for j in data.jobs if j.admitted_before)
    solution = assemble(data, refill_best_effort(data, after), optimal_admission=False)
    assert validate(inst, solution) == []


@SETTINGS
@given(inst=instances(max_jobs=8, max_slots=4))
def test_the_backfill_keeps_every_admission_and_a_valid_plan(inst) -> None:
    data = build_data(inst)
    far = Deadline.after(60)
    lp = l1_bound(data, 30)
    starts = [lp_round(data, lp, far, best_effort=False), *greedy_plans(data, far)]
    priced = priced_plans(data, lp, far)
    for raw in priced:  # the LP-priced greedy plans: valid, every earlier guarantee kept
        assert all(raw[j.index].admitted for j in data.jobs if j.admitted_before)
        solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
        assert validate(inst, solution) == []
    for raw in [*starts, *priced]:
        if raw is not None:
            _check(inst, data, raw, backfill(data, raw, far))


def test_the_backfill_admits_more_on_a_contested_instance() -> None:
    # 32 GPUs, 120 jobs, 6 slots (seed 3): the LP's rounding is worth 630; moving the jobs due
    # late to the late slots makes room for 8 more (measured 638)
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    far = Deadline.after(60)
    lp = l1_bound(data, 60)
    rounded = lp_round(data, lp, far, best_effort=False)
    assert rounded is not None
    after = backfill(data, rounded, far)
    _check(inst, data, rounded, after)
    assert guaranteed_value(data, after) > guaranteed_value(data, rounded)
    # and the start decomp:lp repairs from is the backfilled one, above every candidate
    start = start_plan(data, lp, None, far, greedy_plans(data, far))
    assert start is not None
    best = max(guaranteed_value(data, r) for r in (rounded, *greedy_plans(data, far)))
    assert guaranteed_value(data, start) > best


def test_a_backfill_past_its_deadline_returns_the_plan_it_was_given() -> None:
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    rounded = lp_round(data, l1_bound(data, 60), best_effort=False)
    assert rounded is not None
    after = backfill(data, rounded, Deadline.after(0))
    assert [r.run for r in after] == [r.run for r in rounded]


def test_the_priced_plans_start_higher_at_1024_gpus_and_3200_jobs() -> None:
    # 1,024 GPUs × 3,200 jobs s1, the LP in 400-job parts: the greedy plan priced by the LP's
    # duals (by gain per GPU-slot) is worth 18,808 (the backfilled rounding 18,283), measured
    inst = generate_custom(hosts=128, jobs=3200, slots=12, seed=1)
    data = build_data(inst, check_size=False)
    far = Deadline.after(600)
    g = guide(data, 60, far)
    plans = priced_plans(data, g.lp, far)
    assert plans
    best = max(plans, key=lambda r: guaranteed_value(data, r))
    assert guaranteed_value(data, best) / 1000 >= 18_700
    start = start_plan(data, g.lp, None, far, greedy_plans(data, far))
    assert start is not None and guaranteed_value(data, start) >= guaranteed_value(data, best)
    solution = assemble(data, refill_best_effort(data, start), optimal_admission=False)
    assert validate(inst, solution) == []


def _count_best_plans(monkeypatch) -> list[int]:
    """From now on, the jobs whose best plan ``Prices`` evaluates, in order (a pass of B1L's
    oracle at a new ``λ`` is one per SLO job)."""
    calls: list[int] = []
    real = Prices._best

    def counted(self, job, price):
        calls.append(job.index)
        return real(self, job, price)

    monkeypatch.setattr(Prices, "_best", counted)
    return calls


def test_the_priced_plans_reuse_the_guides_b1l_plans(monkeypatch) -> None:
    # the guide's B1L first evaluates every job's best plan at the LP's prices; the start's
    # priced plans take those (no second pass) and are the same as from a fresh evaluation
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    far = Deadline.after(600)
    g = guide(data, 60.0, far)
    assert g.prices is not None and g.lp.prices
    fresh = priced_plans(data, g.lp, far)
    assert fresh
    calls = _count_best_plans(monkeypatch)
    # the LP's prices first (then those of B1L's later steps, evaluated already)
    assert priced_plans(data, g.lp, far, g.prices)[: len(fresh)] == fresh
    assert calls == []
    # a Prices that has not evaluated the LP's prices evaluates them (once per SLO job)
    assert priced_plans(data, g.lp, far, Prices(data)) == fresh
    assert len(calls) == len(g.prices.slo)


def test_best_plans_at_other_prices_are_evaluated_not_the_kept_ones() -> None:
    data = build_data(generate_custom(hosts=4, jobs=60, slots=6, seed=2))
    prices = Prices(data)
    first = np.zeros(len(prices.keys))
    other = np.full(len(prices.keys), 0.05)
    prices.best_plans(first)
    assert prices.best_plans(other) == Prices(data).best_plans(other)
    assert prices.best_plans(other) != prices.best_plans(first)
    total, _ = prices.oracle(other)
    assert total == pytest.approx(sum(g for g, p in Prices(data).best_plans(other) if p))


def test_the_priced_plans_take_b1ls_later_prices_too(monkeypatch) -> None:
    # every λ the guide's B1L evaluated prices its own two greedy plans, without a new pass
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    far = Deadline.after(600)
    lp = l1_bound(data, 60)
    prices = Prices(data)
    at_lp = priced_plans(data, lp, far, prices)
    other = prices.multipliers(lp.prices) * 0.5 + 0.02
    later = prices.best_plans(other)
    calls = _count_best_plans(monkeypatch)
    got = priced_plans(data, lp, far, prices)
    assert calls == []
    assert got[: len(at_lp)] == at_lp
    assert len(got) > len(at_lp)
    lone = Prices(data)
    lone._seen[prices.multipliers(lp.prices).tobytes()] = (other, later)  # λ's plans as the LP's
    assert got[len(at_lp) :] == priced_plans(data, lp, far, lone)
    for raw in got:
        solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
        assert validate(inst, solution) == []
    # past the deadline (start_plan on a starved machine) no plan: none places a job past it
    assert priced_plans(data, lp, Deadline.after(0), prices) == []


@pytest.mark.parametrize("cut", ["in the earlier guarantees", "after them"])
def test_the_priced_plans_stop_at_the_deadline_and_keep_every_guarantee(monkeypatch, cut) -> None:
    # the deadline passes while a job is placed (a slow step, as on a starved machine): the
    # jobs after the next check are rejected, unplaced, and the plan stands only if it keeps
    # every earlier guarantee (placed first); no later order or λ is placed
    from schedopt.problems.admission import priced as priced_module

    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    lp = l1_bound(data, 60)
    prices = Prices(data)
    (first, *_) = priced_plans(data, lp, Deadline.after(600), prices)  # evaluated at leisure
    kept = [j for j in prices.slo if j.admitted_before]
    assert len(kept) > priced_module.CHECK_JOBS  # a check falls among them
    kept_slots = sum(o is not None for j in kept for o in first[j.index].run)
    slow_at = 1 if cut == "in the earlier guarantees" else kept_slots + 1
    takes: list[int] = []
    real_take = priced_module.Ledger.take

    def take(self, t, opt, sign=1):
        takes.append(t)
        if len(takes) == slow_at:
            time.sleep(0.3)
        return real_take(self, t, opt, sign)

    monkeypatch.setattr(priced_module.Ledger, "take", take)
    got = priced_plans(data, lp, Deadline.after(0.25), prices)
    if cut == "in the earlier guarantees":
        assert got == []
        return
    # the first order's plan, cut short at the first check after the first job past the
    # guarantees (one in CHECK_JOBS jobs)
    (raw,) = got
    assert all(raw[j.index].admitted for j in kept)
    new = [j for j in prices.slo if not j.admitted_before and raw[j.index].admitted]
    assert 1 <= len(new) <= priced_module.CHECK_JOBS
    solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
    assert validate(inst, solution) == []


def test_b1ls_later_prices_start_above_2_percent_at_1024_gpus_and_3200_jobs() -> None:
    # 1,024 GPUs × 3,200 jobs s0: the plans priced at the LP's duals start at 18,604; at B1L's
    # second λ (a step that did not lower the bound) 18,907, above 98% of the bound 19,224
    inst = generate_custom(hosts=128, jobs=3200, slots=12, seed=0)
    data = build_data(inst, check_size=False)
    far = Deadline.after(600)
    g = guide(data, 60, far)
    assert g.prices is not None and g.label == "B1L (2 evaluations)"
    start = start_plan(data, g.lp, None, far, greedy_plans(data, far), g.prices)
    assert start is not None
    assert guaranteed_value(data, start) / 1000 >= 18_840
    solution = assemble(data, refill_best_effort(data, start), optimal_admission=False)
    assert validate(inst, solution) == []

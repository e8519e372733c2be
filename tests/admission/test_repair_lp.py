"""Repair's LP-guided neighbourhoods and ``decomp:lp``'s greedy floor (#17): every plan valid,
earlier guarantees kept, the groups where the LP says value is left, and never below the
tuned heuristics when ``decomp:lp`` runs without a hint."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate, generate_custom
from schedopt.problems.admission.assemble import RawPlan, assemble, guaranteed_value
from schedopt.problems.admission.bound import l1_bound
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.heuristics import refill_best_effort
from schedopt.problems.admission.lp_round import lp_round
from schedopt.problems.admission.lpdecomp import greedy_plans
from schedopt.problems.admission.neighbourhood import lp_groups, lp_start, value_left
from schedopt.problems.admission.repair import left_for, repair
from schedopt.problems.admission.strategies import instances
from schedopt.problems.admission.validate import validate

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(inst=instances(max_jobs=8, max_slots=4))
def test_lp_guided_repair_keeps_plans_valid_and_guarantees(inst) -> None:
    data = build_data(inst)
    lp = l1_bound(data, 30)
    raw = lp_round(data, lp)
    if raw is None:
        return
    before = guaranteed_value(data, raw)
    fixed, _ = repair(data, raw, Deadline.after(1.0), lp=lp)
    assert guaranteed_value(data, fixed) >= before
    assert all(fixed[j.index].admitted for j in data.jobs if j.admitted_before)
    solution = assemble(data, refill_best_effort(data, fixed), optimal_admission=False)
    assert validate(inst, solution) == []


def _contested():
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    lp = l1_bound(data, 60)
    # the LP's rounding, before any repair: on 4 hosts and 120 jobs it leaves value
    start = lp_round(data, lp)
    assert start is not None
    return inst, data, lp, start


def test_groups_start_where_the_lp_says_most_value_is_left() -> None:
    _, data, lp, start = _contested()
    left = value_left(data, start, lp)
    assert left, "the rounding should leave value on the table on a contested instance"
    groups = lp_groups(data, start, lp, 20, np.random.default_rng(0))
    assert groups and all(len(g) <= 20 for g in groups)
    assert max(left[i] for i in groups[0] if i in left) == max(left.values())
    seeds = [i for g in groups for i in g if i in left]
    # every job with value left is in a group, as a seed once (and maybe as a rival elsewhere)
    assert set(left) <= set(seeds)
    # the rivals hold GPUs in the slots where a seed of their group runs in the LP
    for g in groups:
        lp_slots = {t for (j, t, _), v in lp.run.items() if j in g and j in left and v > 1e-6}
        for i in g:
            if i not in left:
                assert {t for t, o in enumerate(start[i].run) if o is not None} & lp_slots


def test_lp_start_re_solves_a_group_on_the_capacity_left() -> None:
    inst, data, lp, start = _contested()
    groups = lp_groups(data, start, lp, 30, np.random.default_rng(0))
    indices = groups[0]
    # the group's jobs emptied (the guarantees kept by the start): the LP re-solve refills them
    emptied = [
        r if data.jobs[i].admitted_before else RawPlan([None] * data.T, False)
        for i, r in ((i, start[i]) for i in indices)
    ]
    raw = list(start)
    for i, r in zip(indices, emptied, strict=True):
        raw[i] = r
    sub = data.subset(indices, slot_capacity=left_for(data, raw, set(indices)))
    got = lp_start(sub, emptied, Deadline.after(5.0))
    assert guaranteed_value(sub, got) > guaranteed_value(sub, emptied)
    for i, r in zip(indices, got, strict=True):
        raw[i] = r
    assert all(raw[j.index].admitted for j in data.jobs if j.admitted_before)
    solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
    assert validate(inst, solution) == []


def test_repair_with_the_lp_works_on_its_neighbourhoods() -> None:
    _, data, lp, start = _contested()
    # no time pressure: the repair stops by itself after passes without a gain
    _, stats = repair(data, start, Deadline.after(60.0), lp=lp)
    assert stats["repair_lp_steps"] > 0


def test_decomp_lp_without_a_hint_is_never_below_the_tuned_heuristics() -> None:
    # auto runs decomp:lp first with no hint: its start must still be at least the tuned
    # greedy plans, however little of a short limit the LP gets (#17)
    from schedopt.tuning import load_tuned

    inst = generate("large", 1)
    tuned = load_tuned("admission")
    best = max(
        schedopt.solve(inst, h, params=tuned.get(h, {})).objective
        for h in ("heuristic:edf", "heuristic:slack")
    )
    for limit in (0.5, 1.0):
        result = schedopt.solve(inst, "decomp:lp", time_limit_s=limit)
        if result.solution is not None:
            assert result.objective >= best, (limit, result.stats)
    data = build_data(inst)
    plans = greedy_plans(data, Deadline.after(10.0))
    assert max(guaranteed_value(data, p) for p in plans) / 1000 >= best - 1e-6


def test_a_deterministic_repair_with_a_step_cap_repeats_itself() -> None:
    # benchmarks/admission_repair.py compares variants on this: the same plan on any load
    _, data, lp, start = _contested()
    runs = [
        repair(data, start, Deadline.after(120.0), 0, lp, max_steps=4, deterministic=True)
        for _ in range(2)
    ]
    assert runs[0][1]["repair_steps"] == 4
    assert [(r.run, r.admitted, r.tier) for r in runs[0][0]] == [
        (r.run, r.admitted, r.tier) for r in runs[1][0]
    ]

"""Each step of ``decomp:lp``'s bound phase takes its time from the deadline at the moment it
starts, and past the deadline the phase does no more than it must (#17: 1,024 GPUs × 3,200
jobs at 10 s took 21.4 and 24.1 s beside three burners and the CI's slow stage, the bound
phase 12.8-16.5 s). A starved machine is stood in for by a step made slow (a sleep): the
steps after it must see that the time went, whatever the machine's speed."""

from __future__ import annotations

import time

import pytest

from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline
from schedopt.problems.admission import bound as bound_module
from schedopt.problems.admission import generate_custom, guide, heuristics, lpdecomp
from schedopt.problems.admission import tier_bound as b0_module
from schedopt.problems.admission.assemble import assemble, guaranteed_value
from schedopt.problems.admission.bound import L1Bound
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.heuristics import refill_best_effort
from schedopt.problems.admission.priced import priced_plans as priced
from schedopt.problems.admission.validate import validate

SLOW_S = 0.3


def test_the_lps_limit_covers_building_its_relaxation(monkeypatch) -> None:
    data = build_data(generate_custom(hosts=4, jobs=60, slots=6, seed=2))
    real = bound_module.relax_l1
    limits: list[float] = []

    def slow_build(*args, **kwargs):
        time.sleep(SLOW_S)
        return real(*args, **kwargs)

    def solve(relaxation, time_limit_s, **kwargs):
        limits.append(time_limit_s)
        return real_solve(relaxation, time_limit_s, **kwargs)

    real_solve = bound_module.solve_relaxation
    monkeypatch.setattr(bound_module, "relax_l1", slow_build)
    monkeypatch.setattr(bound_module, "solve_relaxation", solve)
    bound_module.l1_bound(data, 0.5)
    # the LP got what the build left of the 0.5 s, not 0.5 s on top of it
    assert len(limits) == 1 and limits[0] <= 0.5 - SLOW_S + 1e-3


def test_b0s_lp_gets_no_time_when_building_it_took_its_share(monkeypatch) -> None:
    data = build_data(generate_custom(hosts=4, jobs=60, slots=6, seed=2))
    assert b0_module.tier_bound(data, Deadline.after(60), 60.0) is not None  # solved at leisure
    real = b0_module.gpu_slots_needed
    slept: list[bool] = []

    def slow_once(*args, **kwargs):  # the model's build (one call per SLO job) made slow
        if not slept:
            slept.append(True)
            time.sleep(SLOW_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(b0_module, "gpu_slots_needed", slow_once)
    assert b0_module.tier_bound(data, Deadline.after(60), SLOW_S / 2) is None


def test_past_the_deadline_the_fallback_is_b0k_without_building_b0(monkeypatch) -> None:
    data = build_data(generate_custom(hosts=4, jobs=60, slots=6, seed=2))

    def no_b0(*args, **kwargs):
        raise AssertionError("B0's model built past the deadline")

    monkeypatch.setattr(b0_module, "tier_bound", no_b0)
    value, label = b0_module.fallback_bound(data, Deadline.after(0.0), 0.05)
    assert label == "B0k" and value == b0_module.knapsack_bound(data)


@pytest.mark.parametrize("jobs", [60, 600])
def test_past_the_deadline_the_bound_phase_keeps_the_greedy_plan(monkeypatch, jobs) -> None:
    # the deadline passes while the greedy plans are made (a starved machine): the phase ends
    # with B0k and the best greedy plan, running neither B0, the rounding nor the backfill
    # (each set up over every job before its first check: 0.1 CPU s at 3,200 jobs, 1.5 s at
    # a slowdown of 15; at 600 jobs the old B0 build raised DeadlineReached, which threw the
    # whole plan away); the priced plans stop at once without B1L's evaluation
    inst = generate_custom(hosts=max(4, jobs // 25), jobs=jobs, slots=6, seed=2)
    deadline = Deadline.after(2.0 + jobs / 200)
    d = lpdecomp.decomposition(inst, SolveOptions(time_limit_s=60), deadline, False)
    made: list = []
    real_greedy = lpdecomp.greedy_plans

    def slow_greedy(data, stop, tuned=None):
        plans = real_greedy(data, stop, tuned)
        made.extend(plans)
        time.sleep(deadline.remaining() + 0.01)
        return plans

    def never(*args, **kwargs):
        raise AssertionError("a step of the start ran past the deadline")

    monkeypatch.setattr(lpdecomp, "greedy_plans", slow_greedy)
    real_guide = lpdecomp.guide
    monkeypatch.setattr(  # no bound from the guide's 0.05 s (as on a starved machine)
        lpdecomp,
        "guide",
        lambda *a, **kw: guide.Guide(real_guide(*a, **kw).lp, None, "none", None, None),
    )
    monkeypatch.setattr(b0_module, "tier_bound", never)
    for name in ("lp_round", "backfill"):
        monkeypatch.setattr(lpdecomp, name, never)
    got = d.bound(0.0)
    assert got.stats["bound"] == "B0k" and got.value is not None
    data = build_data(inst)
    best = max(guaranteed_value(data, raw) for raw in made)
    (join,) = [c.cell_contents for c in d.join.__closure__ or () if c.cell_contents is not None
               and isinstance(c.cell_contents, dict) and "start" in c.cell_contents]  # fmt: skip
    # the best greedy plan, or a priced plan above it (at 60 jobs B1L's one evaluation
    # ends before its first check of the deadline, every 64 jobs)
    assert guaranteed_value(data, join["start"]) >= best


def test_the_guide_stops_building_its_lp_at_its_own_end(monkeypatch) -> None:
    # the whole LP (under WHOLE_LP_COLUMNS): its build checks the guide's end, not only the
    # solve's (a minute away here)
    data = build_data(generate_custom(hosts=16, jobs=400, slots=6, seed=0))
    assert guide.lp_columns(data) <= guide.WHOLE_LP_COLUMNS
    assert sum(j.is_slo for j in data.jobs) > 256  # the build's ticker checks every 256 jobs
    real = bound_module.relax_l1

    def slow_build(*args, **kwargs):
        time.sleep(SLOW_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(bound_module, "relax_l1", slow_build)
    g = guide.guide(data, SLOW_S / 2, Deadline.after(60))
    assert g.bound is None and not g.lp.solved and not g.lp.admit


def test_the_last_resort_of_the_start_keeps_the_guarantees_and_stops_at_the_deadline(
    monkeypatch,
) -> None:
    # no candidate keeps the earlier guarantees (the rounding and the priced plans stood in for
    # by none), and the deadline passes in the rounding (a slow step, as on a starved
    # machine): the default heuristics place the earlier guarantees in full, no new job, and
    # nothing is backfilled; with time, they place new jobs too
    inst = generate_custom(hosts=8, jobs=200, slots=6, seed=2)
    data = build_data(inst)
    kept = [j for j in data.jobs if j.admitted_before]
    assert kept
    slept: list[float] = []

    def slow_round(*args, **kwargs):
        time.sleep(slept[-1] if slept else 0.0)
        return None

    def never(*args, **kwargs):
        raise AssertionError("backfilled past the deadline")

    placed: list = []
    real_place = heuristics._place_slo

    def place(data_, ledger, job, raw, *args, **kwargs):
        placed.append(job)
        return real_place(data_, ledger, job, raw, *args, **kwargs)

    monkeypatch.setattr(lpdecomp, "lp_round", slow_round)
    monkeypatch.setattr(lpdecomp, "priced_plans", lambda *args, **kwargs: [])
    monkeypatch.setattr(heuristics, "_place_slo", place)
    no_lp = L1Bound(None, {}, False, 0.0)
    for cut_short in (False, True):
        placed.clear()
        slept.append(SLOW_S + 0.01 if cut_short else 0.0)
        if cut_short:
            monkeypatch.setattr(lpdecomp, "backfill", never)
        start = lpdecomp.start_plan(data, no_lp, None, Deadline.after(SLOW_S if cut_short else 600))
        assert start is not None
        assert all(start[j.index].admitted for j in kept)
        new = [j for j in data.jobs if j.is_slo and not j.admitted_before]
        assert any(start[j.index].admitted for j in new) is not cut_short
        assert all(j.admitted_before for j in placed) is cut_short
        solution = assemble(data, refill_best_effort(data, start), optimal_admission=False)
        assert validate(inst, solution) == []


def test_a_busy_machine_still_gets_the_first_lp_parts_prices(monkeypatch) -> None:
    # The LP split into 4 parts, each part's build slower than an equal share of the LP phase
    # (a busy machine, #17: each build took its 0.3-0.4 s share and no part's LP answered, so
    # the bound fell to B0 and the start had no prices). The parts now run in turn until the
    # phase's end: the first ones answer, B1L at their prices bounds L1 below B0, and the
    # start's priced plans exist.
    data = build_data(generate_custom(hosts=16, jobs=400, slots=6, seed=0))
    monkeypatch.setattr(guide, "WHOLE_LP_COLUMNS", 0)
    monkeypatch.setattr(guide, "LP_PART_JOBS", 100)
    seconds = 1.8  # the LP phase: 0.6 × 1.8 = 1.08 s, an equal share 0.27 s < SLOW_S
    real = bound_module.relax_l1

    def slow_build(*args, **kwargs):
        time.sleep(SLOW_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(bound_module, "relax_l1", slow_build)
    g = guide.guide(data, seconds, Deadline.after(60))
    b0, _ = b0_module.fallback_bound(data, Deadline.after(60), 10.0)
    assert g.lp.prices and g.prices is not None
    assert g.bound is not None and g.label.startswith("B1L") and g.bound < b0
    plans = priced(data, g.lp, Deadline.after(60), g.prices)
    assert plans
    for raw in plans:  # plans of the instance, each within the bound
        solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
        assert validate(data.instance, solution) == []
        assert guaranteed_value(data, raw) <= 1000 * g.bound


def test_an_lp_small_enough_for_one_gets_prices_when_the_whole_lp_does_not_finish(
    monkeypatch,
) -> None:
    # Under WHOLE_LP_COLUMNS, the whole LP made to answer nothing (as at 256 GPUs × 800 jobs s1
    # beside a burner, #17: it did not finish, the bound fell to B0w and the start to the
    # greedy plan). The parts' LPs come first: B1L at their prices bounds L1 below B0w / B0k,
    # and the start's priced plans exist; given time, the whole LP runs too.
    data = build_data(generate_custom(hosts=16, jobs=400, slots=6, seed=0))
    assert guide.lp_columns(data) <= guide.WHOLE_LP_COLUMNS
    real = guide.l1_bound
    whole_lps: list[float] = []

    def whole_lp_stalls(sub, seconds, *args, **kwargs):
        if len(sub.jobs) < len(data.jobs):
            return real(sub, seconds, *args, **kwargs)
        whole_lps.append(seconds)
        return L1Bound(None, {}, False, seconds)

    monkeypatch.setattr(guide, "l1_bound", whole_lp_stalls)
    g = guide.guide(data, 60.0, Deadline.after(120))
    assert whole_lps  # with time, the whole LP after the parts
    cheap, _ = b0_module.cheap_bound(data, Deadline.after(60))
    assert g.lp.prices and g.prices is not None
    assert g.bound is not None and g.label.startswith("B1L") and g.bound < cheap
    plans = priced(data, g.lp, Deadline.after(60), g.prices)
    assert plans
    for raw in plans:
        solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
        assert validate(data.instance, solution) == []
        assert guaranteed_value(data, raw) <= 1000 * g.bound

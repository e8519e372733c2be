"""Repair's steps (#17): a group's CP-SAT model is C1–C7 and L1 alone (no count changes C9,
which only L3 reads), with the same L1 optimum as the full model, and with B1c's whole-slot
rows, which cut off no plan."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from schedopt.core.options import SolveOptions
from schedopt.model.emit_cpsat import CpsatSession
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.bound import l1_bound
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.exact import AdmissionHooks
from schedopt.problems.admission.lp_round import lp_round
from schedopt.problems.admission.model import build_model
from schedopt.problems.admission.repair import improve_group, left_for
from schedopt.problems.admission.strategies import instances


def _l1_optimum(data, l1_only: bool, whole_slots: bool = False) -> float | None:
    am = build_model(data, l1_only=l1_only, whole_slots=whole_slots)
    session = CpsatSession(am.model, AdmissionHooks.cpsat_linearization_level)
    session.set_level(am.model.levels[0])
    run = session.run(600.0, SolveOptions(time_limit_s=600.0, threads=1, deterministic=True))
    assert run.status.value in ("optimal", "infeasible"), run.status
    return run.objective


@settings(derandomize=True, deadline=None, max_examples=40,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(inst=instances(max_jobs=6, max_slots=4))
def test_the_l1_model_has_the_full_models_l1_optimum(inst) -> None:
    data = build_data(inst)
    assert _l1_optimum(data, True) == _l1_optimum(data, False)


@settings(derandomize=True, deadline=None, max_examples=40,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(inst=instances(max_jobs=6, max_slots=4))
def test_the_whole_slot_rows_keep_the_l1_optimum(inst) -> None:
    data = build_data(inst)
    assert _l1_optimum(data, True, whole_slots=True) == _l1_optimum(data, True)


def test_the_whole_slot_rows_hold_at_a_plan() -> None:
    """Every row of B1c holds at a plan of 120 jobs (the LP's rounding)."""
    from schedopt.problems.admission.codec import encode

    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    start = lp_round(data, l1_bound(data, 60))
    assert start is not None
    am = build_model(data, l1_only=True, whole_slots=True)
    (rows,) = [b for b in am.model.blocks if b.cid == "B1c"]
    assert len(rows) > 0
    point = encode(am, start)
    starts = rows.starts
    for r in range(len(rows)):
        a, b = starts[r], starts[r + 1]
        value = float(point[rows.cols[a:b]] @ rows.coefs[a:b])
        assert rows.lo[r] - 1e-9 <= value <= rows.hi[r] + 1e-9


def _one_group_step(monkeypatch):
    """The model a repair step builds for 30 deadline jobs of a 120-job plan (a spy on
    build_model), and their sub-instance."""
    inst = generate_custom(hosts=4, jobs=120, slots=6, seed=3)
    data = build_data(inst)
    start = lp_round(data, l1_bound(data, 60))
    assert start is not None
    built = []

    def spy(*args, **kwargs):
        am = build_model(*args, **kwargs)
        built.append(am)
        return am

    monkeypatch.setattr("schedopt.problems.admission.model.build_model", spy)
    indices = [j.index for j in data.jobs if j.is_slo][:30]
    sub = data.subset(indices, slot_capacity=left_for(data, start, set(indices)))
    improve_group(sub, [start[i] for i in indices], 2.0, 0, deterministic=True)
    (am,) = built
    return am, sub


def test_a_group_step_has_the_whole_slot_rows(monkeypatch) -> None:
    am, _ = _one_group_step(monkeypatch)
    assert sum(len(b) for b in am.model.blocks if b.cid == "B1c") > 0


def test_a_group_step_builds_no_count_changes(monkeypatch) -> None:
    am, sub = _one_group_step(monkeypatch)
    assert len(am.c) == 0
    assert not [b for b in am.model.blocks if b.cid.startswith("C9") and len(b)]
    full = build_model(sub)
    assert am.model.num_cols < full.model.num_cols


def test_the_repair_keeps_c3s_ledger_across_steps(monkeypatch) -> None:
    """Each step's capacity is what every other SLO job takes in the current plan (as if
    recomputed from all of them), but read from a ledger kept across the steps: only the
    group's own plans are read per step, not every job's (0.26 of 10 s at 3,200 jobs)."""
    from schedopt.core.stopping import Deadline
    from schedopt.problems.admission import repair as rep
    from schedopt.problems.admission.assemble import assemble, guaranteed_value
    from schedopt.problems.admission.heuristics import refill_best_effort
    from schedopt.problems.admission.lpdecomp import greedy_plans
    from schedopt.problems.admission.validate import validate

    inst = generate_custom(hosts=32, jobs=800, slots=12, seed=0)
    data = build_data(inst)
    far = Deadline.after(600)
    start = max(greedy_plans(data, far), key=lambda r: guaranteed_value(data, r))
    slo = sum(j.is_slo for j in data.jobs)
    read: list[int] = []
    groups: list[int] = []
    counting = [True]
    real_used_by, real_left_for = rep.used_by, rep.left_for

    def used_by(data_, raw, jobs):
        if counting[0]:
            read.append(len(jobs))
        return real_used_by(data_, raw, jobs)

    def left_for(data_, raw, group, used=None, own=None):
        got = real_left_for(data_, raw, group, used, own)
        counting[0] = False
        assert got == real_left_for(data_, raw, group)  # the same as from every job's plan
        counting[0] = True
        groups.append(len(group))
        return got

    monkeypatch.setattr(rep, "used_by", used_by)
    monkeypatch.setattr(rep, "left_for", left_for)
    raw, stats = rep.repair(data, start, far, 0, max_steps=6, deterministic=True)
    assert stats["repair_steps"] == 6 and stats["repair_improved"] >= 1
    # the ledger once, then per step the group's plans once, and for a step that gains its
    # new plans once more (its old plans taken out of the ledger are those read: 1 + steps +
    # improved reads, not 1 + steps + 2 × improved)
    assert len(read) == 1 + stats["repair_steps"] + stats["repair_improved"]
    assert sum(read) <= slo + 2 * sum(groups)
    assert sum(read) < 6 * (slo - max(groups))  # what recomputing it per step reads
    solution = assemble(data, refill_best_effort(data, raw), optimal_admission=False)
    assert validate(inst, solution) == []

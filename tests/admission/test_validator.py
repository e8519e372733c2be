"""The independent validator catches every kind of broken solution (so it can fail)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.problems.admission import SPEC, AdmissionInstance, AdmissionSolution
from schedopt.topology import Cluster

EXAMPLE = Path(__file__).resolve().parents[2] / "instances" / "admission" / "example.json"


@pytest.fixture(scope="module")
def solved():
    inst = schedopt.load(EXAMPLE)
    return inst, schedopt.solve(inst, "cpsat", time_limit_s=20).solution


def _tamper(sol: AdmissionSolution, job_id: str, **changes) -> AdmissionSolution:
    plans = tuple(p.model_copy(update=changes) if p.job_id == job_id else p for p in sol.plans)
    return sol.model_copy(update={"plans": plans})


def ids(inst, sol) -> set[str]:
    return {v.constraint_id for v in SPEC.validate(inst, sol)}


def test_the_untouched_solution_is_valid(solved) -> None:
    inst, sol = solved
    assert SPEC.validate(inst, sol) == []


def test_missing_plan_V1(solved) -> None:
    inst, sol = solved
    assert "V1" in ids(inst, sol.model_copy(update={"plans": sol.plans[1:]}))


def test_wrong_length_V1(solved) -> None:
    inst, sol = solved
    assert "V1" in ids(inst, _tamper(sol, "explore-1", gpus=(1,), gpu_types=("H100",)))


def test_disallowed_gang_size_V2(solved) -> None:
    inst, sol = solved
    p = sol.plan("explore-1")
    bad = _tamper(sol, "explore-1", gpus=(*p.gpus[:-1], 3), gpu_types=(*p.gpu_types[:-1], "H100"))
    assert "V2" in ids(inst, bad)


def test_running_before_arrival_V3(solved) -> None:
    inst, sol = solved  # gpt-eval arrives at 600 s = slot 1
    p = sol.plan("gpt-eval")
    bad = _tamper(sol, "gpt-eval", gpus=(2, *p.gpus[1:]), gpu_types=("H100", *p.gpu_types[1:]))
    assert "V3" in ids(inst, bad)


def test_over_capacity_V4(solved) -> None:
    inst, sol = solved
    p = sol.plan("explore-1")
    bad = _tamper(
        sol, "explore-1", gpus=(p.gpus[0], *[16] * 7), gpu_types=(p.gpu_types[0], *["H100"] * 7)
    )
    found = ids(inst, bad)
    assert "V4" in found and "V2" in found


def test_missed_deadline_V5(solved) -> None:
    inst, sol = solved
    p = sol.plan("llama-ft")
    assert p.admitted
    bad = _tamper(
        sol, "llama-ft", gpus=(p.gpus[0], *[0] * 7), gpu_types=(p.gpu_types[0], *[None] * 7)
    )
    assert "V5" in ids(inst, bad)


def test_earlier_guarantee_dropped_V6(solved) -> None:
    inst, sol = solved
    bad = _tamper(sol, "llama-ft", admitted=False, tier=None, gpus=(0,) * 8, gpu_types=(None,) * 8)
    assert "V6" in ids(inst, bad)


def test_rejected_job_with_gpus_V6(solved) -> None:
    inst, sol = solved
    bad = _tamper(
        sol, "resnet-nightly", gpus=(0, 0, 0, 0, 0, 0, 0, 8), gpu_types=(*[None] * 7, "H100")
    )
    assert "V6" in ids(inst, bad)


def test_shared_or_unavailable_gpu_V7(solved) -> None:
    inst, sol = solved
    placement = dict(sol.placement)
    first, second = sorted(placement)[:2]
    placement[second] = (placement[first][0], *placement[second][1:])
    assert "V7" in ids(inst, sol.model_copy(update={"placement": placement}))
    placement = dict(sol.placement)
    placement[first] = ("h1/g7", *placement[first][1:])  # h1/g7 is unavailable
    assert "V7" in ids(inst, sol.model_copy(update={"placement": placement}))


def test_small_job_split_across_hosts_V7(solved) -> None:
    inst, sol = solved
    job = next(j for j, g in sol.placement.items() if 1 < len(g) <= 4)
    gpus = list(sol.placement[job])
    other_host = "h0" if gpus[0].startswith("h1") else "h1"
    gpus[0] = inst.cluster.gpus_on(other_host)[0]
    bad = sol.model_copy(update={"placement": {**sol.placement, job: tuple(gpus)}})
    messages = [v.message for v in SPEC.validate(inst, bad) if v.constraint_id == "V7"]
    assert any("span" in m for m in messages), messages


# --- host fit in every slot, whole hosts for wide jobs (issue 7, item 14) ---------------------


def _wide_instance(unavailable: tuple[str, ...] = ()) -> AdmissionInstance:
    cluster = Cluster.dgx(nodes=3, gpus_per_node=8)
    jobs = [
        {"id": "wide", "kind": "best_effort", "remaining_iterations": 10**6,
         "throughput": {"1": 1.0, "4": 3.6, "8": 7.0, "16": 13.0}},
    ]  # fmt: skip
    doc = {"cluster": cluster, "unavailable_gpus": unavailable, "slots": 4, "slot_s": 100.0}
    return AdmissionInstance.model_validate({**doc, "jobs": jobs})


def _plan(sol: AdmissionSolution, gpus: tuple[int, ...]) -> AdmissionSolution:
    types = tuple("H100" if n else None for n in gpus)
    return _tamper(sol, "wide", gpus=gpus, gpu_types=types)


def test_gang_that_fits_no_host_in_a_future_slot_V4() -> None:
    # every host has 7 free GPUs (21 in all): 8 fit the capacity but no host
    inst = _wide_instance(("h0/g0", "h1/g0", "h2/g0"))
    sol = schedopt.solve(inst, "heuristic:edf", time_limit_s=5).solution
    assert SPEC.validate(inst, sol) == [] and 8 not in sol.plan("wide").gpus
    placed = sol.placement
    bad = _plan(sol, (sol.plan("wide").gpus[0], 1, 8, 1))
    assert bad.placement == placed  # slot 0 untouched
    messages = [v.message for v in SPEC.validate(inst, bad) if v.constraint_id == "V4"]
    assert messages == ["slot 2: 8 H100 GPUs fit no host (C3)"], messages
    fits = _plan(sol, (sol.plan("wide").gpus[0], 1, 4, 1))
    assert SPEC.validate(inst, fits) == []


def test_wide_gang_needs_whole_free_hosts_in_a_future_slot_V4() -> None:
    inst = _wide_instance(("h0/g0",))  # h1 and h2 whole: 16 fits, 16 + 8 does not
    sol = schedopt.solve(inst, "heuristic:edf", time_limit_s=5).solution
    ok = _plan(sol, (sol.plan("wide").gpus[0], 16, 16, 16))
    assert SPEC.validate(inst, ok) == []
    inst2 = _wide_instance(("h0/g0", "h1/g0"))  # one whole host left: 16 fits no pair of hosts
    bad = _plan(schedopt.solve(inst2, "heuristic:edf", time_limit_s=5).solution, (0, 0, 0, 16))
    bad = bad.model_copy(update={"placement": {}})
    assert [v.message for v in SPEC.validate(inst2, bad)] == [
        "slot 3: 16 H100 GPUs fit no host (C3)"
    ]


def test_wide_job_on_part_of_a_host_V7() -> None:
    inst = _wide_instance()
    sol = _plan(schedopt.solve(inst, "heuristic:edf", time_limit_s=5).solution, (16, 0, 0, 0))
    whole = (*inst.cluster.gpus_on("h0"), *inst.cluster.gpus_on("h1"))
    assert SPEC.validate(inst, sol.model_copy(update={"placement": {"wide": whole}})) == []
    split = (*inst.cluster.gpus_on("h0"), *inst.cluster.gpus_on("h1")[:4])
    split += inst.cluster.gpus_on("h2")[:4]
    bad = sol.model_copy(update={"placement": {"wide": split}})
    assert [v.message for v in SPEC.validate(inst, bad)] == [
        "job 'wide': wider than a host but uses part of 'h1'",
        "job 'wide': wider than a host but uses part of 'h2'",
    ]


# --- checks no test reached (a mutation audit, #17): each broken alone, its own message ------


def _messages(inst, sol, cid: str) -> list[str]:
    return [v.message for v in SPEC.validate(inst, sol) if v.constraint_id == cid]


def test_placement_on_an_unknown_gpu_V1(solved) -> None:
    inst, sol = solved
    job = sorted(sol.placement)[0]
    placement = {**sol.placement, job: ("h9/g9", *sol.placement[job][1:])}
    bad = sol.model_copy(update={"placement": placement})
    assert _messages(inst, bad, "V1") == [f"placement of job {job!r}: unknown GPU 'h9/g9'"]


def test_plan_for_an_unknown_job_V1(solved) -> None:
    inst, sol = solved
    ghost = sol.plans[0].model_copy(update={"job_id": "ghost"})
    bad = sol.model_copy(update={"plans": (*sol.plans, ghost)})
    assert _messages(inst, bad, "V1") == ["plan for unknown job 'ghost'"]


def test_negative_gpu_count_V1(solved) -> None:
    inst, sol = solved
    p = sol.plan("explore-1")
    bad = _tamper(sol, "explore-1", gpus=(*p.gpus[:-1], -1), gpu_types=(*p.gpu_types[:-1], None))
    assert "job 'explore-1': negative GPU count in slot 7" in _messages(inst, bad, "V1")


def test_best_effort_job_with_an_admission_V6(solved) -> None:
    inst, sol = solved
    bad = _tamper(sol, "explore-1", admitted=True, tier=0)
    assert _messages(inst, bad, "V6") == [
        "job 'explore-1': best-effort jobs carry no admission or tier"
    ]


def test_placed_job_that_does_not_run_in_slot_0_V7(solved) -> None:
    inst, sol = solved
    idle = next(p for p in sol.plans if p.job_id not in sol.placement)
    assert idle.gpus[0] == 0
    free = sorted(set(inst.cluster.gpus()) - {g for gs in sol.placement.values() for g in gs})
    bad = sol.model_copy(update={"placement": {**sol.placement, idle.job_id: (free[0],)}})
    assert _messages(inst, bad, "V7") == [
        f"job {idle.job_id!r} is placed but does not run in slot 0"
    ]


def test_placement_of_a_job_without_a_plan_V1(solved) -> None:
    inst, sol = solved
    gpus = next(iter(sol.placement.values()))
    bad = sol.model_copy(update={"placement": {**sol.placement, "ghost": gpus}})
    assert _messages(inst, bad, "V1") == ["placement of job 'ghost', which has no plan"]


def test_job_with_two_plans_V1(solved) -> None:
    inst, sol = solved
    bad = sol.model_copy(update={"plans": (*sol.plans, sol.plan("explore-1"))})
    assert _messages(inst, bad, "V1") == ["job 'explore-1' has 2 plans"]


def test_gpu_count_without_a_type_V1(solved) -> None:
    inst, sol = solved
    p = sol.plan("explore-1")
    bad = _tamper(sol, "explore-1", gpus=(*p.gpus[:-1], 2), gpu_types=(*p.gpu_types[:-1], None))
    assert _messages(inst, bad, "V1") == ["job 'explore-1': slot 7 count 2 with type None"]


def test_slo_job_without_an_admission_decision_V6(solved) -> None:
    inst, sol = solved
    bad = _tamper(sol, "bert-sweep", admitted=None)
    assert "job 'bert-sweep': SLO job without an admission decision" in _messages(inst, bad, "V6")


def test_earlier_guarantee_not_kept_V6(solved) -> None:
    inst, sol = solved
    assert next(j for j in inst.jobs if j.id == "llama-ft").admitted
    messages = _messages(inst, _tamper(sol, "llama-ft", admitted=False), "V6")
    assert "job 'llama-ft': was admitted earlier but is not kept" in messages


def test_admitted_without_a_tier_V6(solved) -> None:
    inst, sol = solved
    messages = _messages(inst, _tamper(sol, "llama-ft", tier=None), "V6")
    assert messages == ["job 'llama-ft': admitted without a valid tier"]


def test_rejected_without_a_reason_V6(solved) -> None:
    inst, sol = solved
    messages = _messages(inst, _tamper(sol, "resnet-nightly", rejection=None), "V6")
    assert messages == ["job 'resnet-nightly': rejected without a reason"]


def test_running_job_without_a_placement_V7(solved) -> None:
    inst, sol = solved
    job = sorted(sol.placement)[0]
    placement = {k: v for k, v in sol.placement.items() if k != job}
    bad = sol.model_copy(update={"placement": placement})
    assert _messages(inst, bad, "V7") == [f"job {job!r} runs in slot 0 but has no placement"]


def test_fewer_gpus_placed_than_planned_V7(solved) -> None:
    inst, sol = solved
    job, gpus = next((j, g) for j, g in sorted(sol.placement.items()) if len(g) > 1)
    bad = sol.model_copy(update={"placement": {**sol.placement, job: gpus[1:]}})
    assert _messages(inst, bad, "V7") == [
        f"job {job!r}: {len(gpus) - 1} GPUs placed, {len(gpus)} planned"
    ]


def test_placement_on_gpus_of_another_type_V7(solved) -> None:
    # the plan says A100 in slot 0 (a type this cluster has none of: V4 says so too), its
    # placement stays on the H100s: V7 names each GPU of the wrong type
    inst, sol = solved
    job = sorted(sol.placement)[0]
    plan = next(p for p in sol.plans if p.job_id == job)
    bad = _tamper(sol, job, gpu_types=("A100", *plan.gpu_types[1:]))
    wrong = [f"job {job!r}: GPU {g!r} is not A100" for g in sol.placement[job]]
    assert _messages(inst, bad, "V7") == wrong

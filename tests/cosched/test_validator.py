"""The independent validator catches a hand-broken schedule of every constraint kind (V1–V8),
on the golden instance where two complementary jobs share one group."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.problems.cosched import SPEC, CoschedSolution, PhasePlan

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "cosched"


@pytest.fixture(scope="module")
def solved():
    inst = schedopt.load(INSTANCES / "complementary-2j.json")
    sol = schedopt.solve(inst, "cpsat", time_limit_s=30).solution
    assert len(sol.groups) == 1 and len(sol.groups[0].members) == 2
    return inst, sol


def ids(inst, sol) -> set[str]:
    return {v.constraint_id for v in SPEC.validate(inst, sol)}


def _group(sol: CoschedSolution, **changes) -> CoschedSolution:
    return sol.model_copy(update={"groups": (sol.groups[0].model_copy(update=changes),)})


def _phase(sol: CoschedSolution, job: int, k: int, **changes) -> CoschedSolution:
    plans = list(sol.plans)
    phases = list(plans[job].phases)
    phases[k] = phases[k].model_copy(update=changes)
    plans[job] = plans[job].model_copy(update={"phases": tuple(phases)})
    return sol.model_copy(update={"plans": tuple(plans)})


def test_the_untouched_solution_is_valid(solved) -> None:
    inst, sol = solved
    assert SPEC.validate(inst, sol) == []


def test_job_without_plan_V1(solved) -> None:
    inst, sol = solved
    assert ids(inst, sol.model_copy(update={"plans": sol.plans[1:]})) == {"V1"}


def test_member_naming_another_group_V1(solved) -> None:
    inst, sol = solved
    plans = (sol.plans[0].model_copy(update={"group": "elsewhere"}), *sol.plans[1:])
    assert "V1" in ids(inst, sol.model_copy(update={"plans": plans}))


def test_host_in_two_groups_or_unknown_V2(solved) -> None:
    inst, sol = solved
    g = sol.groups[0]
    twice = sol.model_copy(
        update={"groups": (g, g.model_copy(update={"id": "other", "members": ()}))}
    )
    assert ids(inst, twice) == {"V2"}
    assert "V2" in ids(inst, _group(sol, hosts=(*g.hosts, "h20/99")))


def test_phase_wider_than_the_group_V3(solved) -> None:
    inst, sol = solved
    hosts = tuple(h for h in sol.groups[0].hosts if not h.startswith("h800"))
    assert "V3" in ids(inst, _group(sol, hosts=hosts))
    assert "V3" in ids(inst, _phase(sol, 0, 0, option=5))


def test_tp_crossing_a_host_V4(solved) -> None:
    inst, sol = solved
    doc = inst.model_dump(mode="json")
    doc["jobs"][0]["phases"][1]["options"][0].update(gpus=8, tp=8)
    doc["pools"][1]["gpus_per_host"] = 4
    wide = type(inst).model_validate(doc)
    assert "V4" in ids(wide, sol)


def test_residency_V5(solved) -> None:
    inst, sol = solved
    doc = inst.model_dump(mode="json")
    doc["pools"][1]["host_memory_gib"] = 1.5  # two jobs' 1 GiB of train state on one host
    assert ids(type(inst).model_validate(doc), sol) == {"V5"}


def test_overlap_on_a_pool_V6(solved) -> None:
    inst, sol = solved
    other = sol.plans[1].phases[0].start_ms
    assert "V6" in ids(inst, _phase(sol, 0, 0, start_ms=other))


def test_switch_time_is_kept_V6(solved) -> None:
    inst, sol = solved
    doc = inst.model_dump(mode="json")
    for job in doc["jobs"]:
        job["switch_ms"] = 3  # the plan left 1 ms between jobs on each pool
    assert "V6" in ids(type(inst).model_validate(doc), sol)


def test_precedence_inside_a_step_V7(solved) -> None:
    inst, sol = solved
    first = sol.plans[0].phases[0]
    broken = _phase(sol, 0, 1, start_ms=first.start_ms)  # train with its own rollout
    assert "V7" in ids(inst, broken)


def test_staleness_bound_V7(solved) -> None:
    inst, sol = solved
    doc = inst.model_dump(mode="json")
    doc["jobs"][0]["params_b"] = 1.0  # a 40 ms cross-pool sync: the next step starts too early
    assert "V7" in ids(type(inst).model_validate(doc), sol)


def test_cycle_over_slo_V8(solved) -> None:
    inst, sol = solved
    doc = inst.model_dump(mode="json")
    doc["jobs"][1]["slo_ms"] = sol.groups[0].cycle_ms - 1
    assert "V8" in ids(type(inst).model_validate(doc), sol)
    assert "V8" in ids(inst, _group(sol, cycle_ms=0))


def test_a_shifted_whole_cycle_is_the_same_schedule(solved) -> None:
    """Starts are modulo the cycle: shifting one job's step by whole cycles changes nothing."""
    inst, sol = solved
    T = sol.groups[0].cycle_ms
    plans = list(sol.plans)
    plans[1] = plans[1].model_copy(
        update={
            "phases": tuple(
                PhasePlan(option=p.option, start_ms=p.start_ms + 3 * T) for p in plans[1].phases
            )
        }
    )
    assert SPEC.validate(inst, sol.model_copy(update={"plans": tuple(plans)})) == []


def test_chance_constraint_V9() -> None:
    """chance-2j: alone, each job's timetable holds in every scenario; the shared plan of
    complementary-2j overruns h20 in the two scenarios with a 7 ms rollout (needs 3 of 4)."""
    shared = schedopt.load(INSTANCES / "complementary-2j.json")
    plan = schedopt.solve(shared, "cpsat", time_limit_s=30).solution
    chance = schedopt.load(INSTANCES / "chance-2j.json")
    assert ids(chance, plan) == {"V9"}
    relaxed = chance.model_copy(
        update={"chance": chance.chance.model_copy(update={"epsilon": 0.5})}
    )
    assert SPEC.validate(relaxed, plan) == []


def test_a_phase_much_longer_than_the_cycle_is_caught_quickly() -> None:
    """The V6 window once unrolled every occurrence of a phase that reaches into it: a
    scenario of 10⁶ ms in a 2 ms cycle (allowed in ε of the scenarios) meant 10⁶ occurrences
    and 4 s to validate CP-SAT's optimum with a 1 s time limit (10⁹ ms: a hang)."""
    import time

    from schedopt.core.status import Status
    from tests.timing import promised_s, slowdown

    option = {"pool": "r", "gpus": 1, "duration_ms": 2, "samples_ms": [2, 10**6]}
    inst = SPEC.instance_type.model_validate(
        {
            "pools": [
                {
                    "name": "r",
                    "hosts": 2,
                    "gpus_per_host": 1,
                    "host_memory_gib": 8.0,
                    "price_per_gpu_hour": 1.0,
                }
            ],
            "jobs": [
                {"id": "a", "slo_ms": 10, "phases": [{"name": "rollout", "options": [option]}]}
            ],
            "chance": {"epsilon": 0.5, "scenarios": 2},
        }
    )
    started = time.perf_counter()
    r = schedopt.solve(inst, "cpsat", time_limit_s=1)
    assert time.perf_counter() - started <= promised_s(1)
    assert r.status is Status.OPTIMAL
    # The same plan with ε = 0 breaks V9 (the long scenario overlaps its own next step).
    strict = inst.model_copy(update={"chance": inst.chance.model_copy(update={"epsilon": 0.0})})
    started = time.perf_counter()
    assert ids(strict, r.solution) == {"V9"}
    assert time.perf_counter() - started < slowdown()


@pytest.mark.parametrize(
    "name",
    ["h20/00", "h20/01", "h20/²", "h20/" + "1" * 5000],
    ids=["00", "01", "superscript", "5000-digits"],
)
def test_a_host_is_named_one_way_only_V2(solved, name: str) -> None:
    """``h20/00`` was a second name of ``h20/0``: a group listing both held two hosts of h20
    (twice the devices and memory, twice the cost) where the pool has one ``h20/0``; ``h20/²``
    and a 5,000-digit index made the validator raise ValueError."""
    inst, sol = solved
    g = sol.groups[0]
    assert ids(inst, _group(sol, hosts=(*g.hosts, name))) == {"V2"}


# --- each V1 check on its own (a mutation audit found these four never exercised, #17) -----


def _v1(inst, sol) -> list[str]:
    return [v.message for v in SPEC.validate(inst, sol) if v.constraint_id == "V1"]


def test_group_listed_twice_V1(solved) -> None:
    inst, sol = solved
    g = sol.groups[0]
    assert _v1(inst, sol.model_copy(update={"groups": (g, g)})) == [f"group {g.id!r} listed twice"]


def test_plan_for_an_unknown_job_V1(solved) -> None:
    inst, sol = solved
    ghost = sol.plans[0].model_copy(update={"job_id": "ghost"})
    bad = sol.model_copy(update={"plans": (*sol.plans, ghost)})
    assert _v1(inst, bad) == ["a plan for unknown job 'ghost'"]


def test_job_planned_twice_V1(solved) -> None:
    inst, sol = solved
    first = sol.plans[0]
    bad = sol.model_copy(update={"plans": (*sol.plans, first)})
    assert _v1(inst, bad) == [f"job {first.job_id!r} planned twice"]


def test_plan_with_a_phase_missing_V1(solved) -> None:
    inst, sol = solved
    plans = list(sol.plans)
    plans[0] = plans[0].model_copy(update={"phases": plans[0].phases[:-1]})
    n = len(plans[0].phases)
    bad = sol.model_copy(update={"plans": tuple(plans)})
    assert _v1(inst, bad) == [f"job {plans[0].job_id!r}: {n} phases planned"]

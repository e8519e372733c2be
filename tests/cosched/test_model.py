"""What is specific to the co-scheduling model: its rows, its codec, its refusals and its
infeasibility explanation (the conformance suite checks the rest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.cosched import generate, generate_custom
from schedopt.problems.cosched.assemble import raw_from_solution
from schedopt.problems.cosched.codec import decode, encode
from schedopt.problems.cosched.data import aggregate_bound, build_data
from schedopt.problems.cosched.model import build_model

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "cosched"
NAMES = ["complementary-2j", "affinity-3j", "residency-2j", "stale-1j", "infeasible-slo"]


def _instances():
    return [schedopt.load(INSTANCES / f"{n}.json") for n in NAMES] + [generate("tiny", 1)]


@pytest.mark.parametrize("inst", _instances(), ids=[*NAMES, "tiny-s1"])
def test_no_row_names_a_column_twice(inst) -> None:
    """HiGHS's addRows refuses a block with a repeated index in a row (one-phase jobs' C9 did)."""
    model = build_model(build_data(inst)).model
    for block in model.blocks:
        for r in range(len(block)):
            cols, _ = block.row(r)
            assert len(set(cols.tolist())) == len(cols), (block.cid, r)


@pytest.mark.parametrize("method", ["heuristic:packing", "heuristic:disaggregated"])
def test_encoded_heuristic_plans_are_points_of_the_model(method: str) -> None:
    inst = generate("small", 2)
    sol = schedopt.solve(inst, method, time_limit_s=10).solution
    cm = build_model(build_data(inst))
    x = encode(cm, raw_from_solution(inst, sol))
    assert cm.model.violated_rows(x) == []
    again = decode(cm, x)
    assert again.option == raw_from_solution(inst, sol).option


def test_a_wrong_cycle_is_not_a_point() -> None:
    inst = schedopt.load(INSTANCES / "complementary-2j.json")
    sol = schedopt.solve(inst, "cpsat", time_limit_s=10).solution
    cm = build_model(build_data(inst))
    raw = raw_from_solution(inst, sol)
    raw.groups[0].cycle -= 1
    x = encode(cm, raw)
    assert cm.model.violated_rows(x)  # some pool's occurrences now overlap


def test_oversize_models_are_refused_with_the_aggregate_bound() -> None:
    inst = generate_custom(41, 41, 40, 40, 0, (0, 1), scale=4)
    r = schedopt.solve(inst, "cpsat", time_limit_s=2)
    assert r.status is Status.NO_SOLUTION and "too large" in r.explanation
    assert r.best_bound == pytest.approx(aggregate_bound(build_data(inst)))
    auto = schedopt.solve(inst, "auto", time_limit_s=2)
    assert auto.solution is not None and auto.best_bound <= auto.objectives[0]


def test_infeasibility_names_the_job_that_fails_alone() -> None:
    r = schedopt.solve(schedopt.load(INSTANCES / "infeasible-slo.json"), "cpsat", time_limit_s=20)
    assert r.status is Status.INFEASIBLE
    assert "'late'" in r.explanation and "'ok'" not in r.explanation


def test_infeasibility_of_a_set_names_a_minimal_conflict() -> None:
    doc = schedopt.load(INSTANCES / "residency-2j.json").model_dump(mode="json")
    for pool in doc["pools"]:
        pool["hosts"] = 1  # x and y each fit alone, not together (host memory, C6)
    doc["jobs"].append({**doc["jobs"][0], "id": "z", "slo_ms": 100})
    doc["jobs"][2]["phases"] = [
        {"name": "rollout", "options": [{"pool": "h20", "gpus": 1, "duration_ms": 1}]}
    ]
    inst = schedopt.get_problem("cosched").instance_type.model_validate(doc)
    r = schedopt.solve(inst, "cpsat", time_limit_s=20)
    assert r.status is Status.INFEASIBLE
    assert "'x'" in r.explanation and "'y'" in r.explanation and "'z'" not in r.explanation
    assert "minimal" in r.explanation


def test_aggregate_bound_is_below_every_optimum() -> None:
    import json

    golden = json.loads((INSTANCES / "golden.json").read_text())
    for name, rec in golden.items():
        if rec["status"] == "optimal":
            bound = aggregate_bound(build_data(schedopt.load(INSTANCES / name)))
            assert bound is not None and bound <= rec["objectives"][0] + 1e-9, name
    assert np.isfinite(bound)


def test_chance_blocks_say_the_same_on_every_back_end() -> None:
    """C13's blocks at fixed points, and at points breaking one block alone (the conformance
    suite's equivalence check runs on generated instances, which have no chance constraint)."""
    from schedopt.model.equivalence import check_point, witnesses

    inst = schedopt.load(INSTANCES / "chance-2j.json")
    cm = build_model(build_data(inst))
    assert {"C13a", "C13b", "C13c"} <= {b.cid for b in cm.model.blocks}
    sol = schedopt.solve(inst, "milp:highs", time_limit_s=30).solution
    x = encode(cm, raw_from_solution(inst, sol))
    assert cm.model.violated_rows(x) == []
    assert check_point(cm.model, x) == []
    rng = np.random.default_rng(0)
    broken = [w for w in witnesses(cm.model, rng) if w[0].startswith("C13")]
    assert broken
    for _cid, _kind, point in broken:
        assert check_point(cm.model, point) == []


def test_heuristics_hold_every_scenario() -> None:
    inst = schedopt.load(INSTANCES / "chance-2j.json")
    r = schedopt.solve(inst, "heuristic:packing", time_limit_s=10)
    assert r.status is Status.FEASIBLE
    assert r.objectives[0] == pytest.approx(57.04)  # the golden optimum: one group per job


@pytest.mark.parametrize("method", ["cpsat", "milp:highs", "milp:cbc"])
def test_an_option_longer_than_the_slo_puts_no_huge_coefficient_in_the_model(method) -> None:
    """C5c: an option longer than its job's SLO can never run (C12), but offered it put
    ⌊1000·n·d/S⌋ = 1.3·10¹⁶ into C14b, which HiGHS refused with a RuntimeError."""
    wide = 2**17
    inst = schedopt.get_problem("cosched").instance_type.model_validate(
        {
            "pools": [
                {
                    "name": "r",
                    "hosts": 2,
                    "gpus_per_host": wide,
                    "host_memory_gib": 8.0,
                    "price_per_gpu_hour": 1.0,
                }
            ],
            "jobs": [
                {
                    "id": "a",
                    "slo_ms": 10,
                    "phases": [
                        {
                            "name": "rollout",
                            "options": [
                                {"pool": "r", "gpus": 1, "duration_ms": 2},
                                {"pool": "r", "gpus": wide, "duration_ms": 10**9},
                            ],
                        }
                    ],
                }
            ],
        }
    )
    model = build_model(build_data(inst)).model
    assert max(abs(c) for b in model.blocks for c in b.coefs) < 1e12
    r = schedopt.solve(inst, method, time_limit_s=10)
    assert r.status is Status.OPTIMAL and r.objectives[0] == pytest.approx(wide)


@pytest.mark.parametrize("broken", ["fewer phases", "no group"])
def test_an_inconsistent_hint_is_ignored_not_a_crash(broken: str) -> None:
    """A hint is caller input: a plan with a phase missing raised IndexError, a job whose
    group is not listed KeyError, inside the exact methods' encoding of the hint."""
    inst = schedopt.load(INSTANCES / "complementary-2j.json")
    sol = schedopt.solve(inst, "heuristic:disaggregated", time_limit_s=5).solution
    first = sol.plans[0]
    if broken == "fewer phases":
        short = first.model_copy(update={"phases": first.phases[:1]})
        hint = sol.model_copy(update={"plans": (short, *sol.plans[1:])})
    else:
        hint = sol.model_copy(update={"groups": sol.groups[1:]})
    assert raw_from_solution(inst, hint) is None
    for method in ("cpsat", "milp:highs"):
        r = schedopt.solve(inst, method, time_limit_s=10, hint=hint)
        assert r.status is Status.OPTIMAL and r.objectives[0] == pytest.approx(28.52)


def test_a_fleet_whose_cost_overflows_int64_is_refused_on_load() -> None:
    """L1 sums cents × devices per host × hosts over one candidate group per job: at the
    field maxima (2²⁰ devices per host, 10⁵ hosts, $10⁴ per device-hour) 100 jobs made CP-SAT
    reject the model ("Possible integer overflow in objective") with a RuntimeError."""
    from schedopt.core.errors import InvalidInstanceError

    def doc(jobs: int) -> dict:
        pool = {
            "name": "r",
            "hosts": 100_000,
            "gpus_per_host": 2**20,
            "host_memory_gib": 8.0,
            "price_per_gpu_hour": 1e4,
        }
        option = {"pool": "r", "gpus": 1, "duration_ms": 6}
        phases = [{"name": "rollout", "options": [option]}]
        return {
            "pools": [pool],
            "jobs": [{"id": f"a{i}", "slo_ms": 10, "phases": phases} for i in range(jobs)],
        }

    instance_type = schedopt.get_problem("cosched").instance_type
    with pytest.raises(InvalidInstanceError, match=r"pools\[0\]\.hosts"):
        instance_type.model_validate(doc(100))
    r = schedopt.solve(instance_type.model_validate(doc(2)), "cpsat", time_limit_s=10)
    assert r.status is Status.OPTIMAL and r.objectives[0] == pytest.approx(2 * 2**20 * 1e4)


def test_a_conflict_is_called_minimal_only_when_every_deletion_was_decided() -> None:
    """The deletion filter keeps a job whose removal it could not decide in its time (None):
    the set may then not be minimal, and the explanation must not say it is."""
    from schedopt.core.stopping import Deadline
    from schedopt.problems.cosched.explain import explain_infeasible

    data = build_data(generate("small", 0))

    def undecided(_data, jobs, _seconds):  # every job fits alone; no deletion is decided
        return True if len(jobs) == 1 else None

    why = explain_infeasible(data, Deadline.after(60), undecided)
    assert "may not be minimal" in why, why


def test_export_refuses_an_oversize_model(tmp_path) -> None:
    """``schedopt export`` built the model whatever its size (10¹⁰ nonzeros at 1,000 jobs);
    50 jobs are just over the 2·10⁶ nonzeros no back-end is given."""
    from schedopt.core.errors import ModelTooLargeError

    inst = generate_custom(256, 256, 200, 50, 0, (0, 1), scale=4)
    with pytest.raises(ModelTooLargeError, match="nonzeros"):
        schedopt.get_problem("cosched").export_model(inst, str(tmp_path / "m.mps"), "mps")


def test_the_refusal_of_an_oversize_model_says_which_rule() -> None:
    """An exact model is refused above the nonzeros no back-end is given, or when its build
    would take more than half the time left; the reason names the rule it broke (it read
    "about 4.9 s to build; 9.7 s left" at 656 GPUs × 40 jobs, as if 4.9 s did not fit)."""
    from schedopt.problems.cosched.data import BUILD_S_PER_NONZERO, MAX_NONZEROS

    big = build_data(generate_custom(256, 256, 200, 50, 0, (0, 1), scale=4))
    assert big.nonzeros > MAX_NONZEROS
    assert f"more than the {MAX_NONZEROS:,}" in str(big.too_big_for(1e9))
    data = build_data(generate_custom(256, 256, 200, 20, 0, (0, 1), scale=4))
    build_s = data.nonzeros * BUILD_S_PER_NONZERO
    assert data.nonzeros <= MAX_NONZEROS
    assert data.too_big_for(2.1 * build_s) is None
    assert "more than half the" in str(data.too_big_for(1.9 * build_s))

"""The independent validator catches every kind of broken solution (so it can fail)."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt
from schedopt.problems.admission import SPEC, AdmissionSolution

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

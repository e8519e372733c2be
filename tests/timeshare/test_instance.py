"""Bad rounds are refused with the field named, pairs included (the fast pass over pairs must
let none through)."""

from __future__ import annotations

from typing import Any

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.problems.timeshare import TimeshareInstance


def doc(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "policy": "max_min_fairness_perf",
        "workers": {"v100": 2, "k80": 1},
        "jobs": [
            {"id": "a", "throughput": {"v100": 2.0, "k80": 1.0}},
            {"id": "b", "throughput": {"v100": 1.0}},
            {"id": "c", "throughput": {"v100": 1.0}, "scale_factor": 2},
        ],
        "pairs": [{"jobs": ["a", "b"], "throughput": {"v100": [1.0, 0.5]}}],
    }
    return {**base, **changes}


def test_the_base_round_is_valid() -> None:
    assert len(TimeshareInstance.model_validate(doc()).pairs) == 1


@pytest.mark.parametrize(
    ("pairs", "path", "reason"),
    [
        ([{"jobs": ["a", "zz"], "throughput": {}}], "pairs[0].jobs[1]", "unknown job"),
        ([{"jobs": ["a", "a"], "throughput": {}}], "pairs[0].jobs", "itself"),
        (
            [{"jobs": ["a", "b"], "throughput": {}}, {"jobs": ["b", "a"], "throughput": {}}],
            "pairs[1].jobs",
            "given twice",
        ),
        ([{"jobs": ["a", "c"], "throughput": {}}], "pairs[0].jobs", "different scale factors"),
        ([{"jobs": ["a", "b"], "throughput": {"h100": [1, 1]}}], "pairs[0].throughput", "unknown"),
        ([{"jobs": ["a", "b"], "throughput": {"v100": [1e-9, 1]}}], "pairs[0].throughput", "0 or"),
        ([{"jobs": ["a", "b"], "throughput": {"v100": [-1, 1]}}], "pairs[0].throughput", ""),
    ],
)
def test_bad_pairs_name_the_field(pairs: list, path: str, reason: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(doc(pairs=pairs))
    assert any(p.startswith(path) and reason in r for p, r in err.value.problems), err.value


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"workers": {"v100": 0, "k80": 0}}, "workers"),
        ({"policy": "max_min_fairness"}, "pairs"),
        ({"policy": "min_makespan"}, "jobs[0].remaining_steps"),
        ({"workers": {"v100": 1, "k80": 1}}, "jobs[2].scale_factor"),
    ],
)
def test_bad_rounds_name_the_field(change: dict, path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(doc(**change))
    assert any(p.startswith(path) for p, _ in err.value.problems), err.value


def typed(colocation: list, **job_changes: Any) -> dict[str, Any]:
    """``doc()`` with job types (a, b: "x"; c: "y") and a co-location table."""
    base = doc(pairs=[], colocation=colocation)
    types = {"a": "x", "b": "x", "c": "y", **job_changes}
    base["jobs"] = [{**j, "job_type": types[j["id"]]} for j in base["jobs"]]
    return base


def test_a_colocation_table_is_valid_and_may_name_types_no_job_has() -> None:
    from schedopt.problems.timeshare.instance import implied_pairs

    inst = TimeshareInstance.model_validate(
        typed([{"job_types": ["x", "x"], "throughput": {"v100": [1.0, 1.0]}}])
    )
    assert len(inst.colocation) == 1 and implied_pairs(inst) == 1
    # a scheduler's whole table: types absent from this round imply no pair
    inst = TimeshareInstance.model_validate(
        typed([{"job_types": ["x", "zz"], "throughput": {"v100": [1.0, 1.0]}}])
    )
    assert implied_pairs(inst) == 0


@pytest.mark.parametrize(
    ("colocation", "path", "reason"),
    [
        (
            [{"job_types": ["x", "y"], "throughput": {}}],
            "colocation[0].job_types",
            "different scale factors",
        ),
        (
            [
                {"job_types": ["x", "x"], "throughput": {}},
                {"job_types": ["x", "x"], "throughput": {}},
            ],
            "colocation[1].job_types",
            "given twice",
        ),
        (
            [{"job_types": ["x", "x"], "throughput": {"h100": [1, 1]}}],
            "colocation[0].throughput",
            "unknown",
        ),
        (
            [{"job_types": ["x", "x"], "throughput": {"v100": [1e-9, 1]}}],
            "colocation[0].throughput",
            "0 or",
        ),
        (
            [{"job_types": ["x", "x"], "throughput": {"v100": [-1, 1]}}],
            "colocation[0].throughput",
            "",
        ),
    ],
)
def test_bad_colocation_names_the_field(colocation: list, path: str, reason: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(typed(colocation))
    assert any(p.startswith(path) and reason in r for p, r in err.value.problems), err.value


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        ({"policy": "max_min_fairness"}, "colocation", "takes no pairs"),
        ({"pairs": doc()["pairs"]}, "colocation", "not both"),
    ],
)
def test_colocation_rounds_name_the_field(change: dict, path: str, reason: str) -> None:
    base = {**typed([{"job_types": ["x", "x"], "throughput": {"v100": [1.0, 1.0]}}]), **change}
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(base)
    assert any(p == path and reason in r for p, r in err.value.problems), err.value


def test_jobs_of_one_type_have_one_scale_factor() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(typed([], c="x"))
    assert any(p == "jobs[2].scale_factor" and "'x'" in r for p, r in err.value.problems)


def test_more_implied_pairs_than_an_instance_holds_are_refused(monkeypatch) -> None:
    from schedopt.problems.timeshare import instance

    monkeypatch.setattr(instance, "MAX_PAIRS", 0)
    with pytest.raises(InvalidInstanceError) as err:
        TimeshareInstance.model_validate(
            typed([{"job_types": ["x", "x"], "throughput": {"v100": [1.0, 1.0]}}])
        )
    assert any(p == "colocation" and "implies 1 job pairs" in r for p, r in err.value.problems)

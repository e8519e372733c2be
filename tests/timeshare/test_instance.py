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

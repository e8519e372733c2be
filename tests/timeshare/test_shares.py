"""A solution's shares are arrays; the Share objects, made when read, say the same (issue 19).
The validator reads the arrays: a solver's point that breaks a row is caught there too."""

from __future__ import annotations

import numpy as np
import pytest

import schedopt
from schedopt.problems.timeshare import TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.solution import Share, Shares
from schedopt.problems.timeshare.validate import validate

from .test_validator import INST, TYPED


def packed(n: int = 12) -> TimeshareInstance:
    kinds = ("x", "y", "z")
    return TimeshareInstance.model_validate(
        {
            "workers": {"v100": 3, "k80": 2},
            "efficiency": False,
            "jobs": [
                {
                    "id": f"j{i}",
                    "throughput": {"v100": 2.0 + i % 3, "k80": 1.0},
                    "job_type": kinds[i % 3],
                }
                for i in range(n)
            ],
            "colocation": [
                {"job_types": [a, b], "throughput": {"v100": [1.5, 1.2], "k80": [0.7, 0.6]}}
                for i, a in enumerate(kinds)
                for b in kinds[i:]
            ],
        }
    )


def test_the_share_objects_are_the_arrays() -> None:
    sol = schedopt.solve(packed(), "milp:highs").solution
    s = sol.shares
    assert s._items is None  # nothing made by the solve and its validation
    assert len(s) == len(s.fraction) and np.any(s.partner >= 0)
    for k, share in enumerate(s):
        assert share.job == s.jobs[s.job[k]]
        assert share.with_job == (None if s.partner[k] < 0 else s.jobs[s.partner[k]])
        assert share.worker_type == s.types[s.type[k]]
        assert share.fraction == s.fraction[k]
    again = TimeshareSolution.model_validate_json(sol.model_dump_json())
    assert again == sol and tuple(again.shares) == tuple(sol.shares)
    np.testing.assert_array_equal(again.shares.fraction, s.fraction)


def test_shares_of_objects_become_arrays() -> None:
    items = (
        Share(job="a", worker_type="k80", fraction=0.25),
        Share(job="b", with_job="a", worker_type="v100", fraction=0.5),
    )
    s = TimeshareSolution(shares=items).shares
    assert isinstance(s, Shares) and s == items
    assert s.jobs == ("a", "b") and s.types == ("k80", "v100")
    assert s.job.tolist() == [0, 1] and s.partner.tolist() == [-1, 0]
    assert s.fraction.tolist() == [0.25, 0.5]


def arrays(*rows: tuple[str, str | None, str, float]) -> TimeshareSolution:
    """A solution made straight from arrays (as the solvers make it: no pydantic check)."""
    jobs = ("a", "b", "zz")
    types = ("v100", "k80", "p100", "h100")
    return TimeshareSolution.of_arrays(
        Shares(
            jobs,
            types,
            [jobs.index(j) for j, _, _, _ in rows],
            [-1 if o is None else jobs.index(o) for _, o, _, _ in rows],
            [types.index(w) for _, _, w, _ in rows],
            [f for _, _, _, f in rows],
        )
    )


@pytest.mark.parametrize(
    "rows,expected",
    [
        ([("a", None, "k80", 1.0), ("b", None, "v100", 0.5)], []),
        ([("a", None, "k80", float("nan"))], ["V1"]),
        ([("a", None, "k80", 1.5)], ["V1", "V2", "V3"]),  # a is a 2-GPU gang, on 2 K80s
        ([("a", None, "k80", -0.1)], ["V1"]),
        ([("zz", None, "v100", 0.1)], ["V1"]),
        ([("a", None, "h100", 0.1)], ["V1"]),
        ([("a", "a", "v100", 0.1)], ["V1"]),
        ([("a", None, "k80", 0.5), ("a", None, "k80", 0.2)], ["V1"]),
        ([("a", "b", "v100", 0.1), ("b", "a", "v100", 0.1)], ["V1"]),
        ([("a", None, "k80", 0.6), ("a", None, "v100", 0.3), ("a", "b", "v100", 0.2)], ["V2"]),
        ([("b", None, "v100", 0.6), ("a", "b", "v100", 0.4), ("a", None, "v100", 0.2)], ["V3"]),
        ([("b", None, "k80", 0.1)], ["V4"]),
        ([("a", "b", "k80", 0.1)], ["V4"]),
        ([("a", None, "p100", 0.1)], ["V4"]),
    ],
)
def test_the_validator_reads_the_arrays(rows, expected) -> None:
    assert [v.constraint_id for v in validate(INST, arrays(*rows))] == expected


def test_a_pair_by_type_is_looked_up_in_the_table() -> None:
    """x with x on v100 (the earlier job first), y with x; d has no type; c with c is no pair."""
    jobs = ("a", "b", "c", "d")
    ok = Shares(jobs, ("v100",), [1, 0], [0, 2], [0, 0], [0.4, 0.3])
    assert validate(TYPED, TimeshareSolution.of_arrays(ok)) == []
    bad = Shares(jobs, ("v100",), [0, 2], [3, 2], [0, 0], [0.1, 0.1])
    assert [v.constraint_id for v in validate(TYPED, TimeshareSolution.of_arrays(bad))] == [
        "V1",
        "V1",
    ]

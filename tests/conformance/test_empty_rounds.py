"""A round with no jobs, wherever an instance has a job list: either the loader refuses it with
the field named, or it is a valid instance that every method answers, the exact ones with a
proof (fair share per job crashed in its data builder, and HiGHS answered NO_SOLUTION on
admission's model without columns, #16)."""

from __future__ import annotations

import json

import pytest

import schedopt
from schedopt.core.status import Status

from .support import AUTO, INSTANCES, PROBLEMS, is_heuristic, methods


def _emptied() -> list:
    """One document per problem and mode (fair share's fairness_unit, timeshare's policy), its
    jobs removed."""
    out, seen = [], set()
    for problem in PROBLEMS:
        for path in sorted((INSTANCES / problem).glob("*.json")):
            doc = json.loads(path.read_text())
            mode = (problem, doc.get("fairness_unit"), doc.get("policy"))
            if path.stem.startswith("golden") or "jobs" not in doc or mode in seen:
                continue
            seen.add(mode)
            out.append(pytest.param(problem, {**doc, "jobs": []}, id=f"{problem}-{path.stem}"))
    return out


@pytest.mark.parametrize(("problem", "doc"), _emptied())
def test_no_jobs_is_refused_by_name_or_answered_by_every_method(problem: str, doc: dict) -> None:
    try:
        inst = schedopt.io.parse_instance(doc)
    except schedopt.InvalidInstanceError as err:
        assert any(path.startswith("jobs") for path, _ in err.problems), err
        return
    for method in [*methods(problem), AUTO]:
        result = schedopt.solve(inst, method, time_limit_s=10)
        expected = Status.FEASIBLE if is_heuristic(problem, method) else Status.OPTIMAL
        assert result.status is expected, (method, result.status, result.explanation)
        assert result.solution is not None

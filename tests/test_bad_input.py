"""Conformance over every registered problem: broken input gives InvalidInstanceError, never
another exception, and a document that survives its mutations still solves cleanly."""

from __future__ import annotations

import contextlib
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status

PROBLEMS = sorted(schedopt.problem_names())


def _strategies(problem: str):
    return importlib.import_module(f"schedopt.problems.{problem}.strategies")


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=300)
@given(data=st.data())
def test_mutated_documents_load_or_raise_invalid_instance(problem: str, data) -> None:
    doc = data.draw(_strategies(problem).mutated_dicts())
    try:
        inst = schedopt.io.parse_instance(doc)
    except schedopt.InvalidInstanceError as err:
        assert str(err)
        for path, reason in err.problems:
            assert reason, path
        return
    # Still valid after mutation: it must then also solve cleanly with the first heuristic.
    heuristic = schedopt.get_problem(problem).auto_heuristics[0]
    result = schedopt.solve(inst, heuristic, time_limit_s=5)
    assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)


@pytest.mark.parametrize("problem", PROBLEMS)
@settings(derandomize=True, deadline=None, max_examples=200)
@given(data=st.data())
def test_corrupted_files_raise_invalid_instance(problem: str, data) -> None:
    text = data.draw(_strategies(problem).bad_texts())
    with contextlib.suppress(schedopt.InvalidInstanceError):
        schedopt.loads(text)

"""Admission time limits beyond the generic promise (tests/conformance/test_time_limit.py)."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.status import Status


def test_auto_falls_back_to_the_heuristics_when_the_model_is_too_large() -> None:
    from schedopt.problems.admission import generate_custom

    inst = generate_custom(hosts=1, jobs=400, slots=3000, seed=0, slot_s=60.0)
    with pytest.raises(schedopt.ModelTooLargeError):
        schedopt.solve(inst, "cpsat", time_limit_s=5)
    result = schedopt.solve(inst, "auto", time_limit_s=20)
    assert result.status is Status.FEASIBLE and result.solution is not None
    assert "variables" in result.explanation

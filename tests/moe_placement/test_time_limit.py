"""MoE time limits beyond the generic promise on the largest generated instance
(tests/conformance/test_time_limit.py): the medium size, which the models build and run, and
the DeepSeek-V3 shape."""

from __future__ import annotations

import functools
import time

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.moe_placement import generate
from tests.timing import promised_s, quiet_s

pytestmark = pytest.mark.slow


@functools.cache
def _instance(size: str):
    return generate(size, 0)


# medium: 16 GPUs, 16 × 64 experts, ≈ 33k variables: built and run within 3 s (milp:highs runs
# inside auto there, so it is not repeated); large (refused at once) is in tests/conformance.
CASES = [("medium", m) for m in ("auto", "milp:cbc", "cpsat")]


@pytest.mark.parametrize(("size", "method"), CASES)
@pytest.mark.parametrize("limit", [0.5, 3.0])
def test_large_instance_returns_within_the_limit(size: str, method: str, limit: float) -> None:
    large = _instance(size)
    started = time.perf_counter()
    result = schedopt.solve(large, method, time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(limit), (elapsed, promised_s(limit), result.stats)
    assert result.wall_s <= elapsed
    if method == "auto" and quiet_s(limit) >= 0.5:  # the heuristics have an answer here
        assert result.status is Status.FEASIBLE
        assert result.solution is not None
    else:
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)
    if result.status is Status.NO_SOLUTION:
        assert result.explanation


@pytest.mark.parametrize("limit", [0.5, 8.0])
def test_deepseek_v3_shape_keeps_the_promise(limit: float) -> None:
    from schedopt.problems.moe_placement import generate_custom

    inst = generate_custom(shape="deepseek-v3", hosts=32)  # 256 GPUs, 58 layers × 256 experts
    started = time.perf_counter()
    result = schedopt.solve(inst, "auto", time_limit_s=limit)
    assert time.perf_counter() - started <= promised_s(limit)
    if quiet_s(limit) < 1.0:
        # The all-pairs bandwidths (0.5 s) and EPLB (about 1 s) need more than half a second
        # here, and more on a busy machine, where building the data without a deadline took
        # 2.35 s beside a CPU burner: the honest answers are a placement or NO_SOLUTION
        # saying where the time went.
        assert result.status in (Status.FEASIBLE, Status.NO_SOLUTION)
        said = result.explanation or ""
        assert result.status is Status.FEASIBLE or "EPLB" in said or "MoE data" in said
    else:
        assert result.status is Status.FEASIBLE

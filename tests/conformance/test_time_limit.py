"""A time limit is a promise: every method of every problem returns within it plus
``TIME_LIMIT_OVERHEAD_S`` on the problem's largest generated instance, with an honest status:
``auto`` and every heuristic ``auto`` runs with an answer, the others with one or with
NO_SOLUTION and a reason.

The margin is the documented overhead scaled by the machine's measured slowdown
(``tests/timing.py``; 1 on a quiet machine). The slow stage (``-m slow``).
"""

from __future__ import annotations

import functools
import time

import pytest

import schedopt
from schedopt.core.status import Status
from tests.timing import promised_s, quiet_s

from .support import AUTO, cases, is_heuristic, spec

pytestmark = pytest.mark.slow


@functools.cache
def _largest(problem: str):
    s = spec(problem)
    return s.generate(s.sizes[-1], 0)


@pytest.mark.parametrize(("problem", "method"), cases(lambda p: list(spec(p).methods), auto=True))
@pytest.mark.parametrize("limit", [0.5, 3.0])
def test_largest_instance_returns_within_the_limit(problem: str, method: str, limit: float) -> None:
    inst = _largest(problem)
    started = time.perf_counter()
    result = schedopt.solve(inst, method, time_limit_s=limit)
    elapsed = time.perf_counter() - started
    assert elapsed <= promised_s(limit), (elapsed, promised_s(limit), result.stats)
    assert result.wall_s <= elapsed
    assert result.time_limit_s == limit
    if method == AUTO:  # auto runs the heuristics first: it always has an answer here
        assert result.status in (Status.FEASIBLE, Status.OPTIMAL)
        assert result.solution is not None
    else:
        assert result.status in (Status.FEASIBLE, Status.OPTIMAL, Status.NO_SOLUTION)
    if is_heuristic(problem, method):
        assert result.status is not Status.OPTIMAL
    # no proof, but an answer: auto relies on it (given what a quiet machine has in 0.5 s)
    if method in spec(problem).auto_heuristics and quiet_s(limit) >= 0.5:
        assert result.status is Status.FEASIBLE
        assert result.solution is not None
    if result.status is Status.NO_SOLUTION:  # says where the time went
        assert result.explanation or result.best_bound is not None or result.stats

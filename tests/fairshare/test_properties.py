"""Fair-share-specific hypothesis properties (validity, honesty, heuristics against proven optima
and hints of every method are in tests/conformance/test_properties.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import schedopt
from schedopt.problems.fairshare.strategies import instances

SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow]
)
METHODS = [
    "cpsat",
    "milp:highs",
    "milp:cbc",
    "heuristic:astraea",
    "heuristic:gavel-round",
    "auto",
]


@pytest.mark.slow
@SETTINGS
@given(inst=instances(max_jobs=5, options=False))
def test_without_hard_options_every_method_finds_a_solution(inst) -> None:
    # Leaving every job idle is feasible without guarantees or a preemption cap. (A generous
    # limit: once, on a loaded machine, a CBC process took over 5 s on such a tiny model.)
    for method in METHODS:
        assert schedopt.solve(inst, method, time_limit_s=30).status.has_solution, method

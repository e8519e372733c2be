"""A suite of tiny admission instances every exact method proves in well under a second: rows
that do not depend on speed (the 30 s limit is never reached). Shared by the runner's tests
and the Ray tests."""

from __future__ import annotations

from schedopt.bench.suite import Suite, seeded

TINY = Suite(
    "test-tiny",
    "admission",
    seeded("admission", "tiny", "generate", {"size": "tiny"}, (0, 1)),
    methods=("heuristic:edf", "cpsat"),
    time_limit_s=30.0,
)

"""A solver's point that breaks the model is not trusted: on this fuzzed instance CBC answers
level 2 "optimal" with no replica at all (HiGHS is right on the same model). The levels solved
before it stand, unproven; before the guard, solve() raised ValidationFailedError."""

from __future__ import annotations

from pathlib import Path

import schedopt
from schedopt.core.status import Status

REPRO = Path(__file__).resolve().parents[2] / "benchmarks/results/fuzz-moe-cbc-no-replicas.json"


def test_cbc_point_without_replicas_is_rejected_not_returned() -> None:
    inst = schedopt.load(REPRO)
    result = schedopt.solve(inst, "milp:cbc", time_limit_s=5)
    assert result.status.has_solution  # validated, so every expert has a replica
    if "rejected" in str(result.stats.get("L2_status")):
        assert result.status is Status.FEASIBLE  # an untrusted level proves nothing

"""``decomp:rate`` (formulations/reconfig.md, R1–R4, C13): what ``auto`` runs past a size, and
its hand-over to the monolithic model proving every level."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.status import Status
from schedopt.problems.reconfig import SPEC, generate, generate_custom
from schedopt.problems.reconfig.decomp import NAME, ROUTE_FAULTS_PER_HOST, ROUTE_GPUS, route


def test_auto_routes_by_size_and_the_method_is_listed() -> None:
    assert NAME in SPEC.methods
    small = generate("tiny", 0)
    assert small.cluster.num_gpus < ROUTE_GPUS and route(small) == "milp:highs"
    example = schedopt.load("instances/reconfig/example.json")
    assert route(example) == NAME == SPEC.auto_exact_for(example)
    # sparse failures on many GPUs: the monolithic model proves every level itself
    sparse = generate_custom(32, 8, "llama2-70b", 512, 1, 0, seed=0)
    assert len(sparse.failed_gpus) < ROUTE_FAULTS_PER_HOST * len(sparse.cluster.hosts())
    assert route(sparse) == "milp:highs"
    dense = generate_custom(32, 8, "llama2-70b", 512, 4, 4, seed=0)
    assert route(dense) == NAME


@pytest.mark.slow  # about 7 s at load 14 alone, longer beside other tests
def test_the_hand_over_proves_every_level_of_the_worked_example() -> None:
    # L1 1.058079 s is the worked example's optimum over the template space
    # (docs/reconfig-example.md); no practical limit: a proof must not depend on speed
    inst = schedopt.load("instances/reconfig/example.json")
    result = schedopt.solve(inst, NAME, time_limit_s=300)
    assert result.status is Status.OPTIMAL, (result.status, result.explanation)
    assert result.objectives is not None
    assert round(result.objectives[0] * 1e6) == 1_058_079
    assert result.stats["first_level_proven"] == 1.0
    assert result.stats["proven_over"] == "template plan space"

"""The exact back-ends reach the brute-force optimum of level 1 on tiny instances."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedopt
from schedopt.core.status import Status
from schedopt.problems.moe_placement import MoePlacementInstance
from schedopt.problems.moe_placement.data import build_data
from schedopt.topology import Cluster

from .bruteforce import best_layer_time


@st.composite
def tiny(draw) -> MoePlacementInstance:
    n_gpus = draw(st.integers(2, 3))
    n_exp = draw(st.integers(2, 3 if n_gpus == 3 else 4))
    mems = [draw(st.sampled_from([1.0, 2.0])) for _ in range(n_exp)]
    cap = max(max(mems), sum(mems) * draw(st.sampled_from([1.0, 1.4, 2.0])) / n_gpus)
    cluster = Cluster.dgx(nodes=1, gpus_per_node=n_gpus, memory_gib=round(cap + 1e-6, 6))
    if draw(st.booleans()):  # heterogeneous speeds: one fast GPU
        spec = cluster.to_dict()
        spec["gpus"][0]["speed"] = 2.0
        cluster = Cluster.from_dict(spec)
    doc = {
        "problem": "moe_placement",
        "cluster": cluster.to_dict(),
        "layers": [
            {
                "experts": [
                    {"memory_gib": m, "popularity": float(draw(st.integers(0, 60)))} for m in mems
                ]
            }
        ],
    }
    if draw(st.booleans()):
        doc["max_replicas_per_expert"] = draw(st.integers(1, 2))
    if draw(st.booleans()):
        doc["max_extra_memory_gib"] = draw(st.sampled_from([0.0, 1.0, 2.0]))
    return MoePlacementInstance.model_validate(doc)


SETTINGS = settings(
    derandomize=True, deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(inst=tiny())
def test_milp_level_one_is_the_brute_force_optimum(inst) -> None:
    best = best_layer_time(inst)
    result = schedopt.solve(inst, "milp:highs", time_limit_s=20)
    if best is None:
        assert result.status is Status.INFEASIBLE
        return
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-6)
    # and nothing claims to do better
    for method in ("heuristic:eplb", "heuristic:local-search", "cpsat"):
        other = schedopt.solve(inst, method, time_limit_s=20)
        if other.objective is not None:
            assert other.objective >= best - 1e-6 * max(1.0, best)


@SETTINGS
@given(inst=tiny())
def test_cpsat_within_its_resolution_of_the_brute_force_optimum(inst) -> None:
    best = best_layer_time(inst)
    result = schedopt.solve(inst, "cpsat", time_limit_s=20)
    if best is None:
        assert result.status is Status.INFEASIBLE
        return
    assert result.stats["grid_optimal"] == "yes"
    delta = build_data(inst).cpsat_tolerance_us
    assert best - 1e-6 <= result.objective <= best + delta + 1e-6
    assert result.best_bound <= best + 1e-6  # the reported bound is valid for the real problem


def test_two_layers_share_memory() -> None:
    # 2 GPUs of 3 GiB: one copy of the 4 experts needs 4 GiB, so 2 GiB are left for replicas.
    cluster = Cluster.dgx(nodes=1, gpus_per_node=2, memory_gib=3.0)
    inst = MoePlacementInstance.model_validate(
        {
            "problem": "moe_placement",
            "cluster": cluster.to_dict(),
            "layers": [
                {
                    "experts": [
                        {"memory_gib": 1, "popularity": 90},
                        {"memory_gib": 1, "popularity": 10},
                    ]
                },
                {
                    "experts": [
                        {"memory_gib": 1, "popularity": 50},
                        {"memory_gib": 1, "popularity": 50},
                    ]
                },
            ],
        }
    )
    best = best_layer_time(inst)
    assert best == pytest.approx(50 + 50)  # layer 0 replicates the hot expert, layer 1 splits
    for method in ("milp:highs", "milp:cbc"):
        assert schedopt.solve(inst, method, time_limit_s=20).objective == pytest.approx(best)

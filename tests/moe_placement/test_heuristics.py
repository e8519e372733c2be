"""EPLB and local search: the replication/packing rules, hierarchy, parameters."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.core.result import lex_better
from schedopt.problems.moe_placement import SPEC, EplbParams, generate, generate_custom
from schedopt.problems.moe_placement.data import build_data
from schedopt.problems.moe_placement.heuristics import run_eplb


def test_eplb_replicates_the_hot_expert_first() -> None:
    inst = generate("small", 0)
    sol = schedopt.solve(inst, "heuristic:eplb").solution
    for li, lp in enumerate(sol.layers):
        pop = inst.point_popularity(li)
        hot = max(range(len(pop)), key=pop.__getitem__)
        assert len(lp.experts[hot].replicas) == max(len(e.replicas) for e in lp.experts)


def test_no_replicas_without_budget() -> None:
    inst = generate("small", 0)
    sol = schedopt.solve(inst, "heuristic:eplb", params={"replica_budget": 0.0}).solution
    assert sol.replicas() == sum(len(layer.experts) for layer in inst.layers)


def test_hierarchical_packing_keeps_an_expert_inside_a_host() -> None:
    # at most 4 replicas per expert: they fit a host of 8, so the shape allows the hierarchy
    inst = generate_custom(
        shape="olmoe-1b-7b",
        layers=4,
        experts=32,
        hosts=2,
        gpus_per_host=8,
        max_replicas_per_expert=4,
    )
    data = build_data(inst, check_size=False)
    plan = run_eplb(data, EplbParams(hierarchical=1))
    for x in plan.x:
        for e in range(x.shape[0]):
            assert len(set(data.host[x[e]])) == 1  # replicas of an expert inside its host


def test_layer_within_host_is_respected() -> None:
    inst = generate_custom(layers=4, experts=8, hosts=2, gpus_per_host=4, layer_within="host")
    for method in ("heuristic:eplb", "heuristic:local-search"):
        r = schedopt.solve(inst, method)
        for lp in r.solution.layers:
            hosts = {inst.cluster.host_of(rep.gpu) for e in lp.experts for rep in e.replicas}
            assert len(hosts) == 1


@pytest.mark.parametrize("size", ["small", "medium"])
def test_local_search_never_worse_than_eplb(size: str) -> None:
    inst = generate(size, 1)
    eplb = schedopt.solve(inst, "heuristic:eplb")
    ls = schedopt.solve(inst, "heuristic:local-search", time_limit_s=10)
    assert ls.objective <= eplb.objective + 1e-9


def test_auto_is_never_worse_than_the_heuristics() -> None:
    inst = generate("small", 2)
    auto = schedopt.solve(inst, time_limit_s=5)
    for name in SPEC.auto_heuristics:
        h = schedopt.solve(inst, name, time_limit_s=5)
        assert not lex_better(h.objectives, auto.objectives, SPEC.terms)


def test_unknown_parameter_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown parameters"):
        schedopt.solve(generate("tiny", 0), "heuristic:eplb", params={"nope": 1})


def test_params_have_a_tuning_space() -> None:
    for name in ("heuristic:eplb", "heuristic:local-search"):
        cls = SPEC.methods[name].params
        assert cls is not None and set(cls.SPACE) <= set(cls.__dataclass_fields__)

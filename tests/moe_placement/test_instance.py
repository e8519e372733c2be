"""Instance validation: cross-field problems name their field path; derived views."""

from __future__ import annotations

import pytest

import schedopt
import schedopt.io
from schedopt.problems.moe_placement import MoePlacementInstance, generate
from schedopt.topology import Cluster


def doc(**changes):
    d = {
        "problem": "moe_placement",
        "cluster": Cluster.dgx(nodes=2, gpus_per_node=2, memory_gib=4.0).to_dict(),
        "layers": [
            {"experts": [{"memory_gib": 1.0, "popularity": 10.0}] * 3},
            {"experts": [{"memory_gib": 1.0, "popularity": 5.0}] * 2},
        ],
    }
    d.update(changes)
    return d


def paths(d) -> list[str]:
    with pytest.raises(schedopt.InvalidInstanceError) as err:
        schedopt.io.parse_instance(d)
    return [p for p, _ in err.value.problems]


def test_a_valid_document_loads() -> None:
    inst = schedopt.io.parse_instance(doc())
    assert isinstance(inst, MoePlacementInstance)
    assert inst.point_popularity(1) == (5.0, 5.0)


def test_expert_bigger_than_every_gpu() -> None:
    d = doc()
    d["layers"][1]["experts"] = [{"memory_gib": 5.0, "popularity": 1.0}]
    assert "layers[1].experts[0].memory_gib" in paths(d)


def test_dense_part_leaves_no_room() -> None:
    assert "dense_memory_gib" in paths(doc(dense_memory_gib=4.0))


def test_experts_do_not_fit_altogether() -> None:
    d = doc(dense_memory_gib=2.9)  # 4 × 1.1 GiB for 5 GiB of experts
    assert "layers" in paths(d)


def test_negative_popularity() -> None:
    d = doc()
    d["layers"][0]["experts"] = [{"memory_gib": 1.0, "popularity": -1.0}]
    assert paths(d)[0].startswith("layers[0].experts[0].popularity")


def test_mixed_popularity_and_counts() -> None:
    d = doc()
    d["layers"][0]["experts"] = [
        {"memory_gib": 1.0, "popularity": 1.0},
        {"memory_gib": 1.0, "routing_count": 3},
    ]
    assert "layers[0].experts" in paths(d)


def test_counts_need_tokens_per_batch() -> None:
    d = doc()
    d["layers"][0]["experts"] = [{"memory_gib": 1.0, "routing_count": 3}]
    assert "layers[0].tokens_per_batch" in paths(d)


def test_unknown_gpus_in_current_placement_and_attention() -> None:
    d = doc(
        current_placement=[[["h0/g0"], ["nope"], []], [["h1/g1"], ["h0/g0", "h0/g0"]]],
        attention_gpus=["h0/g0", "zz"],
    )
    found = paths(d)
    assert "current_placement[0][1][0]" in found
    assert "current_placement[1][1]" in found
    assert "attention_gpus[1]" in found


def test_current_placement_shape() -> None:
    assert "current_placement" in paths(doc(current_placement=[[["h0/g0"]]]))


def test_layer_that_fits_no_host() -> None:
    d = doc(layer_within="host")
    d["layers"][0]["experts"] = [
        {"memory_gib": 2.0, "popularity": 1.0}
    ] * 5  # 10 GiB > 2 × 4.5 per host
    d["cluster"] = Cluster.dgx(nodes=2, gpus_per_node=2, memory_gib=4.5).to_dict()
    assert "layers[0]" in paths(d)


def test_weighted_needs_a_weight() -> None:
    w = {"load": 0, "comm": 0, "gpus": 0, "moved": 0}
    assert "objective.weights" in paths(doc(objective={"mode": "weighted", "weights": w}))


def test_generated_sizes_load_and_round_trip(tmp_path) -> None:
    for size in ("tiny", "small", "medium"):
        inst = generate(size, 1)
        schedopt.dump(inst, tmp_path / "i.json")
        again = schedopt.load(tmp_path / "i.json")
        assert again == inst


def test_generated_popularity_is_skewed_and_layer_varying() -> None:
    inst = generate("medium", 0)
    tops = []
    for li in range(len(inst.layers)):
        pop = sorted(inst.point_popularity(li), reverse=True)
        assert pop[0] > 3 * sum(pop) / len(pop)  # Zipf: the busiest expert well above the mean
        tops.append(pop[0] / sum(pop))
    assert max(tops) > 1.5 * min(tops)

"""Hypothesis strategies for MoE placement: tiny valid instances and bad inputs.

For test authors checking their own placers too::

    from hypothesis import given
    from schedopt.problems.moe_placement.strategies import instances

    @given(instances())
    def test_my_placer(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations
from schedopt.topology import Cluster

from .instance import MoePlacementInstance


@st.composite
def instance_dicts(
    draw: st.DrawFn, max_layers: int = 2, max_experts: int = 3, max_hosts: int = 2
) -> dict[str, Any]:
    """A small, valid instance as the JSON document (dict) an instance file would hold."""
    hosts = draw(st.integers(1, max_hosts))
    per_host = draw(st.sampled_from([1, 2]))
    n = hosts * per_host
    n_layers = draw(st.integers(1, max_layers))
    use_counts = draw(st.booleans())
    layers = []
    for _ in range(n_layers):
        experts = []
        for _ in range(draw(st.integers(1, max_experts))):
            ex: dict[str, Any] = {
                "memory_gib": draw(st.sampled_from([1.0, 1.5, 2.0])),
                "compute_us_per_token": draw(st.sampled_from([0.5, 1.0, 2.0])),
            }
            if use_counts:
                ex["routing_count"] = draw(st.integers(0, 50))
            else:
                ex["popularity"] = float(draw(st.integers(0, 100)))
            experts.append(ex)
        layer: dict[str, Any] = {"experts": experts}
        if use_counts:
            layer["tokens_per_batch"] = float(draw(st.integers(1, 200)))
        layers.append(layer)
    need = sum(e["memory_gib"] for layer in layers for e in layer["experts"])
    within = draw(st.sampled_from(["none", "none", "host"]))
    biggest = max(e["memory_gib"] for layer in layers for e in layer["experts"])
    free = max(biggest, need * draw(st.sampled_from([1.0, 1.3, 2.0])) / n)
    if within == "host":
        layer_need = max(sum(e["memory_gib"] for e in layer["experts"]) for layer in layers)
        free = max(free, layer_need / per_host)
    dense = draw(st.sampled_from([0.0, 2.0]))
    cluster = Cluster.dgx(
        nodes=hosts,
        gpus_per_node=per_host,
        memory_gib=round(free + dense + 1e-6, 6),
        nvlink_gbps=1000.0,
    )
    doc: dict[str, Any] = {
        "problem": "moe_placement",
        "schema_version": 1,
        "cluster": cluster.to_dict(),
        "dense_memory_gib": dense,
        "layers": layers,
        "token_bytes": draw(st.sampled_from([1024.0, 8192.0])),
        "layer_within": within,
    }
    gpus = list(cluster.gpus())
    if draw(st.booleans()):
        doc["attention_gpus"] = draw(st.lists(st.sampled_from(gpus), min_size=1, unique=True))
    if draw(st.integers(0, 3)) == 0:
        doc["max_replicas_per_expert"] = draw(st.integers(1, 2))
    if draw(st.integers(0, 3)) == 0:
        doc["max_extra_memory_gib"] = draw(st.sampled_from([0.0, 1.0, 3.0]))
    if draw(st.integers(0, 2)) == 0:
        doc["current_placement"] = [
            [
                draw(st.lists(st.sampled_from(gpus), max_size=2, unique=True))
                for _ in layer["experts"]
            ]
            for layer in layers
        ]
    if draw(st.integers(0, 3)) == 0:
        doc["objective"] = {
            "mode": "weighted",
            "weights": {
                "load": 1.0,
                "comm": draw(st.sampled_from([0.0, 1.0])),
                "gpus": draw(st.sampled_from([0.0, 10.0])),
                "moved": draw(st.sampled_from([0.0, 5.0])),
            },
        }
    return doc


def instances(**kwargs: Any) -> st.SearchStrategy[MoePlacementInstance]:
    """Small valid :class:`MoePlacementInstance` objects."""
    return instance_dicts(**kwargs).map(MoePlacementInstance.model_validate)


_BAD_VALUES = (*BAD_VALUES, 10**6)


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations (values replaced, keys dropped or
    renamed, list items duplicated): often invalid, sometimes still valid."""
    return mutations(instance_dicts(), bad_values=_BAD_VALUES)


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

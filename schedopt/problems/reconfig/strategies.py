"""Hypothesis strategies for reconfiguration: tiny valid instances and bad inputs.

For test authors checking their own re-planners too::

    from hypothesis import given
    from schedopt.problems.reconfig.strategies import instances

    @given(instances())
    def test_my_replanner(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations
from schedopt.topology import Cluster

from .generate import with_current_plan
from .instance import ReconfigInstance


@st.composite
def instance_dicts(draw: st.DrawFn, max_hosts: int = 2, max_layers: int = 6) -> dict[str, Any]:
    """A small valid instance (≤ ``max_hosts`` hosts of 2 or 4 GPUs, ≤ ``max_layers`` layers),
    with its healthy plan as the current plan (or none), as the JSON document a file holds."""
    hosts = draw(st.integers(1, max_hosts))
    per_host = draw(st.sampled_from([2, 4]))
    memory = draw(st.sampled_from([2.0, 4.0, 16.0]))
    cluster = Cluster.dgx(nodes=hosts, gpus_per_node=per_host, memory_gib=memory)
    gpus = list(cluster.gpus())
    layers = draw(st.integers(1, max_layers))
    model = {
        "layers": layers,
        "hidden": draw(st.sampled_from([512, 1024])),
        "heads": 8,
        "vocab": draw(st.sampled_from([8000, 32000])),
        "seq_len": draw(st.sampled_from([512, 1024])),
    }
    micro = draw(st.sampled_from([1, 2]))
    doc: dict[str, Any] = {
        "problem": "reconfig",
        "schema_version": 1,
        "cluster": cluster.to_dict(),
        "model": model,
        "micro_batch": micro,
        "global_batch": micro * draw(st.integers(1, 8)),
        "memory_reserve_gib": 0.5,
        "max_stages": draw(st.integers(1, 4)),
        "tp_sizes": draw(st.sampled_from([[1, 2], [1, 2, 4], [2]])),
        "sequence_parallel": draw(st.booleans()),
        "recompute": draw(st.booleans()),
    }
    if draw(st.booleans()):  # the healthy plan first, then failures
        planned = with_current_plan(ReconfigInstance.model_validate(doc))
        if planned.current_plan:
            doc["current_plan"] = [p.model_dump() for p in planned.current_plan]
            if draw(st.booleans()):
                doc["failure_rate_per_hour"] = draw(st.sampled_from([0.1, 2.0]))
    order = draw(st.permutations(gpus))
    n_failed = draw(st.integers(0, max(0, len(gpus) - 2)))
    n_slow = draw(st.integers(0, min(2, len(gpus) - n_failed - 1)))
    doc["failed_gpus"] = list(order[:n_failed])
    doc["slow_gpus"] = [
        {"gpu": g, "speed_factor": draw(st.sampled_from([0.25, 0.5, 0.8]))}
        for g in order[n_failed : n_failed + n_slow]
    ]
    return doc


def instances(**kwargs: Any) -> st.SearchStrategy[ReconfigInstance]:
    """Small valid :class:`ReconfigInstance` objects."""
    return instance_dicts(**kwargs).map(ReconfigInstance.model_validate)


_BAD_VALUES = (*BAD_VALUES, 10**6, "h0/g0", [])


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations: often invalid, sometimes valid."""
    return mutations(instance_dicts(), bad_values=_BAD_VALUES)


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

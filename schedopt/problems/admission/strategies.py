"""Hypothesis strategies for admission: tiny valid instances and bad inputs.

For test authors checking their own schedulers too::

    from hypothesis import given
    from schedopt.problems.admission.strategies import instances

    @given(instances())
    def test_my_scheduler(inst): ...
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from schedopt.topology import Cluster

from .instance import AdmissionInstance

SLOT_S = 60.0


@st.composite
def instance_dicts(
    draw: st.DrawFn,
    max_jobs: int = 5,
    max_slots: int = 4,
    max_hosts: int = 2,
    allow_admitted: bool = True,
) -> dict[str, Any]:
    """A small, valid instance as the JSON document (dict) an instance file would hold."""
    hosts = draw(st.integers(1, max_hosts))
    per_host = draw(st.sampled_from([2, 4]))
    cluster = Cluster.dgx(nodes=hosts, gpus_per_node=per_host)
    gpus = list(cluster.gpus())
    unavailable = draw(st.lists(st.sampled_from(gpus), unique=True, max_size=len(gpus) - 1))
    slots = draw(st.integers(1, max_slots))
    horizon = slots * SLOT_S
    n_jobs = draw(st.integers(1, max_jobs))
    counts_pool = [c for c in (1, 2, 4, 8) if c <= per_host * hosts]
    jobs = []
    for i in range(n_jobs):
        kind = draw(st.sampled_from(["strict_slo", "soft_slo", "best_effort"]))
        counts = draw(st.lists(st.sampled_from(counts_pool), min_size=1, max_size=2, unique=True))
        base = draw(st.integers(1, 20))
        table = {c: float(base * c) * draw(st.sampled_from([0.6, 0.8, 1.0])) for c in counts}
        per_slot = max(int(r * SLOT_S) for r in table.values())
        work = max(1, int(per_slot * draw(st.sampled_from([0.4, 0.9, 1.0, 1.5, 2.2, 3.5]))))
        arrival_slot = draw(st.integers(0, max(0, slots - 1))) if draw(st.booleans()) else 0
        job: dict[str, Any] = {
            "id": f"j{i}",
            "kind": kind,
            "arrival_s": arrival_slot * SLOT_S,
            "remaining_iterations": work,
            "throughput": table,
        }
        if kind != "best_effort":
            room = slots - arrival_slot  # distinct slot ends available for tiers
            n_tiers = 1 if kind == "strict_slo" else draw(st.integers(1, min(3, room)))
            ends = sorted(
                draw(
                    st.lists(
                        st.integers(arrival_slot + 1, slots),
                        min_size=n_tiers,
                        max_size=n_tiers,
                        unique=True,
                    )
                )
            )
            if not ends:
                ends = [slots]
            values = sorted(
                (draw(st.sampled_from([2.0, 5.0, 8.0, 10.0])) for _ in ends), reverse=True
            )
            job["deadlines"] = [
                {"deadline_s": min(e * SLOT_S, horizon), "value": v}
                for e, v in zip(ends, values, strict=True)
            ]
            if allow_admitted and arrival_slot == 0 and draw(st.integers(0, 5)) == 0:
                job["admitted"] = True
        else:
            job["weight"] = draw(st.sampled_from([1.0, 2.0]))
        if arrival_slot == 0 and draw(st.booleans()):
            job["current_gpus"] = draw(st.sampled_from(counts))
        jobs.append(job)
    return {
        "problem": "admission",
        "schema_version": 1,
        "cluster": cluster.to_dict(),
        "unavailable_gpus": unavailable,
        "slots": slots,
        "slot_s": SLOT_S,
        "jobs": jobs,
    }


def instances(**kwargs: Any) -> st.SearchStrategy[AdmissionInstance]:
    """Small valid :class:`AdmissionInstance` objects."""
    return instance_dicts(**kwargs).map(AdmissionInstance.model_validate)


_BAD_VALUES = (-1, 0, -0.5, "x", None, [], {}, 1e308, True, "")


@st.composite
def mutated_dicts(draw: st.DrawFn) -> Any:
    """A valid document with one to three random mutations (values replaced, keys dropped,
    list items removed or duplicated): often invalid, sometimes still valid."""
    doc = copy.deepcopy(draw(instance_dicts()))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        parent, key = _resolve(doc, path)
        action = draw(st.sampled_from(["set", "drop", "dup"]))
        if action == "set":
            parent[key] = draw(st.sampled_from(_BAD_VALUES))
        elif action == "drop":
            del parent[key]
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        else:
            parent[key] = copy.deepcopy(parent[key])
    return doc


@st.composite
def bad_texts(draw: st.DrawFn) -> str:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    text = json.dumps(draw(mutated_dicts()))
    cut = draw(st.integers(0, len(text)))
    return draw(
        st.sampled_from(
            [
                text[:cut],
                text[:cut] + "}" + text[cut:],
                text.replace('"', "'", 1),
                "NaN",
                "[]",
                "null",
                text,
            ]
        )
    )


def _paths(node: Any, prefix: tuple = ()) -> Any:
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _resolve(doc: Any, path: tuple) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]

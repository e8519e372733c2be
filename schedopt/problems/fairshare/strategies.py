"""Hypothesis strategies for fair share: tiny valid rounds and bad inputs.

For test authors checking their own schedulers too::

    from hypothesis import given
    from schedopt.problems.fairshare.strategies import instances

    @given(instances())
    def test_my_scheduler(inst): ...
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from schedopt.topology import Cluster

from .instance import FairshareInstance

ROUND_S = 60.0


@st.composite
def instance_dicts(
    draw: st.DrawFn,
    max_jobs: int = 4,
    max_tenants: int = 3,
    max_hosts: int = 3,
    options: bool = True,
) -> dict[str, Any]:
    """A small, valid round as the JSON document (dict) an instance file would hold.
    ``options`` draws the instance options (hard guarantees, preemption cap, one host)."""
    n_types = draw(st.integers(1, 2))
    pools = []
    hosts_left = max_hosts
    for g in ("H100", "A100")[:n_types]:
        nodes = draw(st.integers(1, max(1, min(2, hosts_left - (n_types - len(pools) - 1)))))
        hosts_left -= nodes
        pools.append((g, nodes, draw(st.sampled_from([2, 4]))))
    cluster = Cluster.heterogeneous(pools=pools)
    gpus = list(cluster.gpus())
    unavailable = draw(st.lists(st.sampled_from(gpus), unique=True, max_size=min(2, len(gpus) - 1)))
    multi = draw(st.booleans()) if options else True
    n_tenants = draw(st.integers(1, max_tenants))
    tenants = []
    for u in range(n_tenants):
        deserved = draw(st.sampled_from([0, 60, 240, 600, 1200]))
        tenants.append(
            {
                "id": f"t{u}",
                "weight": float(draw(st.sampled_from([1, 2, 3]))),
                "deserved_gpu_s": float(deserved),
                "used_gpu_s": float(draw(st.sampled_from([0, 60, 300, 900]))),
            }
        )
    free_total = len(gpus) - len(unavailable)
    hard = options and draw(st.integers(0, 3)) == 0
    if hard:
        left = free_total
        for t in tenants:
            if draw(st.booleans()):
                g = draw(st.integers(0, min(2, left)))
                t["guaranteed_gpus"] = g
                left -= g
    room = {h: len(cluster.gpus_on(h)) for h in cluster.hosts()}
    host_type = {h: cluster.gpu(cluster.gpus_on(h)[0]).gpu_type for h in cluster.hosts()}
    jobs = []
    for i in range(draw(st.integers(1, max_jobs))):
        types = draw(st.lists(st.sampled_from([g for g, _, _ in pools]), min_size=1, unique=True))
        base = draw(st.integers(1, 10))
        table = {}
        for g in types:
            counts = draw(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=2, unique=True))
            speed = 2.0 if g == "H100" else 1.0
            table[g] = {
                c: float(base * speed * c) * draw(st.sampled_from([0.7, 1.0])) for c in counts
            }
        job: dict[str, Any] = {
            "id": f"j{i}",
            "tenant": f"t{draw(st.integers(0, n_tenants - 1))}",
            "throughput": table,
            "remaining_iterations": float(draw(st.integers(1, 10_000))),
            "restart_cost_s": float(draw(st.sampled_from([0, 30, 60]))),
        }
        if draw(st.sampled_from([True, True, False])):  # most jobs ran in the last round
            g = draw(st.sampled_from(types))
            n = draw(st.sampled_from(sorted(table[g])))
            fitting = [h for h in room if host_type[h] == g and room[h] >= n]
            if fitting:
                h = draw(st.sampled_from(fitting))
                room[h] -= n
                job["previous"] = {"gpu_type": g, "hosts": {h: n}}
            elif multi:
                spread, left = {}, n
                for h in room:
                    if host_type[h] == g and room[h] and left:
                        use = min(room[h], left)
                        spread[h], left = use, left - use
                if not left:
                    for h, use in spread.items():
                        room[h] -= use
                    job["previous"] = {"gpu_type": g, "hosts": spread}
        jobs.append(job)
    doc: dict[str, Any] = {
        "problem": "fairshare",
        "schema_version": 1,
        "cluster": cluster.to_dict(),
        "unavailable_gpus": unavailable,
        "round_s": ROUND_S,
        "allow_multi_host": multi,
        "guarantees_hard": hard,
        "tenants": tenants,
        "jobs": jobs,
    }
    if options and draw(st.integers(0, 2)) == 0:
        doc["max_preemptions"] = draw(st.integers(0, 2))
    return doc


def instances(**kwargs: Any) -> st.SearchStrategy[FairshareInstance]:
    """Small valid :class:`FairshareInstance` objects."""
    return instance_dicts(**kwargs).map(FairshareInstance.model_validate)


_BAD_VALUES = (-1, 0, -0.5, 3, "x", None, [], {}, 1e308, True, "", "h9", "t9")


@st.composite
def mutated_dicts(draw: st.DrawFn) -> Any:
    """A valid document with one to three random mutations (values replaced, keys dropped,
    list items duplicated): often invalid, sometimes still valid."""
    doc = copy.deepcopy(draw(instance_dicts()))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        parent, key = _resolve(doc, path)
        action = draw(st.sampled_from(["set", "drop", "dup", "rekey"]))
        if action == "set":
            parent[key] = draw(st.sampled_from(_BAD_VALUES))
        elif action == "drop":
            del parent[key]
        elif action == "rekey" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["-1", "0", "3", "h9", "X100"]))] = parent.pop(key)
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
            [text[:cut], text[:cut] + "}" + text[cut:], text.replace('"', "'", 1), "[]", text]
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

"""Hypothesis strategies for fair share: tiny valid rounds and bad inputs.

For test authors checking their own schedulers too::

    from hypothesis import given
    from schedopt.problems.fairshare.strategies import instances

    @given(instances())
    def test_my_scheduler(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations
from schedopt.topology import Cluster

from .instance import FairnessUnit, FairshareInstance

ROUND_S = 60.0


@st.composite
def instance_dicts(
    draw: st.DrawFn,
    max_jobs: int = 4,
    max_tenants: int = 3,
    max_hosts: int = 3,
    options: bool = True,
    fairness_unit: FairnessUnit | None = None,
) -> dict[str, Any]:
    """A small, valid round as the JSON document (dict) an instance file would hold.
    ``options`` draws the instance options (hard guarantees, preemption cap, one host);
    ``fairness_unit`` None draws it too (with ``options``; else tenants)."""
    n_types = draw(st.integers(1, 2))
    pools: list[tuple[str, int, int]] = []
    hosts_left = max_hosts
    for g in ("H100", "A100")[:n_types]:
        nodes = draw(st.integers(1, max(1, min(2, hosts_left - (n_types - len(pools) - 1)))))
        hosts_left -= nodes
        pools.append((g, nodes, draw(st.sampled_from([2, 4]))))
    cluster = Cluster.heterogeneous(pools=pools)
    gpus = list(cluster.gpus())
    unavailable = draw(st.lists(st.sampled_from(gpus), unique=True, max_size=min(2, len(gpus) - 1)))
    multi = draw(st.booleans()) if options else True
    if fairness_unit is None:
        fairness_unit = draw(st.sampled_from(FairnessUnit)) if options else FairnessUnit.TENANT
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
                guaranteed = draw(st.integers(0, min(2, left)))
                t["guaranteed_gpus"] = guaranteed
                left -= guaranteed
    room = {h: len(cluster.gpus_on(h)) for h in cluster.hosts()}
    host_type = {h: cluster.host_type(h) for h in cluster.hosts()}
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
        if fairness_unit is FairnessUnit.JOB:  # F1: the job's weight and accounts
            job["weight"] = float(draw(st.sampled_from([1, 2, 3])))
            job["deserved_gpu_s"] = float(draw(st.sampled_from([0, 60, 240, 600])))
            job["used_gpu_s"] = float(draw(st.sampled_from([0, 60, 300, 900])))
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
        "fairness_unit": fairness_unit.value,
        "tenants": tenants,
        "jobs": jobs,
    }
    if options and draw(st.integers(0, 2)) == 0:
        doc["max_preemptions"] = draw(st.integers(0, 2))
    return doc


def instances(**kwargs: Any) -> st.SearchStrategy[FairshareInstance]:
    """Small valid :class:`FairshareInstance` objects."""
    return instance_dicts(**kwargs).map(FairshareInstance.model_validate)


_BAD_VALUES = (*BAD_VALUES, "h9", "t9")


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations (values replaced, keys dropped or
    renamed, list items duplicated): often invalid, sometimes still valid."""
    return mutations(
        instance_dicts(), bad_values=_BAD_VALUES, new_keys=("-1", "0", "3", "h9", "X100")
    )


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

"""Hypothesis strategies for admission: tiny valid instances and bad inputs.

For test authors checking their own schedulers too::

    from hypothesis import given
    from schedopt.problems.admission.strategies import instances

    @given(instances())
    def test_my_scheduler(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations
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


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations (values replaced, keys dropped or
    renamed, list items duplicated): often invalid, sometimes still valid."""
    return mutations(instance_dicts(), bad_values=BAD_VALUES)


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

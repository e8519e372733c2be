"""Hypothesis strategies for co-scheduling: tiny valid instances and bad inputs.

Times are a few ms so that exact methods and brute force prove optima quickly; for test
authors checking their own co-schedulers too::

    from hypothesis import given
    from schedopt.problems.cosched.strategies import instances

    @given(instances())
    def test_my_scheduler(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations

from .instance import CoschedInstance


@st.composite
def instance_dicts(draw: st.DrawFn, max_jobs: int = 3, max_hosts: int = 2) -> dict[str, Any]:
    """A small, valid instance as the JSON document (dict) an instance file would hold."""
    names = draw(st.sampled_from([["r"], ["r", "t"], ["r", "t"]]))
    pools = [
        {
            "name": n,
            "hosts": draw(st.integers(1, max_hosts)),
            "gpus_per_host": draw(st.sampled_from([2, 4])),
            "host_memory_gib": draw(st.sampled_from([8.0, 16.0])),
            "price_per_gpu_hour": draw(st.sampled_from([1.0, 1.85, 5.28])),
        }
        for n in names
    ]
    jobs = []
    for j in range(draw(st.integers(1, max_jobs))):
        phases = []
        for name in draw(st.sampled_from([["rollout"], ["rollout", "train"]])):
            options = []
            keys = set()
            for _ in range(draw(st.integers(1, 2))):
                pool = draw(st.sampled_from(names))
                gpus = draw(st.sampled_from([1, 2, 4]))
                if (pool, gpus) in keys:
                    continue
                keys.add((pool, gpus))
                opt: dict[str, Any] = {
                    "pool": pool,
                    "gpus": gpus,
                    "tp": draw(st.sampled_from([1, gpus])),
                    "duration_ms": draw(st.integers(1, 6)),
                    "resident_gib": draw(st.sampled_from([0.0, 2.0, 4.0, 8.0])),
                }
                if draw(st.booleans()):
                    opt["holdout_ms"] = draw(st.lists(st.integers(1, 8), min_size=1, max_size=3))
                if draw(st.booleans()):
                    opt["samples_ms"] = draw(st.lists(st.integers(1, 8), min_size=3, max_size=3))
                options.append(opt)
            phase: dict[str, Any] = {"name": name, "options": options}
            if draw(st.integers(0, 3)) == 0:
                phase["current_pool"] = draw(st.sampled_from(names))
            phases.append(phase)
        jobs.append(
            {
                "id": f"j{j}",
                "phases": phases,
                "staleness": draw(st.integers(0, 1)),
                "slo_ms": draw(st.integers(3, 14)),
                "params_b": draw(st.sampled_from([0.0, 0.01, 0.05])),
                "switch_ms": draw(st.integers(0, 2)),
                "weight": draw(st.integers(1, 3)),
            }
        )
    doc = {"problem": "cosched", "schema_version": 1, "pools": pools, "jobs": jobs}
    if draw(st.integers(0, 2)) == 0:  # C13 over the options' first 1–3 samples
        doc["chance"] = {
            "epsilon": draw(st.sampled_from([0.0, 0.34, 0.5])),
            "scenarios": draw(st.integers(1, 3)),
        }
    return doc


def instances(**kwargs: Any) -> st.SearchStrategy[CoschedInstance]:
    """Small valid :class:`CoschedInstance` objects."""
    return instance_dicts(**kwargs).map(CoschedInstance.model_validate)


_BAD_VALUES = (*BAD_VALUES, 10**6, 10**10, "x/0")


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations: often invalid, sometimes valid."""
    return mutations(instance_dicts(), bad_values=_BAD_VALUES)


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

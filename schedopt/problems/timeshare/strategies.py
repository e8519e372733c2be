"""Hypothesis strategies for time shares: small valid rounds and bad inputs.

For test authors checking their own policies too::

    from hypothesis import given
    from schedopt.problems.timeshare.strategies import instances

    @given(instances())
    def test_my_policy(inst): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedopt.testing import BAD_VALUES, corrupted_texts, mutations

from .instance import Policy, TimeshareInstance

TYPES = ("k80", "v100")


@st.composite
def instance_dicts(draw: st.DrawFn, max_jobs: int = 4, policy: Policy | None = None) -> dict:
    """A small, valid round as the JSON document an instance file would hold."""
    chosen = policy if policy is not None else draw(st.sampled_from(list(Policy)))
    # v100 has room for every gang (scale factors ≤ 2) and every job runs there (C4)
    workers = {w: draw(st.integers(0 if w == "k80" else 2, 3)) for w in TYPES}
    jobs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, max_jobs))):
        rates = {w: float(draw(st.sampled_from([0, 1, 2, 5]))) for w in TYPES}
        if not rates["v100"]:
            rates["v100"] = 3.0  # every job runs somewhere (v100 always has GPUs)
        job: dict[str, Any] = {
            "id": f"j{i}",
            "throughput": rates,
            "scale_factor": draw(st.sampled_from([1, 1, 2])),
            "priority_weight": float(draw(st.sampled_from([1, 2]))),
        }
        if chosen.needs_remaining_steps:
            job["remaining_steps"] = float(draw(st.integers(1, 1000)))
            job["time_since_start_s"] = float(draw(st.sampled_from([0, 10, 100])))
            job["isolated_time_s"] = float(draw(st.sampled_from([0, 5, 50])))
        jobs.append(job)
    pairs = []
    if chosen.takes_pairs:
        for a in range(len(jobs)):
            for b in range(a + 1, len(jobs)):
                if jobs[a]["scale_factor"] == jobs[b]["scale_factor"] and draw(st.booleans()):
                    pairs.append(
                        {
                            "jobs": [jobs[a]["id"], jobs[b]["id"]],
                            "throughput": {
                                "v100": [
                                    float(draw(st.sampled_from([0, 0.5, 1.5]))),
                                    float(draw(st.sampled_from([0.5, 2.0]))),
                                ]
                            },
                        }
                    )
    return {
        "problem": "timeshare",
        "schema_version": 1,
        "policy": chosen.value,
        "workers": workers,
        "jobs": jobs,
        "pairs": pairs,
    }


def instances(**kwargs: Any) -> st.SearchStrategy[TimeshareInstance]:
    """Small valid :class:`TimeshareInstance` objects."""
    return instance_dicts(**kwargs).map(TimeshareInstance.model_validate)


_BAD_VALUES = (*BAD_VALUES, "p100", "j9", "max_min_fairness_typo")


def mutated_dicts() -> st.SearchStrategy[Any]:
    """A valid document with one to three random mutations: often invalid, sometimes valid."""
    return mutations(instance_dicts(), bad_values=_BAD_VALUES, new_keys=("-1", "0", "j9", "a100"))


def bad_texts() -> st.SearchStrategy[str]:
    """Instance file contents that are not valid instances: truncated or corrupted JSON."""
    return corrupted_texts(mutated_dicts())

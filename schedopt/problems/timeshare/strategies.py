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

from schedopt.core.fuzz import BAD_VALUES, corrupted_texts, mutations

from .instance import Policy, TimeshareInstance

TYPES = ("k80", "v100")


@st.composite
def instance_dicts(draw: st.DrawFn, max_jobs: int = 4, policy: Policy | None = None) -> dict:
    """A small, valid round as the JSON document an instance file would hold."""
    chosen = policy if policy is not None else draw(st.sampled_from(list(Policy)))
    # v100 has room for every gang (scale factors ≤ 2) and every job runs there (C4)
    workers = {w: draw(st.integers(0 if w == "k80" else 2, 3)) for w in TYPES}
    # space sharing by job type (Gavel's co-location table) or by pairs given one by one
    by_type = chosen.takes_pairs and draw(st.booleans())
    kinds = [_job_kind(draw) for _ in JOB_TYPES]
    jobs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, max_jobs))):
        kind = draw(st.integers(0, len(JOB_TYPES) - 1))
        rates, scale = kinds[kind] if by_type else _job_kind(draw)
        job: dict[str, Any] = {
            "id": f"j{i}",
            "throughput": dict(rates),
            "scale_factor": scale,
            "priority_weight": float(draw(st.sampled_from([1, 1, 2]))),
        }
        if by_type:
            job["job_type"] = JOB_TYPES[kind]
        if chosen.needs_remaining_steps:
            job["remaining_steps"] = float(draw(st.integers(1, 1000)))
            job["time_since_start_s"] = float(draw(st.sampled_from([0, 10, 100])))
            job["isolated_time_s"] = float(draw(st.sampled_from([0, 5, 50])))
        jobs.append(job)
    pairs: list[dict[str, Any]] = []
    colocation = _colocation(draw, kinds) if by_type else []
    if chosen.takes_pairs and not by_type:
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
        "colocation": colocation,
    }


JOB_TYPES = ("resnet", "lm", "rl")


def _job_kind(draw: st.DrawFn) -> tuple[dict[str, float], int]:
    rates = {w: float(draw(st.sampled_from([0, 1, 2, 5]))) for w in TYPES}
    if not rates["v100"]:
        rates["v100"] = 3.0  # every job runs somewhere (v100 always has GPUs)
    return rates, draw(st.sampled_from([1, 1, 2]))


def _colocation(draw: st.DrawFn, kinds: list) -> list[dict[str, Any]]:
    """Entries for some type pairs of equal scale factors; a type with itself sometimes has two
    different rates (who takes which then depends on the order of the jobs)."""
    out = []
    for a in range(len(JOB_TYPES)):
        for b in range(a, len(JOB_TYPES)):
            # (an entry may name a type no job has: it implies no pair)
            if kinds[a][1] == kinds[b][1]:
                if not draw(st.booleans()):
                    continue
                first = float(draw(st.sampled_from([0, 0.5, 1.5])))
                second = float(draw(st.sampled_from([0.5, 2.0])))
                if a == b and draw(st.booleans()):
                    second = first
                out.append(
                    {
                        "job_types": [JOB_TYPES[a], JOB_TYPES[b]],
                        "throughput": {"v100": [first, second], "k80": [second, first]},
                    }
                )
    return out


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

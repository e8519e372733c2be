"""Gavel's policy interface, answered by schedopt's exact models (``timeshare``).

Drop-in for Gavel's simulator and physical scheduler (stanford-futuredata/gavel,
``scheduler/policies``): the classes here take and return the same dicts as Gavel's, and
nothing of Gavel is imported. Job ids are whatever hashable keys the caller uses (Gavel's
``JobIdPair``): a key is a *pair* of co-located jobs when it has ``is_pair()`` true (Gavel)
or is a 2-tuple, and its members are then ``singletons()`` (Gavel) or the tuple's items.

    policy = MaxMinFairnessPerf()
    allocation = policy.get_allocation(throughputs, scale_factors, priority_weights,
                                       cluster_spec)

Every returned allocation is the exact optimum of formulations/timeshare.md and passed its
independent validator; a round the solver cannot finish in ``time_limit_s`` raises
:class:`RoundFailed` (never a silently worse answer), and bad input raises
``InvalidInstanceError`` naming the job and field.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from schedopt.core.errors import SchedoptError
from schedopt.core.status import Status
from schedopt.problems.timeshare import Job, Policy, TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.data import build_data
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession

from .gavel_types import by_job_type

Key = Hashable


class RoundFailed(SchedoptError):
    """The solver returned no allocation for the round (see ``result``)."""

    def __init__(self, result: Any):
        self.result = result
        super().__init__(f"no allocation: {result.status.value}: {result.explanation}")


def members(key: Key) -> tuple[Key, ...] | None:
    """The two jobs of a pair key, or None for a single job's key."""
    if type(key) is int or type(key) is str:  # the common single keys, without a lookup
        return None
    is_pair = getattr(key, "is_pair", None)
    if callable(is_pair):
        return tuple(key.singletons()) if is_pair() else None  # type: ignore[attr-defined]
    if isinstance(key, tuple) and len(key) == 2:
        return key
    return None


class _TimesharePolicy:
    """What every adapter shares: dicts in, a timeshare round, dicts out. Rounds without pairs
    run in one :class:`RoundSession`: only what changed is validated, and HiGHS starts from
    the last round's basis."""

    policy: Policy
    name: str

    def __init__(
        self,
        *,
        method: str = "milp:highs",
        time_limit_s: float = 60.0,
        efficiency: bool = False,
    ):
        #: ``efficiency``: also solve level 2 (Gavel does not; about 3x the LP time).
        self.method, self.time_limit_s, self.efficiency = method, time_limit_s, efficiency
        self.last_result: Any = None
        self.last_instance: TimeshareInstance | None = None
        self._session: RoundSession | None = None
        self._ids: dict[Key, str] = {}
        self._docs: dict[str, dict[str, Any]] = {}

    def _solve(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        priority_weights: Mapping[Key, float] | None,
        cluster_spec: Mapping[str, int],
        remaining: Mapping[Key, float] | None = None,
        since_start: Mapping[Key, float] | None = None,
        isolated_time: Mapping[Key, float] | None = None,
    ) -> dict[Key, dict[str, float]] | None:
        singles, pair_items = [], []
        for k in throughputs:
            two = members(k)
            if two is None:
                singles.append(k)
            else:
                pair_items.append((k, two))
        if not singles:
            self._session = None
            return None  # Gavel's policies return None for an empty round
        for k in singles:
            self._ids.setdefault(k, str(len(self._ids)))
        ids = {k: self._ids[k] for k in singles}
        docs: dict[str, dict[str, Any]] = {}
        for k in singles:
            job: dict[str, Any] = {
                "id": ids[k],
                "throughput": {w: float(r) for w, r in throughputs[k].items()},
                "scale_factor": int(scale_factors[k]),
            }
            if priority_weights is not None:
                job["priority_weight"] = float(priority_weights[k])
            if remaining is not None:
                job["remaining_steps"] = float(remaining[k])
            if since_start is not None:
                job["time_since_start_s"] = float(since_start[k])
            if isolated_time is not None:
                job["isolated_time_s"] = float(isolated_time[k])
            docs[ids[k]] = job
        pairs, pair_keys = self._pairs(pair_items, throughputs, scale_factors, ids, docs)
        workers = {w: int(n) for w, n in cluster_spec.items()}
        session = self._session
        if pairs or session is None or session.instance.workers != workers:
            inst = TimeshareInstance.model_validate(
                {
                    "name": f"gavel-{self.name}",
                    "policy": self.policy.value,
                    "workers": workers,
                    "jobs": list(docs.values()),
                    **pairs,
                    "efficiency": self.efficiency,
                }
            )
            session = RoundSession(inst, method=self.method, time_limit_s=self.time_limit_s)
            result = session.solve()
        else:
            result = session.step(self._change(docs))
        self._session = None if pairs else session
        self._docs = docs
        self.last_result = result
        self.last_instance = session.instance
        if result.solution is None or result.status not in (Status.OPTIMAL, Status.FEASIBLE):
            raise RoundFailed(result)
        return _as_gavel(result.solution, throughputs, {v: k for k, v in ids.items()}, pair_keys)

    def _pairs(self, pair_items, throughputs, scale_factors, ids, docs) -> tuple[dict, dict]:
        """The co-located pairs as instance fields: a co-location table by job type when the
        pairs are Gavel's (every pair of two recognised types present, with the types' rates;
        the job types are then set in ``docs``), else the pairs one by one. Gavel's 1,024-job
        round has 523,776 pairs of 26 types: 351 table entries instead."""
        if not pair_items or not self.policy.takes_pairs:
            return {}, {}
        # Gavel's packing forces pairs of unequal scale factors to 0: they never share
        kept = [(k, a, b) for k, (a, b) in pair_items if scale_factors[a] == scale_factors[b]]
        if not kept:
            return {}, {}
        keys, firsts, seconds = zip(*kept, strict=True)
        first_ids, second_ids = (
            list(map(ids.__getitem__, firsts)),
            list(map(ids.__getitem__, seconds)),
        )
        pair_keys = dict(zip(zip(first_ids, second_ids, strict=True), keys, strict=True))
        tables = list(map(throughputs.__getitem__, keys))
        table = by_job_type(first_ids, second_ids, tables, docs)
        if table is not None:
            return {"colocation": table}, pair_keys
        return {
            "pairs": [
                {"jobs": [a, b], "throughput": {w: list(r) for w, r in t.items()}}
                for a, b, t in zip(first_ids, second_ids, tables, strict=True)
            ]
        }, pair_keys

    def _change(self, docs: dict[str, dict[str, Any]]) -> RoundChange:
        """The difference from the last round's jobs: arrivals, departures, changed records."""
        before = self._docs
        return RoundChange(
            arrivals=tuple(Job.model_validate(d) for i, d in docs.items() if i not in before),
            departures=tuple(i for i in before if i not in docs),
            updates=tuple(
                Job.model_validate(d) for i, d in docs.items() if i in before and d != before[i]
            ),
        )


def _as_gavel(
    sol: TimeshareSolution,
    throughputs: Mapping[Key, Mapping[str, Any]],
    key_of: dict[str, Key],
    pair_keys: dict[tuple[str, str], Key],
) -> dict[Key, dict[str, float]]:
    """Gavel's output: every key of the input, every worker type, zeros included."""
    out = {k: dict.fromkeys(throughputs[k], 0.0) for k in throughputs}
    for s in sol.shares:
        if s.with_job is None:
            key = key_of[s.job]
        else:
            ab = (s.job, s.with_job)
            key = pair_keys[ab if ab in pair_keys else (s.with_job, s.job)]
        out[key][s.worker_type] = s.fraction
    return out


class MaxMinFairnessPerf(_TimesharePolicy):
    """``MaxMinFairnessPolicyWithPerf`` (and ``...WithPacking`` when pair keys are given)."""

    policy = Policy.MAX_MIN_FAIRNESS_PERF
    name = "MaxMinFairness_Perf"

    def get_allocation(self, throughputs, scale_factors, priority_weights, cluster_spec):
        return self._solve(throughputs, scale_factors, priority_weights, cluster_spec)


class MaxMinFairness(_TimesharePolicy):
    """``MaxMinFairnessPolicy``: throughput-blind (time only where the job can run)."""

    policy = Policy.MAX_MIN_FAIRNESS
    name = "MaxMinFairness"

    def get_allocation(self, throughputs, scale_factors, priority_weights, cluster_spec):
        return self._solve(throughputs, scale_factors, priority_weights, cluster_spec)


class MinTotalDuration(_TimesharePolicy):
    """``MinTotalDurationPolicyWithPerf``: the exact minimum makespan (Gavel bisects to 5%)."""

    policy = Policy.MIN_MAKESPAN
    name = "MinTotalDuration_Perf"

    def get_allocation(self, throughputs, scale_factors, num_steps_remaining, cluster_spec):
        return self._solve(
            throughputs, scale_factors, None, cluster_spec, remaining=num_steps_remaining
        )


class FinishTimeFairness(_TimesharePolicy):
    """``FinishTimeFairnessPolicyWithPerf``, with Gavel's state across rounds: each job's
    progress in seconds of its isolated throughput (``_cumulative_isolated_time``)."""

    policy = Policy.FINISH_TIME_FAIRNESS
    name = "FinishTimeFairness_Perf"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._isolated_time: dict[Key, float] = {}
        self._last_steps: dict[Key, float] = {}
        self._last_isolated: dict[Key, float] = {}

    def get_allocation(
        self,
        throughputs,
        scale_factors,
        priority_weights,
        times_since_start,
        num_steps_remaining,
        cluster_spec,
    ):
        for k, steps in num_steps_remaining.items():
            if k in self._last_steps and self._last_isolated.get(k):
                done = self._last_steps[k] - steps
                self._isolated_time[k] = (
                    self._isolated_time.get(k, 0.0) + done / (self._last_isolated[k])
                )
        out = self._solve(
            throughputs,
            scale_factors,
            priority_weights,
            cluster_spec,
            remaining=num_steps_remaining,
            since_start=times_since_start,
            isolated_time={k: self._isolated_time.get(k, 0.0) for k in num_steps_remaining},
        )
        self._last_steps = dict(num_steps_remaining)
        # Gavel converts progress to isolated seconds with last round's isolated throughput
        self._last_isolated = {}
        if self.last_instance is not None:
            data = build_data(self.last_instance)
            key_of = {v: k for k, v in self._ids.items()}
            self._last_isolated = {
                key_of[jid]: float(r)
                for jid, r in zip(data.ids, data.isolated_throughput(), strict=True)
            }
        return out


__all__ = [
    "FinishTimeFairness",
    "MaxMinFairness",
    "MaxMinFairnessPerf",
    "MinTotalDuration",
    "RoundFailed",
    "members",
]

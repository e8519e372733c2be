"""What every Gavel drop-in policy shares (``gavel.py`` holds the classes): Gavel's dicts in,
one timeshare round, Gavel's dicts out, and what happens when a round cannot be answered."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any, Literal

from schedopt.core.errors import SchedoptError
from schedopt.core.status import Status
from schedopt.problems.timeshare import Job, Policy, TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession

from .gavel_types import by_job_type

Key = Hashable


class RoundFailed(SchedoptError):
    """The solver returned no allocation for the round (see ``result``)."""

    def __init__(self, result: Any):
        self.result = result
        why = getattr(result, "explanation", None)
        super().__init__(f"no allocation: {result.status.value}: {why}")


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


OnFailure = Literal["raise", "previous"]


def fits(rates: Mapping[str, Any], scale_factor: Any, cluster_spec: Mapping[str, int]) -> bool:
    """False only for a gang too large: the job runs on some type the cluster has, but on no
    type with at least its scale factor of GPUs (Gavel's LP gives it no time; a 4-GPU job on
    a 2:2:2 cluster). Anything else, bad numbers included, counts as fitting, so that the
    instance's validation names it (a job with no positive rate anywhere is bad input)."""
    try:
        runs = [int(cluster_spec.get(w, 0)) for w, r in rates.items() if float(r) > 0]
        s = int(scale_factor)
    except (TypeError, ValueError):
        return True
    if not all(math.isfinite(float(r)) for r in rates.values()):
        return True
    return not any(n > 0 for n in runs) or any(n >= s for n in runs)


def _above(scale_factor: Any, gpus: int) -> bool:
    """Is the scale factor more than ``gpus`` (or not a number: the instance names it)?"""
    try:
        return int(scale_factor) > gpus
    except (TypeError, ValueError):
        return False


class TimesharePolicy:
    """What every adapter shares: dicts in, a timeshare round, dicts out. Rounds without pairs
    run in one :class:`RoundSession`: only what changed is validated, and HiGHS starts from
    the last round's basis.

    ``solver`` is Gavel's first constructor argument (``'ECOS'``, ``'GUROBI'``, ...), taken so
    that ``MaxMinFairnessPerf('ECOS')`` works as in Gavel, and ignored: ``method`` chooses.
    ``on_failure``: what a round that cannot be proven optimal within ``time_limit_s`` gives,
    ``"raise"`` (:class:`RoundFailed`) or ``"previous"`` (the last allocation returned, for
    the jobs still there; a new job gets no time). Jobs that fit nowhere (no type where they
    run with their scale factor of GPUs) get no time, as in Gavel's LP."""

    policy: Policy
    name: str

    def __init__(
        self,
        solver: str | None = None,
        *,
        method: str = "milp:highs",
        time_limit_s: float = 60.0,
        efficiency: bool = False,
        on_failure: OnFailure = "raise",
    ):
        #: ``efficiency``: also solve level 2 (Gavel does not; about 3x the LP time).
        self.method, self.time_limit_s, self.efficiency = method, time_limit_s, efficiency
        if on_failure not in ("raise", "previous"):
            raise ValueError(f"on_failure must be 'raise' or 'previous', not {on_failure!r}")
        self.solver, self.on_failure = solver, on_failure
        self._previous: dict[Key, dict[str, float]] = {}
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
        # only a gang larger than the smallest type can fit nowhere (most rounds: none)
        smallest = min((int(n) for n in cluster_spec.values() if int(n) > 0), default=0)
        unfit = {
            k
            for k in singles
            if _above(scale_factors[k], smallest)
            and not fits(throughputs[k], scale_factors[k], cluster_spec)
        }
        if unfit:  # no time for them (Gavel's LP gives none either), nor for their pairs
            singles = [k for k in singles if k not in unfit]
            pair_items = [(k, ab) for k, ab in pair_items if not unfit.intersection(ab)]
            if not singles:
                self._session = None
                return {k: dict.fromkeys(throughputs[k], 0.0) for k in throughputs}
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
        result = self._run_round(docs, pairs, workers)
        self._docs = docs
        self.last_result = result
        if result.solution is None or not _proven(result):
            return self._failed(result, throughputs)
        out = _as_gavel(result.solution, throughputs, {v: k for k, v in ids.items()}, pair_keys)
        self._previous = out
        return out

    def _rates(self, throughputs: Mapping[Key, Mapping[str, Any]]) -> Mapping[Key, Any]:
        """The rates the policy solves with (Gavel's throughput-blind variants rewrite them)."""
        return throughputs

    def _instance(
        self, docs: dict[str, dict[str, Any]], pairs: dict, workers: dict[str, int]
    ) -> TimeshareInstance:
        return TimeshareInstance.model_validate(
            {
                "name": f"gavel-{self.name}",
                "policy": self.policy.value,
                "workers": workers,
                "jobs": list(docs.values()),
                **pairs,
                "efficiency": self.efficiency,
            }
        )

    def _run_round(
        self, docs: dict[str, dict[str, Any]], pairs: dict, workers: dict[str, int]
    ) -> Any:
        """The round's ``schedopt.Result``: a new :class:`RoundSession` with pairs or a new
        cluster, else a step of the last one (sets ``last_instance``)."""
        session = self._session
        if pairs or session is None or session.instance.workers != workers:
            session = RoundSession(
                self._instance(docs, pairs, workers),
                method=self.method,
                time_limit_s=self.time_limit_s,
            )
            result = session.solve()
        else:
            session.time_limit_s = self.time_limit_s  # the user may change it between rounds
            result = session.step(self._change(docs))
        self._session = None if pairs else session
        self.last_instance = session.instance
        return result

    def _failed(
        self, result: Any, throughputs: Mapping[Key, Mapping[str, Any]]
    ) -> dict[Key, dict[str, float]]:
        """No proven optimum: :class:`RoundFailed`, or the last allocation for the jobs still
        here (never a silently worse allocation)."""
        if self.on_failure == "raise":
            raise RoundFailed(result)
        before = self._previous
        return {
            k: {w: float(before.get(k, {}).get(w, 0.0)) for w in throughputs[k]}
            for k in throughputs
        }

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


def _proven(result: Any) -> bool:
    """Is the round's policy value (level 1) a proven optimum? (Level 2, ``efficiency``, may
    stop unproven: the allocation is then still optimal for Gavel's objective.)"""
    if result.status is Status.OPTIMAL:
        return True
    return result.status is Status.FEASIBLE and result.stats.get("L1_status") == "optimal"


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

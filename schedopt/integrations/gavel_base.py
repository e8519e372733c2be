"""What every Gavel drop-in policy shares (``gavel.py`` holds the classes): Gavel's dicts in,
one timeshare round, Gavel's dicts out, and what happens when a round cannot be answered."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from itertools import compress
from typing import Any, Literal

import numpy as np

from schedopt.core.errors import SchedoptError
from schedopt.core.gcpause import gc_paused
from schedopt.core.status import Status
from schedopt.problems.timeshare import Job, Policy, TimeshareInstance, TimeshareSolution
from schedopt.problems.timeshare.rounds import RoundChange, RoundSession

from .gavel_keys import RoundKeys, read_keys, same_workers, write_allocation
from .gavel_keys import members as members  # re-exported: gavel.py, gavel_fifo.py
from .gavel_types import by_job_type

Key = Hashable


class RoundFailed(SchedoptError):
    """The solver returned no allocation for the round (see ``result``)."""

    def __init__(self, result: Any):
        self.result = result
        why = getattr(result, "explanation", None)
        super().__init__(f"no allocation: {result.status.value}: {why}")


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
        # A packed round holds millions of keys, tuples and dicts: the cyclic collector,
        # walking them all again and again, took half the time (issue 19).
        with gc_paused():
            return self._solve_round(
                throughputs,
                scale_factors,
                priority_weights,
                cluster_spec,
                remaining,
                since_start,
                isolated_time,
            )

    def _solve_round(
        self,
        throughputs: Mapping[Key, Mapping[str, Any]],
        scale_factors: Mapping[Key, int],
        priority_weights: Mapping[Key, float] | None,
        cluster_spec: Mapping[str, int],
        remaining: Mapping[Key, float] | None,
        since_start: Mapping[Key, float] | None,
        isolated_time: Mapping[Key, float] | None,
    ) -> dict[Key, dict[str, float]] | None:
        rk = read_keys(throughputs)
        if not rk.singles:
            self._session = None
            return None  # Gavel's policies return None for an empty round
        # only a gang larger than the smallest type can fit nowhere (most rounds: none)
        smallest = min((int(n) for n in cluster_spec.values() if int(n) > 0), default=0)
        fit = np.array(
            [
                not _above(scale_factors[k], smallest)
                or fits(throughputs[k], scale_factors[k], cluster_spec)
                for k in rk.singles
            ],
            dtype=bool,
        )
        if not fit.any():  # no time for them (Gavel's LP gives none either)
            self._session = None
            return {k: dict.fromkeys(throughputs[k], 0.0) for k in throughputs}
        singles = list(compress(rk.singles, fit.tolist()))
        for k in singles:
            self._ids.setdefault(k, str(len(self._ids)))
        ids = [self._ids[k] for k in singles]
        docs: dict[str, dict[str, Any]] = {}
        for k, jid in zip(singles, ids, strict=True):
            job: dict[str, Any] = {
                "id": jid,
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
            docs[jid] = job
        pairs, pair_index = self._pairs(rk, fit, throughputs, docs)
        workers = {w: int(n) for w, n in cluster_spec.items()}
        result = self._run_round(docs, pairs, workers)
        self._docs = docs
        self.last_result = result
        if result.solution is None or not _proven(result):
            return self._failed(result, throughputs)
        # positions among all single keys of the instance's jobs
        position = dict(zip(ids, np.flatnonzero(fit).tolist(), strict=True))
        out = _as_gavel(result.solution, rk, throughputs, position, pair_index)
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

    def _pairs(
        self,
        rk: RoundKeys,
        fit: np.ndarray,
        throughputs: Mapping[Key, Any],
        docs: dict[str, dict[str, Any]],
    ) -> tuple[dict, _PairIndex | None]:
        """The co-located pairs as instance fields: a co-location table by job type when the
        pairs are Gavel's (every pair of two recognised types present, with the types' rates;
        the job types are then set in ``docs``), else the pairs one by one. Gavel's 1,024-job
        round has 523,776 pairs of 26 types: 351 table entries instead."""
        if not rk.pairs or not self.policy.takes_pairs:
            return {}, None
        # positions among the jobs of the instance (the singles that fit)
        job_of = np.cumsum(fit) - 1
        scale = np.array([d["scale_factor"] for d in docs.values()], dtype=np.int64)
        a, b = job_of[rk.first], job_of[rk.second]
        # no time for pairs of a job that fits nowhere; Gavel's packing forces pairs of
        # unequal scale factors to 0: they never share
        ok = fit[rk.first] & fit[rk.second]
        ok[ok] = scale[a[ok]] == scale[b[ok]]
        kept = np.flatnonzero(ok)
        if not len(kept):
            return {}, None
        a, b = a[kept], b[kept]
        tables = rk.pair_tables(throughputs)
        if len(kept) < len(tables):
            tables = [tables[i] for i in kept.tolist()]
        index = _PairIndex(a, b, kept, len(docs))
        table = by_job_type(a, b, tables, docs)
        if table is not None:
            return {"colocation": table}, index
        ids = list(docs)
        return {
            "pairs": [
                {"jobs": [ids[x], ids[y]], "throughput": {w: list(r) for w, r in t.items()}}
                for x, y, t in zip(a.tolist(), b.tolist(), tables, strict=True)
            ]
        }, index

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


class _PairIndex:
    """The pairs handed to the instance: their members' positions among its jobs and each
    one's position among the pair keys, searchable by the two members."""

    def __init__(self, a: np.ndarray, b: np.ndarray, pair: np.ndarray, jobs: int):
        self.jobs = max(1, jobs)
        code = np.minimum(a, b) * self.jobs + np.maximum(a, b)
        order = np.argsort(code, kind="stable")
        self.codes, self.pair = code[order], pair[order]

    def find(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The pair key position of each pair of jobs (a[i], b[i]) (instance positions)."""
        code = np.minimum(a, b) * self.jobs + np.maximum(a, b)
        at = np.minimum(np.searchsorted(self.codes, code), max(0, len(self.codes) - 1))
        if len(code) and not np.array_equal(self.codes[at], code):
            raise RuntimeError("the answer shares GPUs between jobs that were no pair")
        return self.pair[at]


def _as_gavel(
    sol: TimeshareSolution,
    rk: RoundKeys,
    throughputs: Mapping[Key, Mapping[str, Any]],
    position: dict[str, int],
    pairs: _PairIndex | None,
) -> dict[Key, dict[str, float]]:
    """Gavel's output: every key of the input, every worker type, zeros included
    (``position``: the instance's job id → its position among the single keys)."""
    s = sol.shares
    single = np.array([position[j] for j in s.jobs], dtype=np.int64)
    types = np.asarray(s.types, dtype=object)
    job, w, f = s.alone()
    alone = (single[job], types[w].tolist(), f)
    a, b, w2, f2 = s.together()
    if len(a):
        assert pairs is not None, "pair shares in a round without pairs"
        # instance positions of the jobs: the order of ``position`` (the instance's jobs)
        where = np.full(len(rk.singles), -1, dtype=np.int64)
        where[np.fromiter(position.values(), np.int64, len(position))] = np.arange(len(position))
        at = pairs.find(where[single[a]], where[single[b]])
    else:
        at = np.zeros(0, dtype=np.int64)
    together = (at, types[w2].tolist(), f2)
    workers = same_workers(throughputs, rk.singles)
    return write_allocation(rk, throughputs, alone, together, workers)

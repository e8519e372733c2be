"""Round after round: a scheduler's session with one policy (issue 9, item 4).

A :class:`RoundSession` keeps the validated jobs, the last allocation and the solver's basis.
Each :meth:`RoundSession.step` applies what changed since the last round (arrivals,
departures, revised throughputs, progress, the cluster), validates only what changed, and
re-solves from the last basis (warm.py). Every allocation still goes through
``schedopt.solve``: validated independently, with the solver's own status.

    session = RoundSession(instance)
    first = session.solve()
    nxt = session.step(RoundChange(arrivals=(job,), departures=("j3",)))
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedopt.core.errors import FieldProblems, InvalidInstanceError
from schedopt.core.solve import solve

from .instance import Job, Pair, TimeshareInstance
from .rounding import Combination, WholeGpuRound, place


@dataclass(frozen=True)
class RoundChange:
    """What changed since the last round. Throughput tables replace a job's whole table."""

    arrivals: tuple[Job, ...] = ()
    departures: tuple[str, ...] = ()
    #: Jobs whose whole record is replaced (same id; e.g. a new scale factor or priority).
    updates: tuple[Job, ...] = ()
    throughputs: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    remaining_steps: Mapping[str, float] = field(default_factory=dict)
    time_since_start_s: Mapping[str, float] = field(default_factory=dict)
    isolated_time_s: Mapping[str, float] = field(default_factory=dict)
    #: GPUs per type (the whole cluster_spec), or None when unchanged.
    workers: Mapping[str, int] | None = None
    #: Pairs among the jobs after the change (None: keep the pairs of the jobs still here).
    pairs: tuple[Pair, ...] | None = None


@dataclass(frozen=True)
class RoundTiming:
    """Seconds spent on one round: applying and checking the change, and ``solve`` (model
    build, the solver, validation of the answer)."""

    apply_s: float
    build_s: float
    solver_s: float
    wall_s: float
    warm: bool


class RoundSession:
    def __init__(
        self,
        instance: TimeshareInstance,
        *,
        method: str = "milp:highs",
        time_limit_s: float = 10.0,
        **solve_options: Any,
    ):
        self.instance = instance
        self.method, self.time_limit_s, self.solve_options = method, time_limit_s, solve_options
        self.last: Any = None
        self.timings: list[RoundTiming] = []
        #: Rounds each combination was placed on whole GPUs (:meth:`place`).
        self.received: dict[Combination, int] = {}
        self.rounds_placed = 0

    def solve(self) -> Any:
        """Solve the current round (from the last basis when there is one)."""
        return self._solve(0.0)

    def step(self, change: RoundChange) -> Any:
        """Apply ``change`` and solve the new round."""
        started = time.perf_counter()
        self.instance = apply_change(self.instance, change)
        return self._solve(time.perf_counter() - started)

    def place(self) -> WholeGpuRound:
        """Whole GPUs for this round from the last allocation (Gavel's priorities over the
        rounds placed so far), with the rounding loss of the rounds so far."""
        if self.last is None or self.last.solution is None:
            raise ValueError("no allocation to place: call solve() or step() first")
        placed = place(self.instance, self.last.solution, self.received, self.rounds_placed)
        self.received = placed.received
        self.rounds_placed += 1
        return placed

    def _solve(self, apply_s: float) -> Any:
        warm = None if self.last is None else self.last.warm_start
        result = solve(
            self.instance,
            self.method,
            time_limit_s=self.time_limit_s,
            warm_start=warm,
            **self.solve_options,
        )
        self.last = result
        self.timings.append(
            RoundTiming(
                apply_s,
                result.build_s,
                result.solve_s,
                result.wall_s,
                result.stats.get("warm_start") == "basis",
            )
        )
        return result


def apply_change(inst: TimeshareInstance, change: RoundChange) -> TimeshareInstance:
    """The next round's instance. Only changed jobs are validated field by field (pydantic);
    the cross-field checks run on the whole round, as for a file."""
    gone = set(change.departures)
    unknown = gone - set(inst.job_index)
    if unknown:
        raise InvalidInstanceError("departures", f"unknown jobs {sorted(unknown)[:5]}")
    replaced = {j.id: j for j in change.updates}
    unknown = set(replaced) - set(inst.job_index)
    if unknown:
        raise InvalidInstanceError("updates", f"unknown jobs {sorted(unknown)[:5]}")
    jobs = []
    for job in inst.jobs:
        if job.id in gone:
            continue
        job = replaced.get(job.id, job)
        update: dict[str, Any] = {}
        if job.id in change.throughputs:
            update["throughput"] = dict(change.throughputs[job.id])
        for name in ("remaining_steps", "time_since_start_s", "isolated_time_s"):
            table = getattr(change, name)
            if job.id in table:
                update[name] = table[job.id]
        jobs.append(Job.model_validate({**job.model_dump(), **update}) if update else job)
    jobs.extend(change.arrivals)
    ids = {j.id for j in jobs}
    pairs = (
        tuple(p for p in inst.pairs if set(p.jobs) <= ids) if change.pairs is None else change.pairs
    )
    workers = inst.workers if change.workers is None else dict(change.workers)
    if change.workers is not None:  # GPU counts are field-checked like a file's, first
        TimeshareInstance.model_validate({"workers": workers, "jobs": []})
    fields = {name: getattr(inst, name) for name in TimeshareInstance.model_fields}
    built = TimeshareInstance.model_construct(
        **{**fields, "jobs": tuple(jobs), "pairs": pairs, "workers": workers}
    )
    try:
        built._cross_checks()  # type: ignore[operator]  # pydantic wraps the validator
    except FieldProblems as err:
        raise InvalidInstanceError(err.problems[0][0], err.problems[0][1], err.problems) from None
    return built

"""The co-scheduling instance: pools of hosts, and RL jobs as cycles of phases with options.

Field checks come from pydantic with the ranges of :mod:`schedopt.core.limits`; the cross-field
checks (unique names, known pools, device counts that are multiples of the TP size, prices in
whole cents, consistent current pools) raise :class:`~schedopt.core.errors.FieldProblems` with
paths such as ``jobs[2].phases[0].options[1].pool``. See ``formulations/cosched.md``.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from schedopt.core import limits
from schedopt.core.errors import FieldProblems
from schedopt.core.limits import Bandwidth, NonNegMemoryGib
from schedopt.core.model import FrozenModel

PROBLEM: Final = "cosched"

#: Longest time any field may hold, in ms (about 11.6 days): the model's big-M is 8× the
#: largest SLO, and a solver's integrality tolerance times it must stay below one ms on the
#: instances the exact models are built for (formulation, "How the periodic schedule ...").
MAX_MS = 10**9
Ms = Annotated[int, Field(ge=0, le=MAX_MS)]
PositiveMs = Annotated[int, Field(ge=1, le=MAX_MS)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Devices = Annotated[int, Field(ge=1, le=limits.MAX_GPUS)]
Hosts = Annotated[int, Field(ge=0, le=100_000)]
Price = Annotated[float, Field(ge=0, le=1e4, allow_inf_nan=False)]
ParamsB = Annotated[float, Field(ge=0, le=1e5, allow_inf_nan=False)]
JobWeight = Annotated[int, Field(ge=1, le=1000)]

_Frozen = FrozenModel


class Pool(_Frozen):
    """A pool of identical hosts: ``gpus_per_host`` devices (a CPU pool: sandbox slots) and
    ``host_memory_gib`` of host memory each, at ``price_per_gpu_hour`` per device-hour."""

    name: Name
    kind: Literal["gpu", "cpu"] = "gpu"
    hosts: Hosts
    gpus_per_host: Devices
    host_memory_gib: NonNegMemoryGib
    price_per_gpu_hour: Price


class PhaseOption(_Frozen):
    """One way to run a phase: on ``gpus`` devices of ``pool`` in TP groups of ``tp``, for
    ``duration_ms`` at the planning quantile, holding ``resident_gib`` of the pool's host
    memory; ``holdout_ms``: held-out duration samples (metrics only, never planned with)."""

    pool: Name
    gpus: Devices
    tp: Devices = 1
    duration_ms: PositiveMs
    resident_gib: NonNegMemoryGib = 0.0
    holdout_ms: tuple[PositiveMs, ...] = Field(default=(), max_length=10_000)
    #: Scenario durations for the chance constraint (``chance``): scenario ``s`` takes
    #: ``samples_ms[s]``; an option without samples lasts ``duration_ms`` in every scenario.
    samples_ms: tuple[PositiveMs, ...] = Field(default=(), max_length=1_000)


class Phase(_Frozen):
    name: Name
    options: tuple[PhaseOption, ...] = Field(min_length=1, max_length=64)
    current_pool: Name | None = None


class Job(_Frozen):
    """An RL job: ``phases`` in step order (a step ends with a weight sync from the last phase's
    pool to the first's); ``staleness`` 0 on-policy, 1 one step stale; ``slo_ms`` per step."""

    id: Name
    phases: tuple[Phase, ...] = Field(min_length=1, max_length=16)
    staleness: Literal[0, 1] = 0
    slo_ms: PositiveMs
    params_b: ParamsB = 0.0
    switch_ms: Ms = 0
    weight: JobWeight = 1


class Chance(_Frozen):
    """C13: every job's timetable must hold (its SLO met) in at least ``1 − epsilon`` of the
    first ``scenarios`` sampled scenarios (``samples_ms`` of the options)."""

    epsilon: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
    scenarios: Annotated[int, Field(ge=1, le=64)]


class CoschedInstance(_Frozen):
    problem: Literal["cosched"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = ""
    pools: tuple[Pool, ...] = Field(min_length=1, max_length=64)
    jobs: tuple[Job, ...] = Field(min_length=1, max_length=10_000)
    #: Bandwidth between a job's pools for the weight sync (400 Gb/s IB per host, RollPacker).
    sync_bandwidth_gbps: Bandwidth = 400.0
    chance: Chance | None = None

    @model_validator(mode="after")
    def _cross_fields(self) -> CoschedInstance:
        problems: list[tuple[str, str]] = []
        pools = {}
        for i, pool in enumerate(self.pools):
            if pool.name in pools:
                problems.append((f"pools[{i}].name", f"duplicate pool {pool.name!r}"))
            pools[pool.name] = pool
            cents = pool.price_per_gpu_hour * 100
            if abs(cents - round(cents)) > 1e-6:
                problems.append(
                    (f"pools[{i}].price_per_gpu_hour", "must be a whole number of cents")
                )
        seen: set[str] = set()
        for j, job in enumerate(self.jobs):
            if job.id in seen:
                problems.append((f"jobs[{j}].id", f"duplicate job id {job.id!r}"))
            seen.add(job.id)
            for k, phase in enumerate(job.phases):
                at = f"jobs[{j}].phases[{k}]"
                if phase.current_pool is not None and phase.current_pool not in pools:
                    problems.append((f"{at}.current_pool", f"unknown pool {phase.current_pool!r}"))
                keys = set()
                for o, opt in enumerate(phase.options):
                    if opt.pool not in pools:
                        problems.append((f"{at}.options[{o}].pool", f"unknown pool {opt.pool!r}"))
                    if opt.gpus % opt.tp:
                        problems.append(
                            (
                                f"{at}.options[{o}].gpus",
                                f"must be a multiple of tp (got {opt.gpus} with tp {opt.tp})",
                            )
                        )
                    if (opt.pool, opt.gpus) in keys:
                        problems.append(
                            (f"{at}.options[{o}]", f"a second option {opt.pool}×{opt.gpus}")
                        )
                    keys.add((opt.pool, opt.gpus))
                    if self.chance is not None and 0 < len(opt.samples_ms) < self.chance.scenarios:
                        problems.append(
                            (
                                f"{at}.options[{o}].samples_ms",
                                f"{len(opt.samples_ms)} samples for "
                                f"{self.chance.scenarios} scenarios",
                            )
                        )
        problems += self._magnitude_problems()
        if problems:
            raise FieldProblems(problems)
        return self

    def _magnitude_problems(self) -> list[tuple[str, str]]:
        """L1 in CP-SAT is a sum over every candidate group (one per job) and pool of
        cents × devices per host × hosts (formulation, "Integer scaling"): within the field
        ranges it reaches 10²¹, beyond int64 (CP-SAT then rejected the model)."""
        held = [round(p.price_per_gpu_hour * 100) * p.gpus_per_host * p.hosts for p in self.pools]
        if sum(held) * len(self.jobs) <= limits.MAX_MODEL_INT:
            return []
        i = max(range(len(held)), key=held.__getitem__)
        return [
            (
                f"pools[{i}].hosts",
                f"the pools' hourly cost (price_per_gpu_hour × gpus_per_host × hosts, summed: "
                f"{sum(held) / 100:.3g} $/h) times {len(self.jobs)} jobs (one candidate group "
                f"each) must stay below {limits.MAX_MODEL_INT / 100:.3g} $/h, the models' range "
                "in cents; use fewer hosts or a coarser price unit",
            )
        ]

    def pool(self, name: str) -> Pool:
        return next(p for p in self.pools if p.name == name)

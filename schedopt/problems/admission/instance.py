"""The deadline-admission instance: the typed, validated form of an instance file.

Field-level checks come from pydantic; the cross-field checks (ids, deadlines against arrival and
horizon, gang sizes against the topology) live in the model validator of :class:`AdmissionInstance`
and name the field path in their message. See ``formulations/admission.md``.
"""

from __future__ import annotations

import math
from enum import Enum
from functools import cached_property
from typing import Final, Literal

from pydantic import Field, model_validator

from schedopt.core import limits
from schedopt.core.errors import FieldProblems
from schedopt.core.limits import GpuCount, Iterations, Seconds, StepSeconds, Value, Weight
from schedopt.core.model import FrozenModel
from schedopt.core.powers_of_two import is_power_of_two
from schedopt.core.pydantic_errors import describe
from schedopt.topology import Cluster

from .scales import PROGRESS_SCALE, VALUE_SCALE

PROBLEM: Final = "admission"


class JobKind(str, Enum):
    STRICT_SLO = "strict_slo"
    SOFT_SLO = "soft_slo"
    BEST_EFFORT = "best_effort"

    @property
    def is_slo(self) -> bool:
        return self is not JobKind.BEST_EFFORT


_Frozen = FrozenModel
_TABLE_RANGE = (
    f"counts are powers of two up to {limits.MAX_GPUS:,}, "
    f"rates in [{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}]"
)


class DeadlineTier(_Frozen):
    """Meeting ``deadline_s`` (seconds from now) is worth ``value``."""

    deadline_s: Seconds = Field(gt=0)
    value: Value


class Job(_Frozen):
    id: str = Field(min_length=1)
    kind: JobKind
    tenant: str = "default"
    arrival_s: Seconds = 0.0
    remaining_iterations: Iterations
    throughput: dict[int, float] | None = Field(
        default=None,
        description=f"iterations/s at each allowed GPU count, on every GPU type; {_TABLE_RANGE}",
    )
    throughput_by_type: dict[str, dict[int, float]] | None = Field(
        default=None,
        description=f"iterations/s per GPU type and allowed GPU count; {_TABLE_RANGE}",
    )
    deadlines: tuple[DeadlineTier, ...] = ()
    admitted: bool = False
    weight: Weight = 1.0
    current_gpus: GpuCount = 0

    def options(self, gpu_types: tuple[str, ...]) -> dict[str, dict[int, float]]:
        """Throughput per (GPU type, count) this job may use, before topology restrictions."""
        if self.throughput_by_type is not None:
            return {g: dict(t) for g, t in self.throughput_by_type.items()}
        assert self.throughput is not None
        return {g: dict(self.throughput) for g in gpu_types}


class AdmissionInstance(_Frozen):
    problem: Literal["admission"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = "admission"
    cluster: Cluster
    unavailable_gpus: tuple[str, ...] = ()
    slots: int = Field(ge=1, le=10_000)
    slot_s: StepSeconds
    be_discount: float = Field(default=0.8, ge=1e-3, le=1)
    jobs: tuple[Job, ...]

    @model_validator(mode="after")
    def _cross_checks(self) -> AdmissionInstance:
        # A host mixing GPU types is accepted: C3, placement and V7 treat each (host, type)
        # as its own group (``gpu_groups``; issue 7 item 5). Fair share still refuses it.
        problems: list[str] = []
        gpus = set(self.cluster.gpus())
        for i, gpu in enumerate(self.unavailable_gpus):
            if gpu not in gpus:
                problems.append(f"unavailable_gpus[{i}]: unknown GPU {gpu!r}")
        seen: dict[str, int] = {}
        horizon = self.slots * self.slot_s
        types = self.cluster.gpu_types()
        for i, job in enumerate(self.jobs):
            where = f"jobs[{i}]"
            if job.id in seen:
                problems.append(
                    f"{where}.id: duplicate job id {job.id!r} (also jobs[{seen[job.id]}])"
                )
            seen[job.id] = i
            problems.extend(_check_throughput(where, job, types))
            problems.extend(_check_deadlines(where, job, horizon))
            if not problems and not self.usable_options(job):
                problems.append(
                    f"{where}.throughput: none of its GPU counts can be hosted on this cluster "
                    f"(hosts hold {self.host_size}; wider jobs need whole hosts, a multiple of it)"
                )
            if job.admitted and not job.kind.is_slo:
                problems.append(
                    f"{where}.admitted: only SLO jobs are admitted (kind is best_effort)"
                )
        if not problems:
            problems.extend(self._magnitude_problems())
        if problems:
            raise FieldProblems([_split(p) for p in problems])
        return self

    def _magnitude_problems(self) -> list[str]:
        """Products of several fields that the exact models form must stay representable
        (see "Integer scaling" in ``formulations/admission.md``): iterations over the horizon
        (C6), the scaled tier values (L1) and the scaled best-effort progress (L2)."""
        problems = []
        l1 = 0.0
        l2 = 0.0
        for i, job in enumerate(self.jobs):
            rates = self.usable_options(job).values()
            per_slot = max(rates, default=0.0) * self.slot_s
            if per_slot > limits.MAX_ITERATIONS:
                problems.append(
                    f"jobs[{i}].throughput: {per_slot:.3g} iterations in one slot (throughput x "
                    f"slot_s) is more than {limits.MAX_ITERATIONS:.0e}, the largest coefficient "
                    f"the solvers take; use coarser iterations or shorter slots"
                )
            elif per_slot * self.slots > limits.MAX_EXACT_INT:
                problems.append(
                    f"jobs[{i}].throughput: {per_slot * self.slots:.3g} iterations over the "
                    f"horizon (throughput x slot_s x slots) is more than the solvers count "
                    f"exactly (2**53); use coarser iterations or a shorter horizon"
                )
            l1 += sum(t.value for t in job.deadlines)
            if not job.kind.is_slo:
                run = max(0, self.slots - self.arrival_slot(job))
                l2 += run * min(float(job.remaining_iterations), per_slot)
        if l1 * VALUE_SCALE > limits.MAX_EXACT_INT:
            problems.append(
                f"jobs: the deadline tier values sum to {l1:.3g}; the models resolve values to "
                f"1/{VALUE_SCALE} and need the sum below {limits.MAX_EXACT_INT / VALUE_SCALE:.3g}"
            )
        if l2 * PROGRESS_SCALE > limits.MAX_MODEL_INT:
            problems.append(
                f"jobs: best-effort progress over the horizon (sum over best-effort jobs of "
                f"slots x min(remaining_iterations, iterations per slot)) is {l2:.3g}; the "
                f"models need it below {limits.MAX_MODEL_INT / PROGRESS_SCALE:.3g} to stay in "
                f"int64 at their {PROGRESS_SCALE:,}:1 resolution; use coarser iterations"
            )
        return problems

    # --- derived views (computed once; the instance is frozen) ----------------------------
    @cached_property
    def gpu_groups(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(host, GPU type) → the host's GPUs of that type. A gang never mixes types, so a host
        that mixes types (say one A100 among H100s) is one group per type for C3 and placement;
        "a host" in the formulation means such a group."""
        groups: dict[tuple[str, str], list[str]] = {}
        for h in self.cluster.hosts():
            for gpu in self.cluster.gpus_on(h):
                groups.setdefault((h, self.cluster.gpu(gpu).gpu_type), []).append(gpu)
        return {k: tuple(v) for k, v in groups.items()}

    @cached_property
    def free_gpus_by_group(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(host, GPU type) → its GPUs that are not unavailable (f_h of the formulation)."""
        out = set(self.unavailable_gpus)
        return {k: tuple(g for g in v if g not in out) for k, v in self.gpu_groups.items()}

    @cached_property
    def gpu_types(self) -> tuple[str, ...]:
        return self.cluster.gpu_types()

    @cached_property
    def host_size(self) -> dict[str, int]:
        """σ_g: the most GPUs of type g on one host."""
        size: dict[str, int] = {}
        for (_, g), gpus in self.gpu_groups.items():
            size[g] = max(size.get(g, 0), len(gpus))
        return size

    def job(self, job_id: str) -> Job:
        return self.jobs[self.job_index[job_id]]

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.id: i for i, j in enumerate(self.jobs)}

    def arrival_slot(self, job: Job) -> int:
        return math.ceil(job.arrival_s / self.slot_s - 1e-9)

    def slots_before(self, deadline_s: float) -> int:
        """e = ⌊d/Δ⌋: slots that end by the deadline."""
        return math.floor(deadline_s / self.slot_s + 1e-9)

    def usable_options(self, job: Job) -> dict[tuple[str, int], float]:
        """(type, count) → iterations/s, keeping only what the topology can host (see C3)."""
        result: dict[tuple[str, int], float] = {}
        # Read in place, not through Job.options (which copies every table for every type:
        # a third of the data build on 100,000 jobs).
        tables = (
            job.throughput_by_type.items()
            if job.throughput_by_type is not None
            else ((g, job.throughput or {}) for g in self.gpu_types)
        )
        for g, table in tables:
            sigma = self.host_size.get(g, 0)
            for n, rate in table.items():
                if n <= sigma or (is_power_of_two(sigma) and n % sigma == 0):
                    result[(g, n)] = rate
        return result


def _split(problem: str) -> tuple[str, str]:
    path, _, reason = problem.partition(": ")
    return path, reason


def _check_throughput(where: str, job: Job, types: tuple[str, ...]) -> list[str]:
    if (job.throughput is None) == (job.throughput_by_type is None):
        return [f"{where}.throughput: give exactly one of throughput and throughput_by_type"]
    tables = (
        {"": job.throughput}
        if job.throughput is not None
        else {f"[{g!r}]": t for g, t in (job.throughput_by_type or {}).items()}
    )
    field = "throughput" if job.throughput is not None else "throughput_by_type"
    problems = []
    if job.throughput_by_type is not None:
        for g in job.throughput_by_type:
            if g not in types:
                problems.append(
                    f"{where}.{field}[{g!r}]: GPU type not in the cluster {list(types)}"
                )
    for key, table in tables.items():
        if not table:
            problems.append(f"{where}.{field}{key}: empty throughput table")
        for n, rate in table.items():
            if not is_power_of_two(n) or n > limits.MAX_GPUS:
                problems.append(
                    f"{where}.{field}{key}[{describe(n)}]: GPU count must be a power of two "
                    f"(1, 2, 4, 8, …) up to {limits.MAX_GPUS:,}"
                )
            if not (limits.MIN_POSITIVE <= rate <= limits.MAX_RATE):
                problems.append(
                    f"{where}.{field}{key}[{describe(n)}]: throughput must be > 0: "
                    f"in [{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}] iterations/s (got {rate:g})"
                )
    return problems


def _check_deadlines(where: str, job: Job, horizon: float) -> list[str]:
    problems = []
    tiers = job.deadlines
    if job.kind is JobKind.STRICT_SLO and len(tiers) != 1:
        problems.append(
            f"{where}.deadlines: a strict_slo job has exactly one deadline (got {len(tiers)})"
        )
    if job.kind is JobKind.SOFT_SLO and not tiers:
        problems.append(f"{where}.deadlines: a soft_slo job needs at least one deadline tier")
    if job.kind is JobKind.BEST_EFFORT and tiers:
        problems.append(f"{where}.deadlines: a best_effort job has no deadlines")
    for k, tier in enumerate(tiers):
        if tier.deadline_s <= job.arrival_s:
            problems.append(
                f"{where}.deadlines[{k}].deadline_s: must be after arrival_s "
                f"(got {tier.deadline_s:g} <= {job.arrival_s:g})"
            )
        if tier.deadline_s > horizon + 1e-9:
            problems.append(
                f"{where}.deadlines[{k}].deadline_s: {tier.deadline_s:g} s is beyond the horizon "
                f"slots*slot_s = {horizon:g} s; lengthen the horizon"
            )
        if k and tier.deadline_s <= tiers[k - 1].deadline_s:
            problems.append(
                f"{where}.deadlines[{k}].deadline_s: tiers must have increasing deadlines"
            )
        if k and tier.value > tiers[k - 1].value:
            problems.append(f"{where}.deadlines[{k}].value: a later tier cannot be worth more")
    return problems

"""One round of a time-share policy: the typed, validated form of an instance file.

See ``formulations/timeshare.md`` for the symbols. Field ranges come from pydantic and
``schedopt.core.limits``; the cross-field checks (ids, types, pairs, a job that can run
nowhere) name the field path.
"""

from __future__ import annotations

from enum import Enum
from functools import cached_property
from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from schedopt.core import limits
from schedopt.core.errors import FieldProblems
from schedopt.core.limits import GpuCount, PositiveIterations, Seconds, Weight
from schedopt.core.model import FrozenModel

PROBLEM: Final = "timeshare"

#: Steps/s: 0 (the job cannot run on that type) or in [MIN_POSITIVE, MAX_RATE].
Throughput = Annotated[float, Field(ge=0, le=limits.MAX_RATE, allow_inf_nan=False)]
#: At most this many jobs and pairs: the arrays of the model stay far below what HiGHS indexes.
MAX_JOBS = 1_000_000
#: At most this many pairs, given (``pairs``) or implied by job types (``colocation``).
MAX_PAIRS = 50_000_000
RATE_RANGE = f"throughput must be 0 or in [{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}]"


class Policy(str, Enum):
    """Gavel's policies (``scheduler/policies``), each an exact model here."""

    #: ``MaxMinFairnessPolicy``: max min_j s_j Σ_w x_jw / π_j (throughput-blind).
    MAX_MIN_FAIRNESS = "max_min_fairness"
    #: ``MaxMinFairnessPolicyWithPerf`` (``...WithPacking`` with pairs): max min_j of the
    #: throughput normalised by the equal split's, times s_j / π_j.
    MAX_MIN_FAIRNESS_PERF = "max_min_fairness_perf"
    #: ``FinishTimeFairnessPolicyWithPerf``: min max_j of finish time / isolated finish time.
    FINISH_TIME_FAIRNESS = "finish_time_fairness"
    #: ``MinTotalDurationPolicyWithPerf``: min the time until every job is done.
    MIN_MAKESPAN = "min_makespan"

    @property
    def needs_remaining_steps(self) -> bool:
        return self in (Policy.FINISH_TIME_FAIRNESS, Policy.MIN_MAKESPAN)

    @property
    def takes_pairs(self) -> bool:
        return self is not Policy.MAX_MIN_FAIRNESS


class Job(FrozenModel):
    id: str = Field(min_length=1)
    throughput: dict[str, Throughput] = Field(
        description="steps/s on scale_factor GPUs of each type; 0: cannot run there; rates in "
        f"[{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}]"
    )
    scale_factor: int = Field(default=1, ge=1, le=limits.MAX_GPUS)
    priority_weight: Weight = 1.0
    remaining_steps: PositiveIterations | None = None
    time_since_start_s: Seconds = 0.0
    isolated_time_s: Seconds = Field(
        default=0.0, description="progress so far, in seconds at the isolated throughput"
    )
    job_type: str | None = Field(
        default=None,
        min_length=1,
        description="the job's type (Gavel's (model, scale factor)): jobs of one type have one "
        "scale factor, and `colocation` gives the rates of two jobs by their types",
    )


class Pair(FrozenModel):
    """Two jobs that may share GPUs, with each one's throughput while they do."""

    jobs: tuple[str, str]
    throughput: dict[str, tuple[Throughput, Throughput]]


class Colocation(FrozenModel):
    """Any job of one type may share GPUs with any job of the other (or another job of the
    same type), with these throughputs while they do: Gavel's co-location table, where a
    pair's rates depend only on the two jobs' types. ``throughput[w]`` is (the first type's
    job's rate, the second's); two jobs of one type take them in the order of ``jobs``."""

    job_types: tuple[str, str]
    throughput: dict[str, tuple[Throughput, Throughput]]


class TimeshareInstance(FrozenModel):
    problem: Literal["timeshare"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = "timeshare"
    policy: Policy = Policy.MAX_MIN_FAIRNESS_PERF
    workers: dict[str, GpuCount] = Field(min_length=1, description="GPUs per type")
    jobs: tuple[Job, ...] = Field(max_length=MAX_JOBS)
    pairs: tuple[Pair, ...] = Field(default=(), max_length=MAX_PAIRS)
    colocation: tuple[Colocation, ...] = Field(
        default=(),
        max_length=MAX_PAIRS,
        description="space sharing by job type (instead of `pairs`): every two jobs whose "
        "types have an entry may share GPUs",
    )
    efficiency: bool = Field(
        default=True,
        description="solve level 2 (the mean weighted throughput among level 1's optima); "
        "false: level 1 only, as Gavel's policies do (about 3x faster at 2,048 jobs; the "
        "point among the optima is then the solver's, and the second objective reads 0)",
    )

    @model_validator(mode="after")
    def _cross_checks(self) -> TimeshareInstance:
        problems: list[tuple[str, str]] = []
        if not any(self.workers.values()):
            problems.append(("workers", "the cluster has no GPUs"))
        seen: dict[str, int] = {}
        for i, job in enumerate(self.jobs):
            problems.extend(self._check_job(f"jobs[{i}]", job, seen.get(job.id)))
            seen.setdefault(job.id, i)
        if self.pairs and not self.policy.takes_pairs:
            problems.append(("pairs", f"policy {self.policy.value} takes no pairs"))
        problems.extend(self._check_pairs(seen))
        problems.extend(check_colocation(self))
        if problems:
            raise FieldProblems(problems)
        return self

    def _check_job(self, where: str, job: Job, earlier: int | None) -> list[tuple[str, str]]:
        out = []
        if earlier is not None:
            out.append((f"{where}.id", f"duplicate job id {job.id!r} (also jobs[{earlier}])"))
        runs = fits = False  # somewhere with GPUs; somewhere its gang fits (C4)
        workers = self.workers
        for w, rate in job.throughput.items():
            gpus = workers.get(w)
            if gpus is None:
                out.append((f"{where}.throughput[{w!r}]", f"unknown GPU type {w!r}"))
            elif 0 < rate < limits.MIN_POSITIVE:
                out.append((f"{where}.throughput[{w!r}]", RATE_RANGE))
            elif rate and gpus:
                runs = True
                fits = fits or gpus >= job.scale_factor
        if not runs:
            out.append((f"{where}.throughput", "the job can run on no GPU type of the cluster"))
        elif not fits:
            out.append(
                (
                    f"{where}.scale_factor",
                    f"{job.scale_factor} GPUs: more than any GPU type the job can run on has",
                )
            )
        if self.policy.needs_remaining_steps and job.remaining_steps is None:
            out.append((f"{where}.remaining_steps", f"required by policy {self.policy.value}"))
        return out

    def _check_pairs(self, index: dict[str, int]) -> list[tuple[str, str]]:
        """Every pair names two known jobs of equal scale factor, once, with rates on known
        types. A fast pass over the usual case (10^5–10^6 pairs at 1,024 jobs); a pair that
        fails it is examined again for the messages."""
        scale = {j.id: j.scale_factor for j in self.jobs}
        workers, low = self.workers, limits.MIN_POSITIVE
        seen: set[tuple[str, str]] = set()
        out: list[tuple[str, str]] = []
        for i, pair in enumerate(self.pairs):
            a, b = pair.jobs
            key = (a, b) if a < b else (b, a)
            twice = key in seen
            seen.add(key)
            if (
                not twice
                and a != b
                and scale.get(a, 0) == scale.get(b, -1)
                and all(
                    w in workers and not (0 < ra < low) and not (0 < rb < low)
                    for w, (ra, rb) in pair.throughput.items()
                )
            ):
                continue
            out.extend(self._pair_problems(f"pairs[{i}]", pair, index, twice))
        return out

    def _pair_problems(
        self, where: str, pair: Pair, index: dict[str, int], twice: bool
    ) -> list[tuple[str, str]]:
        a, b = pair.jobs
        out = []
        for k, jid in enumerate(pair.jobs):
            if jid not in index:
                out.append((f"{where}.jobs[{k}]", f"unknown job {jid!r}"))
        if a == b:
            out.append((f"{where}.jobs", f"a job cannot share GPUs with itself ({a!r})"))
        if twice:
            out.append((f"{where}.jobs", f"pair {a!r}, {b!r} given twice"))
        if out:
            return out
        ja, jb = self.jobs[index[a]], self.jobs[index[b]]
        if ja.scale_factor != jb.scale_factor:
            out.append(
                (
                    f"{where}.jobs",
                    f"jobs with different scale factors ({ja.scale_factor}, {jb.scale_factor}) "
                    "cannot share GPUs",
                )
            )
        for w, rates in pair.throughput.items():
            if w not in self.workers:
                out.append((f"{where}.throughput[{w!r}]", f"unknown GPU type {w!r}"))
            elif any(0 < r < limits.MIN_POSITIVE for r in rates):
                out.append((f"{where}.throughput[{w!r}]", RATE_RANGE))
        return out

    # --- derived views (computed once; the instance is frozen) ----------------------------
    @cached_property
    def worker_types(self) -> tuple[str, ...]:
        """The GPU types, sorted (Gavel's order)."""
        return tuple(sorted(self.workers))

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.id: i for i, j in enumerate(self.jobs)}


# --- space sharing by job type -------------------------------------------------------------
# Gavel's co-location table gives a pair's rates by the two jobs' types, so 1,024 jobs of 26
# types carry 351 entries instead of 523,776 pairs. The checks name the field: a type pair
# given twice, unequal scale factors, rates out of range, and more implied pairs than an
# instance may hold. An entry may name a type no job of the round has (a scheduler passes its
# whole table, and a session's jobs come and go): it implies no pair.


def type_members(inst: TimeshareInstance) -> dict[str, list[int]]:
    """Job type → the indices of its jobs, in the order of ``jobs``."""
    out: dict[str, list[int]] = {}
    for i, job in enumerate(inst.jobs):
        if job.job_type is not None:
            out.setdefault(job.job_type, []).append(i)
    return out


def implied_pairs(inst: TimeshareInstance, members: dict[str, list[int]] | None = None) -> int:
    """How many job pairs ``colocation`` lets share GPUs."""
    members = type_members(inst) if members is None else members
    total = 0
    for entry in inst.colocation:
        a, b = entry.job_types
        na, nb = len(members.get(a, ())), len(members.get(b, ()))
        total += na * (na - 1) // 2 if a == b else na * nb
    return total


def check_colocation(inst: TimeshareInstance) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    members = type_members(inst)
    for t, idx in members.items():  # one scale factor per type (a pair shares s GPUs)
        first = inst.jobs[idx[0]].scale_factor
        for i in idx[1:]:
            if inst.jobs[i].scale_factor != first:
                out.append(
                    (
                        f"jobs[{i}].scale_factor",
                        f"job type {t!r} has scale factor {first} (jobs[{idx[0]}])",
                    )
                )
    if not inst.colocation:
        return out
    if inst.pairs:
        out.append(("colocation", "give pairs or colocation, not both"))
    if not inst.policy.takes_pairs:
        out.append(("colocation", f"policy {inst.policy.value} takes no pairs"))
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(inst.colocation):
        where = f"colocation[{i}]"
        a, b = entry.job_types
        key = (a, b) if a <= b else (b, a)
        if key in seen:
            out.append(
                (f"{where}.job_types", f"types {a!r}, {b!r} given twice (colocation[{seen[key]}])")
            )
        seen.setdefault(key, i)
        if a in members and b in members:
            sa, sb = inst.jobs[members[a][0]].scale_factor, inst.jobs[members[b][0]].scale_factor
            if sa != sb:
                out.append(
                    (
                        f"{where}.job_types",
                        f"types with different scale factors ({sa}, {sb}) cannot share GPUs",
                    )
                )
        for w, rates in entry.throughput.items():
            if w not in inst.workers:
                out.append((f"{where}.throughput[{w!r}]", f"unknown GPU type {w!r}"))
            elif any(0 < r < limits.MIN_POSITIVE for r in rates):
                out.append((f"{where}.throughput[{w!r}]", RATE_RANGE))
    count = implied_pairs(inst, members)
    if count > MAX_PAIRS:
        out.append(("colocation", f"implies {count:,} job pairs; at most {MAX_PAIRS:,}"))
    return out

"""The fair-share round: the typed, validated form of an instance file.

Field-level checks come from pydantic; the cross-field checks (ids, tenants, GPU types, previous
allocations against the topology) live in the model validator of :class:`FairshareInstance`
and name the field path. See ``formulations/fairshare.md``.
"""

from __future__ import annotations

from enum import Enum
from functools import cached_property
from typing import Final, Literal

from pydantic import Field, model_validator

from schedopt.core import limits
from schedopt.core.errors import FieldProblems
from schedopt.core.limits import (
    Count,
    GpuCount,
    GpuSeconds,
    PositiveIterations,
    Seconds,
    StepSeconds,
    Weight,
)
from schedopt.core.model import FrozenModel
from schedopt.core.powers_of_two import is_power_of_two
from schedopt.core.pydantic_errors import describe
from schedopt.topology import Cluster
from schedopt.topology.spec import mixed_type_problems

PROBLEM: Final = "fairshare"


_Frozen = FrozenModel


class FairnessUnit(str, Enum):
    """What L1's minimum share is over (F1 in formulations/fairshare.md)."""

    TENANT = "tenant"  # tenants, whole-GPU quotas (the default)
    JOB = "job"  # every job, with its weight and fractional deserved share


class Tenant(_Frozen):
    """A tenant (virtual cluster, team) with its weight and its accounts over the window."""

    id: str = Field(min_length=1)
    weight: Weight
    guaranteed_gpus: GpuCount | None = Field(
        default=None, ge=0, description="hard guarantee (with guarantees_hard); default: quota"
    )
    deserved_gpu_s: GpuSeconds = Field(default=0.0, description="D_u")
    used_gpu_s: GpuSeconds = Field(default=0.0, description="U_u")


class Previous(_Frozen):
    """Where a job ran in the previous round: ``hosts`` maps host id → GPUs of ``gpu_type``."""

    gpu_type: str
    hosts: dict[str, int] = Field(description=f"GPU counts from 1 to {limits.MAX_GPUS:,}")

    @property
    def count(self) -> int:
        return sum(self.hosts.values())


class Job(_Frozen):
    id: str = Field(min_length=1)
    tenant: str
    throughput: dict[str, dict[int, float]] = Field(
        description="iterations/s per GPU type and allowed GPU count (gang size); counts from "
        f"1 to {limits.MAX_GPUS:,}, rates 0 (cannot run so, as Gavel's tables say) or in "
        f"[{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}]"
    )
    remaining_iterations: PositiveIterations
    previous: Previous | None = None
    restart_cost_s: Seconds = 0.0
    used_gpu_s: GpuSeconds = Field(
        default=0.0, description="attained service; U_j with fairness_unit 'job'"
    )
    weight: Weight | None = Field(
        default=None, description="w_j, only with fairness_unit 'job' (default there: 1)"
    )
    deserved_gpu_s: GpuSeconds = Field(
        default=0.0, description="D_j, only with fairness_unit 'job'"
    )

    @property
    def options(self) -> list[tuple[str, int, float]]:
        """(type, count, rate) of every way the job can run (a rate of 0 is none)."""
        return [
            (g, n, r) for g, table in self.throughput.items() for n, r in table.items() if r > 0
        ]

    @property
    def unit_weight(self) -> float:
        """w_j with fairness_unit 'job' (1 when not given)."""
        return 1.0 if self.weight is None else self.weight


class FairshareInstance(_Frozen):
    problem: Literal["fairshare"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = "fairshare"
    cluster: Cluster
    unavailable_gpus: tuple[str, ...] = ()
    round_s: StepSeconds
    guarantees_hard: bool = False
    max_preemptions: Count | None = None
    allow_multi_host: bool = True
    fragmentation_cost_s: Seconds = 1.0
    fairness_unit: FairnessUnit = FairnessUnit.TENANT
    tenants: tuple[Tenant, ...] = Field(min_length=1)
    jobs: tuple[Job, ...]

    @model_validator(mode="after")
    def _cross_checks(self) -> FairshareInstance:
        problems: list[tuple[str, str]] = [
            (f"cluster.{path}", reason)
            for path, reason in mixed_type_problems(self.cluster.to_spec())
        ]
        gpus = set(self.cluster.gpus())
        for i, gpu in enumerate(self.unavailable_gpus):
            if gpu not in gpus:
                problems.append((f"unavailable_gpus[{i}]", f"unknown GPU {gpu!r}"))
        tenants: dict[str, int] = {}
        for i, t in enumerate(self.tenants):
            if t.id in tenants:
                problems.append(
                    (
                        f"tenants[{i}].id",
                        f"duplicate tenant id {t.id!r} (also tenants[{tenants[t.id]}])",
                    )
                )
            tenants.setdefault(t.id, i)
        guaranteed = sum(t.guaranteed_gpus or 0 for t in self.tenants)
        if guaranteed > self.free_gpus:
            problems.append(
                ("tenants", f"guaranteed GPUs sum to {guaranteed} > {self.free_gpus} free GPUs")
            )
        types = self.cluster.gpu_types()
        seen: dict[str, int] = {}
        on_host: dict[str, int] = {}
        for i, job in enumerate(self.jobs):
            where = f"jobs[{i}]"
            if job.id in seen:
                problems.append(
                    (f"{where}.id", f"duplicate job id {job.id!r} (also jobs[{seen[job.id]}])")
                )
            seen.setdefault(job.id, i)
            if job.tenant not in tenants:
                problems.append((f"{where}.tenant", f"unknown tenant {job.tenant!r}"))
            problems.extend(self._check_job_accounts(where, job))
            problems.extend(self._check_throughput(where, job, types))
            if job.previous is not None:
                problems.extend(self._check_previous(where, job, on_host))
        for h, n in on_host.items():
            if n > len(self.cluster.gpus_on(h)):
                problems.append(
                    (
                        "jobs",
                        f"previous allocations put {n} GPUs on host {h!r}, which has "
                        f"{len(self.cluster.gpus_on(h))}",
                    )
                )
        if problems:
            raise FieldProblems(problems)
        return self

    def _check_job_accounts(self, where: str, job: Job) -> list[tuple[str, str]]:
        """F1: per-job weights and accounts are never silently ignored in tenant mode."""
        if self.fairness_unit is FairnessUnit.JOB:
            return []
        mode = self.fairness_unit.value
        need = f"needs fairness_unit {FairnessUnit.JOB.value!r} (it is {mode!r})"
        out = []
        if job.weight is not None:
            out.append((f"{where}.weight", f"a job weight {need}"))
        if job.deserved_gpu_s:
            out.append((f"{where}.deserved_gpu_s", f"a job's deserved GPU-time {need}"))
        return out

    def _check_throughput(self, where: str, job: Job, types: tuple[str, ...]) -> list:
        out = []
        if not job.throughput:
            out.append((f"{where}.throughput", "empty throughput table"))
        for g, table in job.throughput.items():
            here = f"{where}.throughput[{g!r}]"
            if g not in types:
                out.append((here, f"GPU type not in the cluster {list(types)}"))
            if not table:
                out.append((here, "empty throughput table"))
            for n, rate in table.items():
                if not 1 <= n <= limits.MAX_GPUS:
                    out.append(
                        (f"{here}[{describe(n)}]", f"GPU count must be in 1..{limits.MAX_GPUS:,}")
                    )
                elif not self.allow_multi_host and not is_power_of_two(n):
                    out.append(
                        (
                            f"{here}[{n}]",
                            "with allow_multi_host false, GPU counts are powers of two",
                        )
                    )
                if rate != 0 and not (limits.MIN_POSITIVE <= rate <= limits.MAX_RATE):
                    out.append(
                        (
                            f"{here}[{describe(n)}]",
                            f"throughput must be 0 (cannot run so) or in "
                            f"[{limits.MIN_POSITIVE:g}, {limits.MAX_RATE:g}] (got {rate:g})",
                        )
                    )
        if job.throughput and not out and not job.options:
            out.append((f"{where}.throughput", "every rate is 0: the job can run nowhere"))
        return out

    def _check_previous(self, where: str, job: Job, on_host: dict[str, int]) -> list:
        prev = job.previous
        assert prev is not None
        here = f"{where}.previous"
        out = []
        if not prev.hosts:
            out.append((f"{here}.hosts", "a previous allocation names at least one host"))
        hosts = set(self.cluster.hosts())
        for h, n in prev.hosts.items():
            if h not in hosts:
                out.append((f"{here}.hosts[{h!r}]", f"unknown host {h!r}"))
                continue
            if not 1 <= n <= limits.MAX_GPUS:
                out.append(
                    (
                        f"{here}.hosts[{h!r}]",
                        f"GPU count must be in 1..{limits.MAX_GPUS:,} (got {describe(n)})",
                    )
                )
            on = self.cluster.gpus_on(h)
            if on and self.cluster.gpu(on[0]).gpu_type != prev.gpu_type:
                out.append((f"{here}.hosts[{h!r}]", f"host {h!r} has no {prev.gpu_type} GPUs"))
            on_host[h] = on_host.get(h, 0) + max(n, 0)
        if not job.throughput.get(prev.gpu_type, {}).get(prev.count, 0.0) > 0:
            out.append(
                (f"{here}", f"{prev.count}×{prev.gpu_type} is not an allowed option of the job")
            )
        return out

    # --- derived views (computed once; the instance is frozen) ----------------------------
    @cached_property
    def free_by_host(self) -> dict[str, int]:
        return self.cluster.free_gpus_by_host(self.unavailable_gpus)

    @cached_property
    def host_type(self) -> dict[str, str | None]:
        return {h: self.cluster.host_type(h) for h in self.cluster.hosts()}

    @cached_property
    def free_gpus(self) -> int:
        return sum(self.free_by_host.values())

    def tenant(self, tenant_id: str) -> Tenant:
        return self.tenants[self.tenant_index[tenant_id]]

    @cached_property
    def tenant_index(self) -> dict[str, int]:
        return {t.id: i for i, t in enumerate(self.tenants)}

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.id: i for i, j in enumerate(self.jobs)}

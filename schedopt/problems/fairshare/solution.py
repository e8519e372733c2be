"""The round's decision: for every job, the GPU type and how many GPUs on which hosts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schedopt.core.limits import GpuCount
from schedopt.core.model import FrozenModel


class Allocation(FrozenModel):
    """One job's GPUs this round: ``hosts`` maps host id → GPUs of ``gpu_type`` (empty: idle)."""

    job_id: str
    gpu_type: str | None = None
    hosts: dict[str, GpuCount] = Field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(self.hosts.values())


class FairshareSolution(FrozenModel):
    problem: Literal["fairshare"] = "fairshare"
    allocations: tuple[Allocation, ...]

    def allocation(self, job_id: str) -> Allocation:
        for a in self.allocations:
            if a.job_id == job_id:
                return a
        raise KeyError(job_id)

    @property
    def running(self) -> tuple[str, ...]:
        return tuple(a.job_id for a in self.allocations if a.hosts)

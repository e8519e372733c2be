"""The admission decision: who is admitted, GPUs per job and slot, and the first-slot placement."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import Field

from schedopt.core import limits
from schedopt.core.limits import GpuCount
from schedopt.core.model import FrozenModel


class RejectReason(str, Enum):
    DEADLINE_UNREACHABLE_ALONE = "deadline_unreachable_alone"
    CONFLICTS_WITH_ADMITTED = "conflicts_with_admitted"


class Rejection(FrozenModel):
    reason: RejectReason
    proven: bool
    detail: str = ""


class JobPlan(FrozenModel):
    """One job's decision. ``gpus[t]`` GPUs of type ``gpu_types[t]`` in slot t (0 / None = idle)."""

    job_id: str
    admitted: bool | None = Field(
        default=None, description="SLO jobs: admitted (guaranteed) or not; None for best-effort"
    )
    tier: int | None = Field(
        default=None, ge=0, le=limits.MAX_COUNT, description="index of the guaranteed deadline tier"
    )
    gpus: tuple[GpuCount, ...]
    gpu_types: tuple[str | None, ...]
    rejection: Rejection | None = None


class AdmissionSolution(FrozenModel):
    problem: Literal["admission"] = "admission"
    plans: tuple[JobPlan, ...]
    placement: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="job id → the GPU ids it runs on in slot 0"
    )

    def plan(self, job_id: str) -> JobPlan:
        for p in self.plans:
            if p.job_id == job_id:
                return p
        raise KeyError(job_id)

    @property
    def admitted(self) -> tuple[str, ...]:
        return tuple(p.job_id for p in self.plans if p.admitted)

    @property
    def rejected(self) -> tuple[str, ...]:
        return tuple(p.job_id for p in self.plans if p.admitted is False)

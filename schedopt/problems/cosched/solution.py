"""The co-scheduling decision: groups with their hosts and cycle, and each job's explicit
periodic schedule (option and start of every phase). See ``formulations/cosched.md``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from schedopt.core.model import FrozenModel

from .instance import MAX_MS

_Frozen = FrozenModel
Start = Annotated[int, Field(ge=0, le=4 * MAX_MS)]


class Group(_Frozen):
    """A co-execution group: its hosts (``pool/i``), its members and its cycle time."""

    id: str
    hosts: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    cycle_ms: Annotated[int, Field(ge=0, le=4 * MAX_MS)]


class PhasePlan(_Frozen):
    """Phase ``k`` of the job runs on ``options[option]``; step ``i`` starts it at
    ``start_ms + i · cycle_ms`` (step 0's start, ms from the group's time origin)."""

    option: Annotated[int, Field(ge=0, le=64)]
    start_ms: Start


class JobPlan(_Frozen):
    job_id: str
    group: str
    phases: tuple[PhasePlan, ...]


class CoschedSolution(_Frozen):
    problem: Literal["cosched"] = "cosched"
    groups: tuple[Group, ...]
    plans: tuple[JobPlan, ...]

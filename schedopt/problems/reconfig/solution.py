"""The reconfiguration decision: the new plan (formulations/reconfig.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schedopt.core.model import FrozenModel

from .instance import Pipeline

__all__ = ["Pipeline", "ReconfigSolution"]


class ReconfigSolution(FrozenModel):
    """Pipelines (data-parallel replicas), each with its stages (layer ranges on TP groups)
    and its micro-batches per iteration. ``iteration_time_s``, when given, is the iteration
    time ``T`` (without the amortised recovery, as in ``metrics``), checked exactly (V8); every
    method states it."""

    problem: Literal["reconfig"] = "reconfig"
    pipelines: tuple[Pipeline, ...] = Field(min_length=0, max_length=2**20)
    iteration_time_s: float | None = Field(default=None, ge=0, le=1e9, allow_inf_nan=False)

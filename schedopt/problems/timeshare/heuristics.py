"""The heuristic of time shares: Gavel's isolated split, the reference finish-time fairness
measures against, optionally leaning each type's time towards the jobs fastest on it
(:class:`IsolatedParams`, tunable). Always feasible (formulations/timeshare.md), so ``auto``
always has an answer, and the exact LP's hint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from schedopt.core.options import SolveOptions, method_params
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .codec import shares_of
from .data import TimeshareData, build_data
from .instance import TimeshareInstance
from .solution import Shares, TimeshareSolution


@dataclass(frozen=True)
class IsolatedParams:
    """``speed_weight`` 0 is Gavel's isolated split (every job an equal part of every type);
    otherwise a type's GPUs are split in proportion to (T_jw / max_v T_jv)^speed_weight and
    none goes to a job that cannot run there: above 0 each job leans towards the types it runs
    fastest on, below 0 towards its slower ones (leaving the fast types to others)."""

    speed_weight: float = 0.0

    #: Ranges for Bayesian tuning (schedopt.tuning): field → (low, high).
    SPACE: ClassVar[dict[str, tuple[float, float]]] = {"speed_weight": (-2.0, 3.0)}

    def __post_init__(self) -> None:
        if not -16.0 <= self.speed_weight <= 16.0:
            raise ValueError(f"speed_weight must be in [-16, 16] (got {self.speed_weight})")


def weighted_split(data: TimeshareData, speed_weight: float) -> np.ndarray:
    """x (J × W): type w's GPUs split over the jobs in proportion to v_jw = (T_jw / max_v
    T_jv)^speed_weight (0^0 = 1: weight 0 is the isolated split), each job's time then scaled
    to at most the round. C1: Σ_j s_j x_jw = N_w Σ_j c_j v_jw / Σ_k c_k v_kw ≤ N_w (c the rows'
    job counts); C2 by the scaling. Equal to :meth:`TimeshareData.isolated_split` at 0."""
    if speed_weight == 0.0:
        return data.isolated_split()
    fastest = np.maximum(data.throughput.max(axis=1, keepdims=True), 1e-300)
    with np.errstate(divide="ignore"):
        v = np.where(data.throughput > 0, (data.throughput / fastest) ** speed_weight, 0.0)
    per_type = (data.counts[:, None] * v).sum(axis=0)
    x = np.divide(
        data.capacity[None, :] * v,
        data.scale[:, None] * per_type[None, :],
        out=np.zeros_like(v),
        where=per_type[None, :] > 0,
    )
    return x / np.maximum(1.0, x.sum(axis=1))[:, None]


def solve_isolated(inst: TimeshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    params = method_params(IsolatedParams, options.params)
    if not inst.jobs:
        return Outcome(Status.FEASIBLE, TimeshareSolution.of_arrays(Shares.empty()))
    data = build_data(inst, deadline, pairs=False)  # jobs alone: no pair is read
    cols = data.singles
    x = weighted_split(data, params.speed_weight)[cols.first, cols.type]
    return Outcome(Status.FEASIBLE, shares_of(data, cols, np.asarray(x)))


HEURISTICS = ("heuristic:isolated",)

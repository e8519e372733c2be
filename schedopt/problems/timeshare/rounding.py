"""Whole GPUs for one round, from the fractions (formulations/timeshare.md, "Whole GPUs").

Gavel's round scheduler: a combination's priority on a type is its fraction there divided by
the fraction of rounds it has received so far (infinite if none yet); combinations are placed
in priority order while their members are free and the type has ``s_c`` GPUs left. Over many
rounds the rounds received approach the fractions; the *rounding loss* reported is how far
the policy's level-1 value of the rounds so far is from the fractions' value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .instance import TimeshareInstance
from .solution import Share, Shares, TimeshareSolution
from .validate import evaluate

Combination = tuple[str, str | None, str]  # (job, with_job, worker type)


@dataclass(frozen=True)
class Placement:
    """``jobs`` run together this round on ``gpus`` GPUs of ``worker_type``."""

    jobs: tuple[str, ...]
    worker_type: str
    gpus: int

    @property
    def combination(self) -> Combination:
        """The share this placement carries out, as ``received`` counts it."""
        return (self.jobs[0], self.jobs[1] if len(self.jobs) > 1 else None, self.worker_type)


@dataclass(frozen=True)
class WholeGpuRound:
    placements: tuple[Placement, ...]
    #: Level 1 of the fractions, and of the rounds received so far including this one.
    fractional_value: float
    rounded_value: float
    #: Rounds each combination has received, this one included (the next round's ``received``).
    received: dict[Combination, int]

    @property
    def rounding_loss(self) -> float:
        return self.fractional_value - self.rounded_value

    @property
    def gpus_used(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.placements:
            out[p.worker_type] = out.get(p.worker_type, 0) + p.gpus
        return out


def place(
    inst: TimeshareInstance,
    sol: TimeshareSolution,
    received: Mapping[Combination, int] | None = None,
    rounds: int = 0,
) -> WholeGpuRound:
    """The round's placements; ``received[c]`` rounds combination c got out of ``rounds``."""
    received = received or {}
    scale = {j.id: j.scale_factor for j in inst.jobs}
    order = []
    for s in sol.shares:
        key = (s.job, s.with_job, s.worker_type)
        got = received.get(key, 0) / rounds if rounds else 0.0
        priority = s.fraction / got if got else math.inf
        order.append((-priority, -s.fraction, key))
    # ties broken by the names (a job alone, with_job None, before its pairs)
    order.sort(key=lambda e: (e[0], e[1], e[2][0], e[2][1] or "", e[2][2]))
    free = dict(inst.workers)
    busy: set[str] = set()
    placed = []
    for _, _, (job, other, w) in order:
        members = (job,) if other is None else (job, other)
        if busy.intersection(members) or free[w] < scale[job]:
            continue
        free[w] -= scale[job]
        busy.update(members)
        placed.append(Placement(members, w, scale[job]))
    history = dict(received)
    for p in placed:
        history[p.combination] = history.get(p.combination, 0) + 1
    averaged = TimeshareSolution.of_arrays(
        Shares.of(
            Share(job=j, with_job=o, worker_type=w, fraction=n / (rounds + 1))
            for (j, o, w), n in history.items()
            if n
        )
    )
    return WholeGpuRound(
        tuple(placed), evaluate(inst, sol)[0], evaluate(inst, averaged)[0], history
    )

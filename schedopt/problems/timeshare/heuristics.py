"""The heuristic of time shares: Gavel's isolated split, the reference finish-time fairness
measures against. Always feasible (formulations/timeshare.md), so ``auto`` always has an
answer, and the exact LP's hint."""

from __future__ import annotations

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .codec import shares_of
from .data import build_data
from .instance import TimeshareInstance
from .solution import TimeshareSolution


def solve_isolated(inst: TimeshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    if not inst.jobs:
        return Outcome(Status.FEASIBLE, TimeshareSolution(shares=()))
    data = build_data(inst, deadline, pairs=False)  # jobs alone: no pair is read
    cols = data.singles
    x = data.isolated_split()[cols.first, cols.type]
    return Outcome(Status.FEASIBLE, shares_of(data, cols, np.asarray(x)))


HEURISTICS = ("heuristic:isolated",)

"""What every emitter offers the lexicographic driver: one solver model kept across levels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.status import Status

from .terms import Backend, Level, RowBlock


@dataclass(frozen=True)
class LevelRun:
    """One solve of one level. ``objective`` and ``bound`` are in the level's own units
    (a CP-SAT scale divided back); ``values`` is the point found, one entry per column."""

    status: Status
    objective: float | None
    bound: float | None
    values: np.ndarray | None
    stats: Mapping[str, float | str] = field(default_factory=dict)
    #: Seconds this run spent outside the solver's own clock (handing over, reading back).
    handover_s: float = 0.0


class Session(Protocol):
    """A model emitted for one back-end. Levels are solved in turn on the same solver model:
    a solved level is fixed by :meth:`add_block`, the next objective set by :meth:`set_level`."""

    #: The method's name ("cpsat", "milp:highs", "milp:cbc").
    method: str
    #: Which blocks it receives (RowBlock.backends).
    kind: Backend

    def set_level(self, level: Level) -> None: ...

    def add_block(self, block: RowBlock) -> None: ...

    def set_hint(self, values: np.ndarray | None) -> None: ...

    def run(self, time_limit_s: float, options: SolveOptions) -> LevelRun: ...

    def close(self) -> None: ...


def snap_integers(values: np.ndarray, integer: np.ndarray, lb: np.ndarray, ub: np.ndarray):
    """A solver's point as a start for the next level: inside the bounds (solvers return values
    a tolerance outside them; CBC refuses such a start), integer columns rounded."""
    out = np.clip(values, lb, ub)
    out[integer.astype(bool)] = np.round(out[integer.astype(bool)])
    return out

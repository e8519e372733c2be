"""Lexicographic objectives by sequential solves ("How the order is kept" in the formulation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Fraction of the remaining time each level may use. L1 decides the lexicographic order, so it
#: gets most (a proven level stops early and leaves the rest); then L2 half, L3 the rest.
LEVEL_TIME_SHARE = (0.8, 0.5, 1.0)


def level_time_shares(levels: int, first: float = 0.8) -> tuple[float, ...]:
    """Time shares for any number of levels: ``first`` for L1, half of what is left for each
    middle level, everything left for the last (3 levels: :data:`LEVEL_TIME_SHARE`)."""
    if levels <= 1:
        return (1.0,)
    return (first, *([0.5] * (levels - 2)), 1.0)


@dataclass(frozen=True)
class Level:
    name: str
    expr: Any
    maximize: bool

"""Lexicographic objectives by sequential solves ("How the order is kept" in the formulation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Fraction of the remaining time each level may use: L1 half, L2 half of the rest, L3 the rest.
LEVEL_TIME_SHARE = (0.5, 0.5, 1.0)


@dataclass(frozen=True)
class Level:
    name: str
    expr: Any
    maximize: bool

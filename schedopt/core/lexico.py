"""Lexicographic objectives by sequential solves: the time each level gets.

The driver itself is ``schedopt.model.lexico``; core keeps only the share rule, which
``auto`` and the problems' data modules read too.
"""

from __future__ import annotations


def level_time_shares(levels: int, first: float = 0.8) -> tuple[float, ...]:
    """Fraction of the remaining time each level may use: ``first`` for L1 (it decides the
    lexicographic order, and a proven level stops early and leaves the rest), half of what is
    left for each middle level, everything left for the last (3 levels: 0.8, 0.5, 1.0)."""
    if levels <= 1:
        return (1.0,)
    return (first, *([0.5] * (levels - 2)), 1.0)

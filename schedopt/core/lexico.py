"""Lexicographic objectives by sequential solves ("How the order is kept" in the formulation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .stopping import Deadline

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


#: Handing a PuLP model to HiGHS (and collecting its variables, and reading the values back)
#: costs up to 2.2 times what building it did (measured: admission, contested 1,024 GPUs ×
#: 3,200 jobs, 2.4 s of build against 5.3 s of hand-over; fair share 16,384 GPUs × 20,000 jobs,
#: 4.5 s against 4.5 s): a share that follows the machine's load as the build did. Issue 8's
#: direct highspy emitter removes most of it.
HANDOVER_PER_BUILD = 2.5


def no_time_to_hand_over(deadline: Deadline, build_s: float) -> str | None:
    """Why the model just built (in ``build_s``) cannot be handed to the solver and solved in
    the time left, or None. Checked once before the first level: the hand-over cannot be
    interrupted, so an exact method that would overrun returns NO_SOLUTION (or its hint)."""
    need = HANDOVER_PER_BUILD * build_s + 0.05
    left = deadline.remaining()
    if left >= need:
        return None
    return (
        f"not enough time to hand the model to the solver (about {need:.2f} s, judged from its "
        f"build time; {left:.2f} s left)"
    )

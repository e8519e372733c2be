"""Why a model is infeasible: a smallest conflicting set, by a deletion filter.

A problem whose infeasibility comes from items that cannot all be served together (admitted
jobs and their deadlines; co-scheduled jobs and their SLOs) names a set of them that is
infeasible on its own: each item is dropped in turn and kept out when the rest is still
infeasible. Each check is a feasibility solve with its own small time limit; the filter stops
when checks or time run out and then says the set may not be minimal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from schedopt.core.stopping import Deadline

Item = TypeVar("Item")

#: Seconds at most per feasibility check, and checks at most.
CHECK_TIME_S = 1.0
MAX_CHECKS = 40


@dataclass(frozen=True)
class Conflict(Generic[Item]):
    items: list[Item]
    #: Every item was tried: no proper subset found by dropping one is infeasible.
    minimal: bool
    checks: int


class CheckBudget:
    """Checks left and time left (each check needs ``CHECK_TIME_S``, with as much to spare)."""

    def __init__(self, deadline: Deadline, spare: float = 1.0, checks: int = 0):
        self.deadline, self.spare, self.checks = deadline, spare, checks

    def take(self) -> bool:
        if self.checks >= MAX_CHECKS or self.deadline.remaining() < self.spare * CHECK_TIME_S:
            return False
        self.checks += 1
        return True


def deletion_filter(
    items: Sequence[Item],
    feasible: Callable[[list[Item]], bool | None],
    budget: CheckBudget,
) -> Conflict[Item]:
    """A conflicting subset of ``items`` (all of them infeasible together): drop each in turn
    and keep it out when ``feasible(rest)`` is False (the rest still conflicts). True keeps
    it; None (the check did not decide in its time) keeps it too, and the set is then not
    called minimal."""
    core = list(items)
    complete = True
    for item in list(items):
        if not budget.take():
            complete = False
            break
        rest = [x for x in core if x is not item]
        if not rest:
            continue
        verdict = feasible(rest)
        if verdict is False:
            core = rest
        elif verdict is None:  # kept without a proof that the rest fits
            complete = False
    return Conflict(core, complete, budget.checks)

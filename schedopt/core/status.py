"""Solve statuses. A status is a claim: OPTIMAL is never reported without a proof."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """What a method can honestly say about its result.

    - ``OPTIMAL``: a solution whose optimality (within the requested ``mip_gap``, at every
      lexicographic level) was proven by an exact back-end.
    - ``FEASIBLE``: a validated solution, optimality not proven (limit reached, or a heuristic).
    - ``INFEASIBLE``: proven that no solution exists; ``Result.explanation`` says why.
    - ``NO_SOLUTION``: the limits were reached with no solution and no proof of infeasibility.
    - ``INVALID``: the input could not be solved as given (used by the CLI and drivers that
      report rather than raise; ``solve()`` itself raises ``InvalidInstanceError``).
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    NO_SOLUTION = "no_solution"
    INVALID = "invalid"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE)

"""The one result type every method of every problem returns."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

from .errors import InfeasibleError, NoSolutionError
from .status import Status

S = TypeVar("S")


class Sense(str, Enum):
    MAXIMIZE = "max"
    MINIMIZE = "min"


@dataclass(frozen=True)
class ObjectiveTerm:
    """One level of a (lexicographic) objective, in the instance's own units."""

    name: str
    sense: Sense
    unit: str = ""


@dataclass(frozen=True)
class Violation:
    """A constraint of the formulation that a solution breaks, found by a validator."""

    constraint_id: str
    message: str

    def __str__(self) -> str:
        return f"[{self.constraint_id}] {self.message}"


def lex_better(
    a: Sequence[float], b: Sequence[float], terms: Sequence[ObjectiveTerm], rel_tol: float = 1e-9
) -> bool:
    """True when objective vector ``a`` is lexicographically strictly better than ``b``."""
    for x, y, term in zip(a, b, terms, strict=True):
        tol = rel_tol * max(1.0, abs(x), abs(y))
        if abs(x - y) <= tol:
            continue
        return x > y if term.sense is Sense.MAXIMIZE else x < y
    return False


def relative_gap(objective: float | None, bound: float | None, sense: Sense) -> float | None:
    """Relative gap between an incumbent and a bound, >= 0; None when either is unknown."""
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    diff = bound - objective if sense is Sense.MAXIMIZE else objective - bound
    diff = max(diff, 0.0)
    if diff <= 1e-9 * max(1.0, abs(bound)):
        return 0.0
    return diff / max(abs(bound), abs(objective), 1e-9)


@dataclass(frozen=True)
class Result(Generic[S]):
    """What ``schedopt.solve`` returns: status, objective levels, bound, gap, solution, timing.

    ``objectives`` holds every lexicographic level in the order of ``terms``; ``objective`` is
    the first. ``best_bound`` and ``gap`` refer to the first level. The solution, when present,
    has passed the problem's independent validator; ``metrics`` are what that validator measured.
    """

    problem: str
    status: Status
    method: str
    terms: tuple[ObjectiveTerm, ...]
    objectives: tuple[float, ...] | None
    best_bound: float | None
    solution: S | None
    seed: int
    build_s: float
    solve_s: float
    wall_s: float
    time_limit_s: float
    explanation: str | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)
    #: What the method can resume from next round (pass it as ``warm_start``), or None.
    warm_start: Any = field(default=None, repr=False, compare=False)

    @property
    def objective(self) -> float | None:
        return None if self.objectives is None else self.objectives[0]

    @property
    def gap(self) -> float | None:
        if self.status is Status.OPTIMAL and self.best_bound is None:
            return 0.0
        return relative_gap(self.objective, self.best_bound, self.terms[0].sense)

    def raise_for_status(self) -> Result[S]:
        """Return self if there is a solution; raise InfeasibleError / NoSolutionError if not."""
        if self.status is Status.INFEASIBLE:
            raise InfeasibleError(self.explanation or "the instance is infeasible")
        if not self.status.has_solution:
            raise NoSolutionError(
                self.explanation or f"no solution within {self.time_limit_s:g} s ({self.method})"
            )
        return self

    def status_line(self) -> str:
        """The status in capitals, and the space its proof holds over when a method narrowed
        it (``stats["proven_over"]``, e.g. reconfig's "template plan space")."""
        over = self.stats.get("proven_over")
        if over and self.status in (Status.OPTIMAL, Status.INFEASIBLE):
            return f"{self.status.value.upper()} (over the {over})"
        return self.status.value.upper()

    def summary(self) -> str:
        """A few lines a person wants to read: status, objective levels, bound, gap, time."""

        def fmt(x: float | None) -> str:
            return "-" if x is None else f"{x:.6g}"

        lines = [f"{self.problem} · {self.method} · {self.status_line()}"]
        if self.objectives is not None:
            for term, value in zip(self.terms, self.objectives, strict=True):
                unit = f" {term.unit}" if term.unit else ""
                lines.append(f"  {term.sense.value} {term.name:<28} {fmt(value)}{unit}")
        gap = self.gap
        lines.append(
            f"  bound {fmt(self.best_bound)}   gap {'-' if gap is None else f'{100 * gap:.2f}%'}"
        )
        lines.append(
            f"  time  build {self.build_s:.3f} s  solve {self.solve_s:.3f} s  "
            f"wall {self.wall_s:.3f} s  (limit {self.time_limit_s:g} s, seed {self.seed})"
        )
        for key, value in self.metrics.items():
            lines.append(f"  {key:<34} {fmt(value)}")
        if self.explanation:
            lines.append(f"  note: {self.explanation}")
        return "\n".join(lines)

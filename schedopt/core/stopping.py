"""Stopping criteria: a wall-clock deadline shared by every stage of one ``solve`` call."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .errors import SchedoptError


class DeadlineReached(SchedoptError):
    """The deadline passed in a phase that has nothing to return yet (building data or a model,
    keeping earlier guarantees). Raised by :meth:`Deadline.check` inside a method;
    ``schedopt.solve`` turns it into an honest ``NO_SOLUTION`` (or the caller's hint), so it
    never reaches the caller."""

    def __init__(self, phase: str):
        self.phase = phase
        super().__init__(f"the time limit was reached while {phase}")


@dataclass(frozen=True)
class Deadline:
    """An absolute point in ``time.perf_counter()`` time by which a solve must return."""

    end: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.perf_counter() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def check(self, phase: str) -> None:
        """Raise :class:`DeadlineReached` naming ``phase`` if the deadline has passed. Cheap
        (one clock read): loops over jobs call it every few hundred items."""
        if time.perf_counter() >= self.end:
            raise DeadlineReached(phase)

    def earlier(self, seconds: float) -> Deadline:
        """This deadline moved ``seconds`` earlier (time kept back for a later phase)."""
        return Deadline(self.end - max(0.0, seconds))

    def share(self, fraction: float, reserve_s: float = 0.0) -> float:
        """Seconds for one stage: ``fraction`` of what remains after keeping ``reserve_s``."""
        return max(0.0, (self.remaining() - reserve_s) * fraction)


class Ticker:
    """Checks ``deadline`` every ``every`` calls, for loops that build data or a model: the
    check is one clock read, so a loop over 100,000 jobs stops within a few hundred of them."""

    __slots__ = ("_count", "_deadline", "_every", "_phase")

    def __init__(self, deadline: Deadline | None, phase: str, every: int = 256):
        self._deadline, self._phase, self._every, self._count = deadline, phase, every, 0

    def __call__(self) -> None:
        self._count += 1
        if self._deadline is not None and self._count % self._every == 0:
            self._deadline.check(self._phase)


def runaway_cap_s(time_limit_s: float) -> float:
    """The wall-clock cap of a deterministic run (SolveOptions.deterministic): 10 × the limit
    + 10 s, well beyond what the run's fixed work takes on a machine 20 × slower."""
    return 10 * time_limit_s + 10

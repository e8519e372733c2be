"""Stopping criteria: a wall-clock deadline shared by every stage of one ``solve`` call."""

from __future__ import annotations

import time
from dataclasses import dataclass


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

    def share(self, fraction: float, reserve_s: float = 0.0) -> float:
        """Seconds for one stage: ``fraction`` of what remains after keeping ``reserve_s``."""
        return max(0.0, (self.remaining() - reserve_s) * fraction)

"""What one MILP run reports, whichever solver made it (shared by the HiGHS and CBC adapters)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from schedopt.core.status import Status


class MilpSolver(str, Enum):
    HIGHS = "highs"
    CBC = "cbc"


#: Stats keys a caller should copy into its outcome under the level's name (see ``surfaced``).
SURFACED_STATS = ("cbc_end", "cbc_log_tail")


@dataclass(frozen=True)
class MilpRun:
    status: Status
    objective: float | None
    bound: float | None
    stats: Mapping[str, float | str] = field(default_factory=dict)

    @property
    def has_solution(self) -> bool:
        return self.status.has_solution

    def surfaced(self, level: str) -> dict[str, float | str]:
        """What a user should see in the result's stats about this run, keyed by ``level``:
        how CBC ended when it did not end normally, and the last lines of its log."""
        return {
            f"{level}_{k}": self.stats[k]
            for k in SURFACED_STATS
            if self.stats.get(k, "normal") != "normal"
        }

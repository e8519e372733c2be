"""The round's decision: the fraction of time each job (or pair) runs on each GPU type."""

from __future__ import annotations

from typing import Literal

from schedopt.core.limits import Fraction
from schedopt.core.model import FrozenModel


class Share(FrozenModel):
    """``job`` (with ``with_job`` when two jobs share GPUs) runs ``fraction`` of the round on
    its scale factor's GPUs of ``worker_type``."""

    job: str
    worker_type: str
    fraction: Fraction
    with_job: str | None = None

    @property
    def members(self) -> tuple[str, ...]:
        return (self.job,) if self.with_job is None else (self.job, self.with_job)


class TimeshareSolution(FrozenModel):
    problem: Literal["timeshare"] = "timeshare"
    #: Positive fractions only; a job with none is not scheduled this round.
    shares: tuple[Share, ...]

    def allocation(self) -> dict[str, dict[str, float]]:
        """Job → type → fraction of the round, alone (Gavel's output for a single job)."""
        out: dict[str, dict[str, float]] = {}
        for s in self.shares:
            if s.with_job is None:
                out.setdefault(s.job, {})[s.worker_type] = s.fraction
        return out

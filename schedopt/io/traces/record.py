"""The trace record every loader returns: one job as a trace describes it, in seconds.

This module is deliberately independent of the problem packages (``schedopt.problems``): a
trace job carries its kind as a plain string, and a problem's driver turns it into that
problem's own job type (see ``schedopt.problems.admission.driver``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

#: The job kinds a trace can carry (the same strings as ``admission.JobKind``).
KINDS = ("strict_slo", "soft_slo", "best_effort")


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace.

    - ``submit_s``: submission time, seconds from the start of the trace;
    - ``num_gpus``: the gang size the job ran with (a power of two after loading);
    - ``iterations``: work, in iterations; ``duration_s``: its run time at ``num_gpus``, so
      ``iterations / duration_s`` is its throughput there;
    - ``kind``: ``"strict_slo"`` (exactly one deadline), ``"soft_slo"`` (one or more tiers) or
      ``"best_effort"`` (no deadline);
    - ``deadlines``: ``(seconds after submit, value)`` pairs, increasing deadlines and
      non-increasing values;
    - ``model``: the model name when the trace gives one, else ``""``.
    """

    id: str
    tenant: str
    submit_s: float
    num_gpus: int
    iterations: int
    duration_s: float
    kind: str
    deadlines: tuple[tuple[float, float], ...] = ()
    model: str = ""

    def __post_init__(self) -> None:
        problems = []
        if self.kind not in KINDS:
            problems.append(f"kind must be one of {KINDS} (got {self.kind!r})")
        if not (math.isfinite(self.submit_s) and self.submit_s >= 0):
            problems.append(f"submit_s must be >= 0 (got {self.submit_s})")
        if self.num_gpus < 1:
            problems.append(f"num_gpus must be >= 1 (got {self.num_gpus})")
        if self.iterations < 1:
            problems.append(f"iterations must be >= 1 (got {self.iterations})")
        if not (math.isfinite(self.duration_s) and self.duration_s > 0):
            problems.append(f"duration_s must be > 0 (got {self.duration_s})")
        want = {"strict_slo": "exactly one deadline", "soft_slo": "at least one deadline"}
        n = len(self.deadlines)
        if (
            (self.kind == "strict_slo" and n != 1)
            or (self.kind == "soft_slo" and n < 1)
            or (self.kind == "best_effort" and n)
        ):
            problems.append(f"a {self.kind} job has {want.get(self.kind, 'no deadlines')}")
        for k, (d, v) in enumerate(self.deadlines):
            if not (d > 0 and v > 0 and math.isfinite(d) and math.isfinite(v)):
                problems.append(f"deadlines[{k}] must be positive (got {(d, v)})")
            if k and d <= self.deadlines[k - 1][0]:
                problems.append(f"deadlines[{k}]: deadlines must increase")
            if k and v > self.deadlines[k - 1][1]:
                problems.append(f"deadlines[{k}]: a later tier cannot be worth more")
        if problems:
            raise ValueError(f"job {self.id!r}: " + "; ".join(problems))

    @property
    def is_slo(self) -> bool:
        return self.kind != "best_effort"

    @property
    def rate(self) -> float:
        """Throughput at ``num_gpus``, iterations/s."""
        return self.iterations / self.duration_s


@dataclass(frozen=True)
class TraceLoad:
    """What a loader returns: the jobs, and how many rows it skipped or adjusted, by reason."""

    jobs: list[TraceJob]
    skipped: dict[str, int] = field(default_factory=dict)
    adjusted: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[TraceJob]:
        return iter(self.jobs)

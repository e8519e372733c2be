"""Recount a replay's deadline outcomes from the trace's own numbers (issue 7, item 2).

Independent of the driver's bookkeeping (its ``left`` counters, outcomes and fallbacks): given
the trace jobs, the GPUs each job actually ran on per slot (``ReplayReport.allocations``) and the
deadline it was guaranteed (``ReplayReport.guarantees``), progress is recomputed as whole
iterations per slot, ``⌊iterations/duration_s · (n/num_gpus)^α · slot_s⌋`` (the formulation's
progress; α the driver's scaling exponent, which only matters off the trace's own GPU count),
and each guaranteed job is classified:

- ``met``: its work is done by the end of a slot that ends by the deadline;
- ``late``: kept but not done by the deadline (finished after it, or still running past it);
- ``dropped``: the driver gave the guarantee up (``ReplayReport.dropped`` says why) — counted
  apart from late, whether or not the job happened to finish in time;
- ``pending``: not done yet and the replay stopped before the deadline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from schedopt.io.traces.record import TraceJob

from .driver import ReplayReport


@dataclass(frozen=True)
class ReplayCheck:
    admitted: int
    met: int
    late: int
    dropped: int
    pending: int
    late_ids: tuple[str, ...]
    dropped_why: dict[str, str]

    def summary(self) -> str:
        return (
            f"admitted {self.admitted}: met {self.met}, late {self.late}, "
            f"dropped {self.dropped}, pending {self.pending}"
        )


def finish_time(
    job: TraceJob, ran: Sequence[tuple[float, int]], slot_s: float, exponent: float
) -> float | None:
    """End of the slot in which ``job``'s work is done, from its allocations; None if never."""
    done = 0
    for start, n in sorted(ran):
        rate = job.iterations / job.duration_s * (n / job.num_gpus) ** exponent
        done += math.floor(rate * slot_s + 1e-9)
        if done >= job.iterations:
            return start + slot_s
    return None


def check_replay(
    jobs: Sequence[TraceJob], report: ReplayReport, *, slot_s: float, exponent: float
) -> ReplayCheck:
    by_id = {j.id: j for j in jobs}
    end = max((r.time_s + slot_s for r in report.rounds), default=0.0)
    met = late = pending = 0
    late_ids: list[str] = []
    for job_id, deadline in sorted(report.guarantees.items()):
        if job_id in report.dropped:
            continue
        done = finish_time(by_id[job_id], report.allocations.get(job_id, ()), slot_s, exponent)
        if done is not None and done <= deadline + 1e-6:
            met += 1
        elif done is not None or end > deadline + 1e-6:
            late, late_ids = late + 1, [*late_ids, job_id]
        else:
            pending += 1
    return ReplayCheck(
        admitted=len(report.guarantees),
        met=met,
        late=late,
        dropped=len(report.dropped),
        pending=pending,
        late_ids=tuple(late_ids),
        dropped_why=dict(report.dropped),
    )

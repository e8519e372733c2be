"""``schedopt solve``'s table for a time-share round: each job's fractions per GPU type."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from schedopt.core.result import Result

from .instance import TimeshareInstance
from .solution import TimeshareSolution

#: Rows shown before the table is cut (the summary line still counts every job).
MAX_ROWS = 40


def render(console: Console, inst: TimeshareInstance, result: Result[TimeshareSolution]) -> None:
    sol = result.solution
    if sol is None:
        return
    types = inst.worker_types
    table = Table(title=f"{inst.policy.value}: fraction of the round per GPU type")
    table.add_column("job")
    for w in types:
        table.add_column(w, justify="right")
    table.add_column("shared with", justify="left")
    alone = sol.allocation()
    shared: dict[str, list[str]] = {}
    for s in sol.shares:
        if s.with_job is not None:
            for a, b in ((s.job, s.with_job), (s.with_job, s.job)):
                shared.setdefault(a, []).append(f"{b} {s.worker_type} {s.fraction:.3f}")
    for job in inst.jobs[:MAX_ROWS]:
        row = alone.get(job.id, {})
        table.add_row(
            job.id,
            *(f"{row[w]:.3f}" if w in row else "" for w in types),
            ", ".join(shared.get(job.id, [])),
        )
    console.print(table)
    if len(inst.jobs) > MAX_ROWS:
        console.print(f"... {len(inst.jobs) - MAX_ROWS} more jobs (--json for all)")


def info(inst: TimeshareInstance) -> list[tuple[str, str]]:
    """``schedopt info``: the policy and the co-located pairs."""
    pairs = f"{len(inst.pairs)} pairs" if inst.pairs else "none listed"
    if inst.colocation:
        pairs += f", co-location table of {len(inst.colocation)} entries"
    return [("policy", inst.policy.value), ("co-location", pairs)]

"""The fair-share allocation as a table by tenant: what ``schedopt solve`` prints under the
objectives (the problem's ``ProblemSpec.render``). Rich is imported when a table is drawn, not
with the library."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .instance import FairnessUnit, FairshareInstance
from .solution import Allocation, FairshareSolution

if TYPE_CHECKING:
    from rich.console import Console

    from schedopt.core.result import Result

#: Rows of the per-tenant table before "… N more".
MAX_ROWS = 40


def render(console: Console, inst: FairshareInstance, result: Result[FairshareSolution]) -> None:
    """Print one row a tenant: weight, long-term GPU-time fairness share (in per-job mode the
    lowest of its jobs'), GPUs, jobs running."""
    from rich.markup import escape
    from rich.table import Table

    assert result.solution is not None, "render is called for a result with a solution"
    by_tenant: dict[str, list[Allocation]] = {}
    tenant_of = {j.id: j.tenant for j in inst.jobs}
    for alloc in result.solution.allocations:
        by_tenant.setdefault(tenant_of.get(alloc.job_id, "?"), []).append(alloc)
    table = Table(title="allocation by tenant", title_justify="left", show_edge=False)
    per_job = inst.fairness_unit is FairnessUnit.JOB
    share_col = "lowest job LTGF" if per_job else "LTGF share"
    for col in ("tenant", "weight", share_col, "GPUs", "jobs running"):
        table.add_column(col, no_wrap=True, justify="left" if col == "tenant" else "right")
    for t in inst.tenants[:MAX_ROWS]:
        allocs = by_tenant.get(t.id, [])
        gpus = sum(sum(a.hosts.values()) for a in allocs)
        running = sum(1 for a in allocs if a.hosts)
        units = [a.job_id for a in allocs] if per_job else [t.id]
        shares = [result.metrics[k] for u in units if (k := f"share[{u}]") in result.metrics]
        share = min(shares, default=None)
        table.add_row(
            escape(t.id),
            f"{t.weight:g}",
            "-" if share is None else f"{share:.4g}",
            str(gpus),
            f"{running}/{len(allocs)}",
        )
    console.print(table)
    if len(inst.tenants) > MAX_ROWS:
        console.print(f"… {len(inst.tenants) - MAX_ROWS} more tenants (use --json or --out)")


def info(inst: FairshareInstance) -> list[tuple[str, str]]:
    """``schedopt info``: the tenants and their weights, the fairness unit, the round."""
    weights = ", ".join(f"{t.id} ×{t.weight:g}" for t in inst.tenants[:8])
    more = " …" if len(inst.tenants) > 8 else ""
    return [
        ("tenants", f"{len(inst.tenants)} ({weights}{more})"),
        ("fairness over", f"every {inst.fairness_unit.value}; round {inst.round_s:g} s"),
    ]

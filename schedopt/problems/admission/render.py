"""The admission decisions as a table: what ``schedopt solve`` prints under the objectives (the
problem's ``ProblemSpec.render``). Rich is imported when a table is drawn, not with the library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .instance import AdmissionInstance
from .solution import AdmissionSolution

if TYPE_CHECKING:
    from rich.console import Console

    from schedopt.core.result import Result

#: Rows of the per-job decision table before "… N more".
MAX_ROWS = 40
#: Slots shown in the compact GPUs-per-slot string before it is cut short.
MAX_SLOTS_SHOWN = 24


def _gpus_string(gpus: tuple[int, ...]) -> str:
    shown = " ".join(str(n) for n in gpus[:MAX_SLOTS_SHOWN])
    if len(gpus) > MAX_SLOTS_SHOWN:
        shown += f" … (+{len(gpus) - MAX_SLOTS_SHOWN} slots)"
    return shown


def render(console: Console, inst: AdmissionInstance, result: Result[AdmissionSolution]) -> None:
    """Print one row a job (decision, guaranteed tier, GPUs per slot, why rejected), the
    rejection details and where slot 0 is placed."""
    from rich.markup import escape
    from rich.table import Table

    sol = result.solution
    assert sol is not None, "render is called for a result with a solution"
    several_types = len(inst.cluster.gpu_types()) > 1
    table = Table(title="decisions", title_justify="left", show_edge=False, pad_edge=False)
    plans = sol.plans
    shown = plans[:MAX_ROWS]
    gpu_strings = [_gpus_string(plan.gpus) for plan in shown]
    table.add_column("job", no_wrap=True, min_width=max((len(p.job_id) for p in shown), default=3))
    table.add_column("kind", no_wrap=True)
    table.add_column("decision", no_wrap=True)
    table.add_column("tier", no_wrap=True)
    table.add_column("GPUs per slot", no_wrap=True, min_width=max(map(len, gpu_strings), default=3))
    if several_types:
        table.add_column("types", no_wrap=True)
    any_rejected = any(plan.rejection is not None for plan in shown)
    if any_rejected:
        table.add_column("reason", overflow="fold")
    details: list[str] = []
    for plan, gpus in zip(shown, gpu_strings, strict=True):
        job = inst.job(plan.job_id) if plan.job_id in inst.job_index else None
        kind = job.kind.value if job is not None else "?"
        if plan.admitted is None:
            decision = "[cyan]best-effort[/]"
        elif plan.admitted:
            decision = "[green]admitted[/]" + (
                " (kept)" if job is not None and job.admitted else ""
            )
        else:
            decision = "[red]rejected[/]"
        tier = ""
        if plan.admitted and plan.tier is not None and job is not None:
            t = job.deadlines[plan.tier]
            tier = f"{plan.tier}: ≤{t.deadline_s:g} s"
        reason = ""
        if plan.rejection is not None:
            rej = plan.rejection
            reason = rej.reason.value.replace("_", " ") + (" (proven)" if rej.proven else "")
            if rej.detail:
                details.append(f"  {plan.job_id}: {rej.detail}")
        row = [escape(plan.job_id), kind, decision, tier, gpus]
        if several_types:
            row.append(" ".join(sorted({g for g in plan.gpu_types if g})) or "-")
        if any_rejected:
            row.append(escape(reason))
        table.add_row(*row)
    console.print(table)
    if details:
        console.print("why rejected:")
        for line in details:
            console.print(escape(line), soft_wrap=True)
    if len(plans) > MAX_ROWS:
        console.print(
            f"… {len(plans) - MAX_ROWS} more jobs (use --json or --out for every decision)"
        )
    hosts = {inst.cluster.host_of(g) for gpus in sol.placement.values() for g in gpus}
    n_gpus = sum(len(gpus) for gpus in sol.placement.values())
    console.print(
        f"slot 0 placement: {len(sol.placement)} jobs on {n_gpus} GPUs, "
        f"{len(hosts)} of {len(inst.cluster.hosts())} hosts used"
    )

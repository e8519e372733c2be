"""``schedopt solve``'s table for co-scheduling: each group's hosts, cycle and members' phases."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from schedopt.core.result import Result

from .instance import CoschedInstance
from .solution import CoschedSolution

#: Groups shown before the table is cut.
MAX_ROWS = 40


def render(console: Console, inst: CoschedInstance, result: Result[CoschedSolution]) -> None:
    sol = result.solution
    if sol is None:
        return
    jobs = {j.id: j for j in inst.jobs}
    plans = {p.job_id: p for p in sol.plans}
    table = Table(title="co-execution groups: hosts, cycle, and each member's phases")
    for name in ("group", "hosts", "cycle ms", "job", "SLO ms", "phases (pool×devices @ start ms)"):
        table.add_column(name, justify="right" if name.endswith(" ms") else "left")
    for g in sol.groups[:MAX_ROWS]:
        hosts = Counter(h.rpartition("/")[0] for h in g.hosts)
        held = ", ".join(f"{n} {pool}" for pool, n in sorted(hosts.items()))
        for i, m in enumerate(g.members):
            job, plan = jobs[m], plans[m]
            phases = "; ".join(
                f"{ph.name} {ph.options[pp.option].pool}×{ph.options[pp.option].gpus} "
                f"@{pp.start_ms}"
                for ph, pp in zip(job.phases, plan.phases, strict=True)
            )
            first = i == 0
            table.add_row(
                g.id if first else "",
                held if first else "",
                f"{g.cycle_ms:,}" if first else "",
                m,
                f"{job.slo_ms:,}",
                phases,
            )
    console.print(table)


def info(inst: CoschedInstance) -> list[tuple[str, str]]:
    """``schedopt info``: the pools with their devices and prices, the jobs' phases and SLOs."""
    rows = [
        (
            f"pool {p.name}",
            f"{p.hosts} hosts × {p.gpus_per_host} {p.kind.upper()}s, "
            f"${p.price_per_gpu_hour:g} per device-hour, {p.host_memory_gib:g} GiB per host",
        )
        for p in inst.pools
    ]
    phases = sum(len(j.phases) for j in inst.jobs)
    options = sum(len(ph.options) for j in inst.jobs for ph in j.phases)
    slo = sorted(j.slo_ms for j in inst.jobs)
    rows.append(("phases", f"{phases} ({options} pool options), SLO {slo[0]:,}–{slo[-1]:,} ms"))
    if inst.chance is not None:
        rows.append(
            (
                "chance",
                f"each SLO met with probability ≥ {1 - inst.chance.epsilon:g} "
                f"over {inst.chance.scenarios} scenarios",
            )
        )
    return rows

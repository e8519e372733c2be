"""``schedopt solve``'s table for a reconfiguration: each pipeline's stages, TP, GPUs, layers,
micro-batches and whether it was kept."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from schedopt.core.result import Result

from .instance import ReconfigInstance
from .solution import ReconfigSolution

#: Pipelines shown before the table is cut (the summary line still counts every one).
MAX_ROWS = 40


def render(console: Console, inst: ReconfigInstance, result: Result[ReconfigSolution]) -> None:
    sol = result.solution
    if sol is None:
        return
    kept = {p.stages for p in inst.current_plan or ()}
    slow = inst.slow_factor
    table = Table(title=f"{inst.name}: {len(sol.pipelines)} pipelines")
    for col in ("pipeline", "stages", "TP", "micro-batches", "layers per stage", "hosts", "kept"):
        table.add_column(col, justify="right" if col != "hosts" else "left")
    for i, p in enumerate(sol.pipelines[:MAX_ROWS]):
        hosts = sorted({inst.cluster.host_of(s.gpus[0]) for s in p.stages})
        slow_marks = [f"{slow[g]:g}" for s in p.stages for g in s.gpus if g in slow]
        table.add_row(
            str(i),
            str(len(p.stages)),
            "/".join(sorted({str(len(s.gpus)) for s in p.stages})),
            str(p.micro_batches),
            " ".join(str(s.layer_end - s.layer_start) for s in p.stages),
            ", ".join(hosts[:4])
            + (" …" if len(hosts) > 4 else "")
            + (f" (slow κ {', '.join(slow_marks)})" if slow_marks else ""),
            "yes" if p.stages in kept else "",
        )
    console.print(table)
    if len(sol.pipelines) > MAX_ROWS:
        console.print(f"... {len(sol.pipelines) - MAX_ROWS} more pipelines (--json for all)")
    m = result.metrics
    if "throughput_retained" in m:
        console.print(
            f"throughput retained {m['throughput_retained']:.1%} of the healthy plan; "
            f"{m['tokens_per_s_per_gpu']:.0f} tokens/s per GPU"
        )

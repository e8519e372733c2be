"""``schedopt solve``'s table for a reconfiguration: each pipeline's stages, TP, GPUs, layers,
micro-batches and whether it was kept."""

from __future__ import annotations

from collections.abc import Sequence

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


def info(inst: ReconfigInstance) -> list[tuple[str, str]]:
    """``schedopt info``: the model, the batch, the failed and slow GPUs, the current plan."""
    m = inst.model
    rows = [
        (
            "model",
            f"{m.name}: {m.layers} layers, hidden {m.hidden}, {m.heads} heads, "
            f"vocabulary {m.vocab}, sequence {m.seq_len}",
        ),
        (
            "batch",
            f"{inst.global_batch} sequences, micro-batch {inst.micro_batch} "
            f"({inst.micro_batches} micro-batches)",
        ),
        (
            "plans",
            f"TP in {{{', '.join(map(str, inst.tp_sizes))}}}, at most {inst.max_stages} stages",
        ),
        ("failed GPUs", f"{len(inst.failed_gpus)}" + _some(inst.failed_gpus)),
        (
            "slow GPUs",
            f"{len(inst.slow_gpus)}"
            + _some([f"{s.gpu} ×{s.speed_factor:g}" for s in inst.slow_gpus]),
        ),
    ]
    if inst.current_plan is not None:
        gpus = sum(len(s.gpus) for p in inst.current_plan for s in p.stages)
        rows.append(("current plan", f"{len(inst.current_plan)} pipelines on {gpus} GPUs"))
    return rows


def _some(items: Sequence[str], most: int = 6) -> str:
    if not items:
        return ""
    return ": " + ", ".join(items[:most]) + (" …" if len(items) > most else "")

"""How wall time and gap grow with an instance's size: the size a row records, and the log–log
scale plot ``schedopt bench SUITE --plot scale`` draws from a run's rows.

The size of an instance is **GPUs × jobs**: the GPUs of its cluster (a time-share round's
workers, a co-scheduling instance's GPU pools) times its jobs (an MoE placement's experts over
every layer; a reconfiguration is one job). Each problem gets one SVG, two panels side by side:
wall time (s) and the proven gap of the first objective level, both on log axes against the
size, one series per method (the latest row of each recipe and method at the limit drawn). A
gap of 0 is drawn at :data:`GAP_FLOOR` (a log axis has no 0); a row without a gap (no bound,
no solution) is left out of the gap panel, and skipped or drifted rows out of both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from schedopt.bench.svg import line_chart, side_by_side

#: Where a gap of 0 is drawn on the log axis (0.01%).
GAP_FLOOR = 1e-4


def instance_size(instance: Any) -> dict[str, int]:
    """``{"gpus": G, "jobs": J}`` of any problem's instance (see the module docstring)."""
    if hasattr(instance, "cluster"):
        gpus = int(instance.cluster.num_gpus)
    elif hasattr(instance, "workers"):  # timeshare: GPUs per type
        gpus = int(sum(instance.workers.values()))
    elif hasattr(instance, "pools"):  # cosched: GPU pools of hosts
        gpus = sum(p.hosts * p.gpus_per_host for p in instance.pools if p.kind == "gpu")
    else:
        gpus = 1
    if hasattr(instance, "jobs"):
        jobs = len(instance.jobs)
    elif hasattr(instance, "layers"):  # moe_placement: experts of every layer
        jobs = sum(len(layer.experts) for layer in instance.layers)
    else:
        jobs = 1
    return {"gpus": gpus, "jobs": max(jobs, 1)}


def _latest(
    rows: Iterable[Mapping[str, Any]], time_limit_s: float | None
) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """The last row of each (problem, recipe, method) with a size, at ``time_limit_s`` (None:
    any)."""
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for r in rows:
        if r.get("status") in ("skipped", "drift") or not r.get("size"):
            continue
        if time_limit_s is not None and float(r["time_limit_s"]) != float(time_limit_s):
            continue
        out[(r["problem"], r["recipe"], r["method"])] = r
    return out


def scale_series(
    rows: Iterable[Mapping[str, Any]], time_limit_s: float | None = None
) -> dict[str, tuple[dict[str, list[tuple[float, float]]], dict[str, list[tuple[float, float]]]]]:
    """Per problem, ``(wall, gap)``: method -> [(GPUs × jobs, value)], sorted by size."""
    wall: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    gap: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for (problem, _, method), r in _latest(rows, time_limit_s).items():
        size = float(r["size"]["gpus"]) * float(r["size"]["jobs"])
        if r.get("wall_s") is not None:
            wall[problem][method].append((size, max(float(r["wall_s"]), 1e-3)))
        if r.get("gap") is not None:
            gap[problem][method].append((size, max(float(r["gap"]), GAP_FLOOR)))
    return {
        p: (
            {m: sorted(v) for m, v in sorted(wall[p].items())},
            {m: sorted(v) for m, v in sorted(gap[p].items())},
        )
        for p in sorted(wall)
    }


def scale_svg(
    problem: str,
    wall: Mapping[str, list[tuple[float, float]]],
    gap: Mapping[str, list[tuple[float, float]]],
    title: str = "",
) -> str:
    """One problem's scale plot: wall time and gap against GPUs × jobs, log–log."""
    head = f"{title}: " if title else ""
    xlabel = "GPUs × jobs"
    return side_by_side(
        line_chart(
            wall,
            title=f"{head}{problem}, wall time",
            xlabel=xlabel,
            ylabel="wall time (s)",
            logx=True,
            logy=True,
        ),
        line_chart(
            gap or {"(no bound)": []},
            title=f"{head}{problem}, gap of L1 (0 drawn at {100 * GAP_FLOOR:g}%)",
            xlabel=xlabel,
            ylabel="gap (fraction)",
            logx=True,
            logy=True,
        ),
    )


__all__ = ["GAP_FLOOR", "instance_size", "scale_series", "scale_svg"]

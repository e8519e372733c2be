"""What ``schedopt bench`` makes of its rows: a Markdown table, Dolan–Moré performance
profiles and gap-over-time curves (SVG).

**Performance profile** (Dolan and Moré, Math. Program. 91, 2002). For each problem instance
``p`` (a recipe at one time limit and seed) and method ``s``, a cost ``t[p,s] > 0`` (``inf`` when
``s`` failed on ``p``); the ratio ``r[p,s] = t[p,s] / min_s t[p,s]``; the profile of ``s`` is
``rho_s(tau) = |{p : r[p,s] <= tau}| / |P|``, the share of instances on which ``s`` is within a
factor ``tau`` of the best method. ``rho_s(1)`` is how often ``s`` is the best; the limit for
large ``tau`` is how often it succeeds at all. Two costs are drawn:

- ``time``: the wall time to a proven first objective level (``inf`` unless the row is
  ``optimal`` or its first level's gap is proven 0: on lexicographic objectives the later
  levels are often left unproven at the limit, so "optimal" alone would count every
  time-limited exact run as a failure);
- ``quality``: ``1 + |v - v*| / max(|v*|, 1)``, the distance of the first objective level ``v``
  from the best ``v*`` any method found on that instance (``inf`` without a solution).

**Gap over time**: for each method and time limit, the mean over instances of the proven gap,
a row without a gap (no bound, no solution) counted as 100% — the curve falls as longer limits
close gaps.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedopt.bench.runner import method_label
from schedopt.bench.scale import scale_series, scale_svg
from schedopt.bench.svg import line_chart

INF = math.inf
HAS_SOLUTION = ("optimal", "feasible")


def performance_profile(
    costs: Mapping[Any, Mapping[str, float]],
) -> dict[str, list[tuple[float, float]]]:
    """The Dolan–Moré profile of each method: ``(tau, rho(tau))`` at every ratio where its
    staircase steps up, starting at ``(1, rho(1))``. ``costs[p][s]`` is the cost of method ``s``
    on instance ``p`` (``inf``, or absent, for a failure); instances where every method failed
    count against all of them."""
    methods = sorted({s for row in costs.values() for s in row})
    n = len(costs)
    ratios: dict[str, list[float]] = {s: [] for s in methods}
    for row in costs.values():
        best = min((c for c in row.values() if c < INF), default=INF)
        for s in methods:
            c = row.get(s, INF)
            if c <= 0:
                raise ValueError(f"costs must be > 0 (got {c} for {s})")
            ratios[s].append(c / best if c < INF else INF)
    out: dict[str, list[tuple[float, float]]] = {}
    for s in methods:
        finite = sorted(r for r in ratios[s] if r < INF)
        steps = [(1.0, sum(1 for r in finite if r <= 1.0) / n if n else 0.0)]
        for tau in sorted(set(finite)):
            if tau > 1.0:
                steps.append((tau, sum(1 for r in finite if r <= tau) / n))
        out[s] = steps
    return out


def _instance(row: Mapping[str, Any]) -> tuple[str, str, float, int]:
    return (row["suite"], row["recipe"], float(row["time_limit_s"]), int(row["seed"]))


def _solved(row: Mapping[str, Any]) -> bool:
    return row.get("status") in HAS_SOLUTION and row.get("objectives") is not None


def _proven(row: Mapping[str, Any]) -> bool:
    """The first objective level is proven: the row is optimal, or its gap is 0."""
    gap = row.get("gap")
    return row.get("status") == "optimal" or (_solved(row) and gap is not None and gap <= 1e-9)


def time_costs(rows: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, float]]:
    """Wall time to a proven first objective level per (instance, method)."""
    out: dict[Any, dict[str, float]] = defaultdict(dict)
    for r in rows:
        ok = _proven(r)
        out[_instance(r)][method_label(r)] = max(float(r["wall_s"]), 1e-3) if ok else INF
    return dict(out)


def quality_costs(rows: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, float]]:
    """``1 + relative distance`` of the first objective level from the instance's best."""
    by_instance: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_instance[_instance(r)].append(r)
    out: dict[Any, dict[str, float]] = {}
    for p, group in by_instance.items():
        solved = [r for r in group if _solved(r)]
        values = [float(r["objectives"][0]) for r in solved]
        if values:
            best = max(values) if solved[0]["senses"][0] == "max" else min(values)
        out[p] = {
            method_label(r): (
                1 + abs(float(r["objectives"][0]) - best) / max(abs(best), 1.0)
                if _solved(r)
                else INF
            )
            for r in group
        }
    return out


def gap_over_time(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """Mean gap in % (no gap counted as 100%) per method, at each time limit."""
    gaps: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get("status") in ("skipped", "drift"):
            continue
        gap = r.get("gap")
        gaps[method_label(r)][float(r["time_limit_s"])].append(
            100.0 if gap is None else min(100.0, 100.0 * float(gap))
        )
    return {
        m: [(t, sum(v) / len(v)) for t, v in sorted(by_t.items())]
        for m, by_t in sorted(gaps.items())
    }


def _fmt(x: Any, digits: int = 6) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _gap_cell(row: Mapping[str, Any]) -> str:
    """The row's gap, and the plan space its bound is proven over where the result said so
    (``stats["proven_over"]``: reconfig's template answer beside its physical bound, whose gap
    to the physical optimum can be several times larger)."""
    gap = row.get("gap")
    if gap is None:
        return "–"
    over = (row.get("stats") or {}).get("proven_over")
    return f"{100 * gap:.2f}%" + (f" (over the {over})" if over else "")


def markdown(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> str:
    """A table of every row, then a summary per method, then (``columns``: names in a row's
    ``metrics``, its ``stats`` or the row itself, ``build_s`` say) a table of those per row."""
    lines = [
        "| suite | recipe | method | limit s | seed | status | L1 | bound | gap | wall s |",
        "|---|---|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in sorted(
        rows, key=lambda r: (r["suite"], r["recipe"], r["time_limit_s"], method_label(r))
    ):
        objectives = r.get("objectives")
        method = method_label(r)
        used = r.get("method_used")
        if used and used != method:
            method = used if used.startswith(method) else f"{method} ({used})"
        lines.append(
            f"| {r['suite']} | {r['recipe']} | {method} | {r['time_limit_s']:g} | {r['seed']} "
            f"| {r.get('status')} | {_fmt(objectives[0] if objectives else None)} "
            f"| {_fmt(r.get('bound'))} | {_gap_cell(r)} "
            f"| {_fmt(r.get('wall_s'), 3)} |"
        )
    lines += ["", "| method | rows | L1 proven | with a solution | mean gap | mean wall s |"]
    lines.append("|---|---:|---:|---:|---:|---:|")
    by_method: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        by_method[method_label(r)].append(r)
    for m, group in sorted(by_method.items()):
        gaps = [100.0 if r.get("gap") is None else 100.0 * r["gap"] for r in group]
        walls = [float(r["wall_s"]) for r in group if r.get("wall_s") is not None]
        lines.append(
            f"| {m} | {len(group)} | {sum(_proven(r) for r in group)} "
            f"| {sum(_solved(r) for r in group)} | {sum(gaps) / len(gaps):.2f}% "
            f"| {sum(walls) / len(walls) if walls else 0:.2f} |"
        )
    if columns:
        lines += ["", "| recipe | method | limit s | " + " | ".join(columns) + " |"]
        lines.append("|---|---|---:|" + "---:|" * len(columns))
        for r in sorted(rows, key=lambda r: (r["recipe"], r["time_limit_s"], method_label(r))):
            figures = {**r, **(r.get("stats") or {}), **(r.get("metrics") or {})}
            cells = " | ".join(_fmt(figures.get(c), 5) for c in columns)
            lines.append(f"| {r['recipe']} | {r['method']} | {r['time_limit_s']:g} | {cells} |")
    return "\n".join(lines) + "\n"


def write_reports(
    rows: Sequence[Mapping[str, Any]], stem: Path, title: str, columns: Sequence[str] = ()
) -> list[Path]:
    """``<stem>.md`` (with ``columns``: :func:`markdown`'s), ``<stem>-profile-time.svg``,
    ``<stem>-profile-quality.svg`` and ``<stem>-gap.svg``; the paths written."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    ran = [r for r in rows if r.get("status") not in ("skipped", "drift")]
    written = []
    md = stem.with_name(stem.name + ".md")
    md.write_text(f"# {title}\n\n" + markdown(rows, columns))
    written.append(md)
    for name, costs, what in (
        ("time", time_costs(ran), "time to a proven first level"),
        ("quality", quality_costs(ran), "first objective level"),
    ):
        profile = performance_profile(costs)
        svg = stem.with_name(f"{stem.name}-profile-{name}.svg")
        svg.write_text(
            line_chart(
                profile,
                title=f"{title}: performance profile, {what} ({len(costs)} instances)",
                xlabel="tau (within this factor of the best method)",
                ylabel="share of instances",
                logx=True,
                step=True,
                ylim=(0.0, 1.0),
            )
        )
        written.append(svg)
    gap = stem.with_name(f"{stem.name}-gap.svg")
    gap.write_text(
        line_chart(
            gap_over_time(ran),
            title=f"{title}: mean gap by time limit (no bound = 100%)",
            xlabel="time limit (s)",
            ylabel="mean gap (%)",
            logx=True,
        )
    )
    written.append(gap)
    return written


def write_scale(rows: Sequence[Mapping[str, Any]], stem: Path, title: str) -> list[Path]:
    """``<stem>-scale-<problem>.svg`` for each problem among ``rows``: wall time and gap
    against GPUs × jobs, log–log (:mod:`schedopt.bench.scale`); the paths written."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for problem, (wall, gap) in scale_series(rows).items():
        svg = stem.with_name(f"{stem.name}-scale-{problem}.svg")
        svg.write_text(scale_svg(problem, wall, gap, title))
        written.append(svg)
    return written


__all__ = [
    "gap_over_time",
    "markdown",
    "performance_profile",
    "quality_costs",
    "time_costs",
    "write_reports",
    "write_scale",
]

"""A line chart as SVG text, with no plotting dependency: the performance profile and the
gap-over-time curves of ``schedopt bench``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 420, 60, 190, 40, 50
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10.0**k for k in range(first, last + 1)]
    step = 10 ** math.floor(math.log10(max(hi - lo, 1e-12)))
    if (hi - lo) / step < 4:
        step /= 2
    start = math.floor(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 2)]


def line_chart(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
    step: bool = False,
    ylim: tuple[float, float] | None = None,
) -> str:
    """``series`` (name -> points) drawn as lines (``step``: as a right-continuous staircase,
    as a performance profile is); ``logx`` (``logy``) puts x (y) on a log scale, all x (y)
    then > 0."""
    points = [p for pts in series.values() for p in pts]
    xs = [x for x, _ in points] or [1.0]
    ys = [y for _, y in points] or [0.0]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        x1 = x0 * 10 if logx else x0 + 1
    if ylim is not None:
        y0, y1 = ylim
    elif logy:
        positive = [y for y in ys if y > 0] or [1.0]
        y0, y1 = min(positive), max(positive)
        y1 = y1 if y1 > y0 else y0 * 10
        yticks = _ticks(y0, y1, True)
        y0, y1 = yticks[0], yticks[-1]
    else:
        y0, y1 = min(0.0, *ys), max(ys) or 1.0
    ticks = _ticks(x0, x1, logx)
    x0, x1 = min(x0, ticks[0]), max(x1, ticks[-1])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        t = (
            (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))
            if logx
            else ((x - x0) / (x1 - x0))
        )
        return LEFT + t * plot_w

    def sy(y: float) -> float:
        if logy:
            t = (math.log10(y) - math.log10(y0)) / ((math.log10(y1) - math.log10(y0)) or 1.0)
        else:
            t = (y - y0) / ((y1 - y0) or 1.0)
        return TOP + plot_h - t * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="14">{escape(title)}</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#444"/>',
    ]
    for t in ticks:
        if x0 <= t <= x1:
            out.append(
                f'<line x1="{sx(t):.1f}" y1="{TOP}" x2="{sx(t):.1f}" y2="{TOP + plot_h}" '
                'stroke="#ddd"/>'
                f'<text x="{sx(t):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{t:g}</text>'
            )
    for t in _ticks(y0, y1, logy):
        if y0 <= t <= y1:
            out.append(
                f'<line x1="{LEFT}" y1="{sy(t):.1f}" x2="{LEFT + plot_w}" y2="{sy(t):.1f}" '
                'stroke="#eee"/>'
                f'<text x="{LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{t:.3g}</text>'
            )
    out.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">'
        f"{escape(xlabel)}</text>"
        f'<text transform="translate(16 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(ylabel)}</text>"
    )
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        path: list[tuple[float, float]] = []
        for j, (x, y) in enumerate(pts):
            if step and j > 0:
                path.append((sx(x), sy(pts[j - 1][1])))
            path.append((sx(x), sy(y)))
        if step and pts:
            path.append((sx(x1), sy(pts[-1][1])))
        if path:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in path)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
            for x, y in pts if not step else ():
                out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>')
        ly = TOP + 14 + 18 * i
        out.append(
            f'<line x1="{WIDTH - RIGHT + 12}" y1="{ly - 4}" x2="{WIDTH - RIGHT + 32}" '
            f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{WIDTH - RIGHT + 38}" y="{ly}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def side_by_side(*charts: str) -> str:
    """Several charts of :func:`line_chart` in one SVG, left to right."""
    inner = [
        f'<svg x="{i * WIDTH}" y="0" width="{WIDTH}" height="{HEIGHT}">'
        + chart.split(">", 1)[1].rsplit("</svg>", 1)[0]
        + "</svg>"
        for i, chart in enumerate(charts)
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH * len(charts)}" '
        f'height="{HEIGHT}" font-family="sans-serif" font-size="12">\n'
        + "\n".join(inner)
        + "\n</svg>\n"
    )


__all__ = ["line_chart", "side_by_side"]

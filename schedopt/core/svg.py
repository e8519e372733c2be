"""Drawing pieces shared by the problems' SVG pictures (``ProblemSpec.plot``).

No plotting dependency: every picture is SVG text written directly, hover text in ``<title>``
elements. A problem's ``plot.py`` decides what to draw; the pieces here are how: the document
and its title, a rectangle with hover text, rows of capacity bars split into segments (GPUs of
a type, shared by jobs), sorted value bars with their minimum drawn as a line (fairness), a
grid of cells (GPUs) and a white-to-blue heat scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

#: One colour per job, pipeline or group, in turn.
PALETTE = ("#2e75b6", "#ed7d31", "#70ad47", "#7030a0", "#ffc000", "#5b9bd5", "#c00000", "#a5a5a5")
#: Background of an empty bar or an idle cell, and its outline.
EMPTY, OUTLINE = "#f2f2f2", "#bfbfbf"


def colour(k: int) -> str:
    """The ``k``-th colour of :data:`PALETTE`, cycling."""
    return PALETTE[k % len(PALETTE)]


def document(
    width: float,
    height: float,
    title: str,
    body: Sequence[str],
    *,
    margin: float = 50,
    font_size: int = 11,
) -> str:
    """A whole SVG picture: white background, ``title`` (plain text) above ``body``."""
    return (
        "\n".join(
            [
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
                f'font-family="sans-serif" font-size="{font_size}">',
                '<rect width="100%" height="100%" fill="white"/>',
                f'<text x="{margin:g}" y="{margin - 22:g}" font-size="{font_size + 3}">'
                f"{escape(title)}</text>",
                *body,
                "</svg>",
            ]
        )
        + "\n"
    )


def rect(
    x: float,
    y: float,
    w: float,
    h: float,
    fill: str,
    tip: str | None = None,
    *,
    stroke: str = "white",
    stroke_width: float = 1,
) -> str:
    """A rectangle; ``tip`` (plain text) shows on hover."""
    head = (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{max(h, 0.0):.1f}" '
        f'fill="{fill}" stroke="{stroke}"'
        + (f' stroke-width="{stroke_width:g}"' if stroke_width != 1 else "")
    )
    return f"{head}/>" if tip is None else f"{head}><title>{escape(tip)}</title></rect>"


def label(x: float, y: float, text: str, anchor: str = "start", **attrs: str) -> str:
    """Plain ``text`` at (x, y); ``anchor`` start, middle or end."""
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


@dataclass(frozen=True)
class Segment:
    """A part of a bar: ``amount`` in the bar's units, coloured, with hover text; ``outlined``
    draws it with a black edge (a pair of jobs, say)."""

    amount: float
    fill: str
    tip: str
    outlined: bool = False


@dataclass(frozen=True)
class Bar:
    """A row: ``capacity`` units (GPUs of a type, say) filled left to right by ``segments``."""

    name: str
    capacity: float
    segments: Sequence[Segment]
    tip: str = ""


def bar_rows(
    bars: Sequence[Bar], x: float, top: float, width: float, bar_h: float = 26
) -> list[str]:
    """One horizontal bar per row, its name on the left and its capacity on the right; each
    segment is as long as its amount (a bar's length is its capacity). Height: rows × (bar_h
    + 8)."""
    out = []
    for row, bar in enumerate(bars):
        y = top + row * (bar_h + 8)
        unit = width / max(bar.capacity, 1e-12)
        out.append(label(x - 6, y + bar_h * 0.65, bar.name, "end"))
        out.append(rect(x, y, width, bar_h, EMPTY, bar.tip or None, stroke=OUTLINE))
        at = float(x)
        for s in bar.segments:
            stroke = "black" if s.outlined else "white"
            out.append(rect(at, y, s.amount * unit, bar_h, s.fill, s.tip, stroke=stroke))
            at += s.amount * unit
        out.append(label(x + width + 6, y + bar_h * 0.65, f"{bar.capacity:g}"))
    return out


def sorted_bars(
    values: Mapping[str, float],
    x: float,
    top: float,
    width: float,
    height: float,
    caption: str,
    minimum_tip: str = "the minimum",
) -> list[str]:
    """Vertical bars of ``values`` (name → value ≥ 0), smallest first, under ``caption``, with
    the smallest drawn as a dashed red line across (the level a max-min objective raises)."""
    if not values:
        return []
    ranked = sorted(values.items(), key=lambda kv: (kv[1], kv[0]))
    high = max(v for _, v in ranked) or 1.0
    bar_w = width / len(ranked)
    base = top + height
    out = [
        label(x, top - 8, caption, font_size="12"),
        f'<line x1="{x:.1f}" y1="{base:.1f}" x2="{x + width:.1f}" y2="{base:.1f}" stroke="black"/>',
    ]
    for k, (name, value) in enumerate(ranked):
        h = height * value / high
        out.append(
            rect(
                x + k * bar_w,
                base - h,
                max(bar_w - 1, 0.5),
                h,
                "#5b9bd5",
                f"{name}: {value:.4g}",
                stroke="none",
            )
        )
    low = base - height * ranked[0][1] / high
    out.append(
        f'<line x1="{x:.1f}" y1="{low:.1f}" x2="{x + width:.1f}" y2="{low:.1f}" '
        f'stroke="#c00000" stroke-dasharray="4,3"><title>{escape(minimum_tip)}</title></line>'
    )
    return out


def heat(fraction: float) -> str:
    """A colour from white (0) to dark blue (1) for a load as a fraction of the largest."""
    f = min(max(fraction, 0.0), 1.0)
    r, g, b = (round(255 + (t - 255) * f) for t in (31, 78, 121))
    return f"#{r:02x}{g:02x}{b:02x}"

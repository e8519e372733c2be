"""An SVG picture of a time-share round: how each GPU type is shared, and how fair it is.

Top: one bar per GPU type, its GPUs × the round, split into the GPUs each job (or pair) uses
on average (s_c × fraction); what is left is idle. Bottom: every job's weighted throughput
a_j ρ_j (the quantity the policy's level 1 maximises the minimum of), sorted, with the minimum
drawn as a line. No plotting dependency: the SVG is written directly
(``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from html import escape

from .instance import TimeshareInstance
from .solution import TimeshareSolution
from .validate import evaluate, job_throughputs, weighted_throughputs

WIDTH, MARGIN, BAR_H, CHART_H = 880, 50, 26, 180
PALETTE = ("#2e75b6", "#ed7d31", "#70ad47", "#7030a0", "#ffc000", "#5b9bd5", "#c00000", "#a5a5a5")


def to_svg(inst: TimeshareInstance, sol: TimeshareSolution, title: str | None = None) -> str:
    types = inst.worker_types
    height = 2 * MARGIN + len(types) * (BAR_H + 8) + 40 + CHART_H
    plot_w = WIDTH - 2 * MARGIN - 60
    order = {j.id: k for k, j in enumerate(inst.jobs)}
    scale = {j.id: j.scale_factor for j in inst.jobs}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{MARGIN}" y="{MARGIN - 22}" font-size="14">'
        f"{escape(title or inst.name)}: {escape(inst.policy.value)}, GPUs shared per type</text>",
    ]
    for row, w in enumerate(types):
        y = MARGIN + row * (BAR_H + 8)
        gpus = inst.workers[w]
        unit = plot_w / max(gpus, 1)
        parts.append(
            f'<text x="{MARGIN - 6}" y="{y + BAR_H * 0.65:.1f}" text-anchor="end">'
            f"{escape(w)}</text>"
        )
        parts.append(
            f'<rect x="{MARGIN}" y="{y}" width="{plot_w}" height="{BAR_H}" fill="#f2f2f2" '
            f'stroke="#bfbfbf"><title>{gpus} {escape(w)} GPUs</title></rect>'
        )
        x = float(MARGIN)
        for s in sorted((s for s in sol.shares if s.worker_type == w), key=lambda s: order[s.job]):
            used = scale[s.job] * s.fraction
            colour = PALETTE[order[s.job] % len(PALETTE)]
            who = " + ".join(escape(m) for m in s.members)
            stroke = "black" if s.with_job is not None else "white"
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{used * unit:.1f}" height="{BAR_H}" '
                f'fill="{colour}" stroke="{stroke}"><title>{who}: {s.fraction:.3f} of the round '
                f"on {scale[s.job]} GPU(s) = {used:.2f} GPUs</title></rect>"
            )
            x += used * unit
        parts.append(f'<text x="{MARGIN + plot_w + 6}" y="{y + BAR_H * 0.65:.1f}">{gpus}</text>')
    parts.extend(_fairness(inst, sol, MARGIN + len(types) * (BAR_H + 8) + 40, plot_w))
    parts.append("</svg>")
    return "\n".join(parts)


def _fairness(
    inst: TimeshareInstance, sol: TimeshareSolution, top: float, plot_w: float
) -> list[str]:
    """Sorted bars of every job's weighted throughput, with the minimum as a line."""
    weighted = weighted_throughputs(inst, job_throughputs(inst, sol))
    if not weighted:
        return []
    ranked = sorted(weighted.items(), key=lambda kv: kv[1])
    high = max(v for _, v in ranked) or 1.0
    bar_w = plot_w / len(ranked)
    base = top + CHART_H
    out = [
        f'<text x="{MARGIN}" y="{top - 8}" font-size="12">weighted throughput a_j ρ_j per job '
        f"(level 1 = the minimum, {evaluate(inst, sol)[0]:.4g})</text>",
        f'<line x1="{MARGIN}" y1="{base}" x2="{MARGIN + plot_w}" y2="{base}" stroke="black"/>',
    ]
    for k, (job, value) in enumerate(ranked):
        h = CHART_H * value / high
        out.append(
            f'<rect x="{MARGIN + k * bar_w:.1f}" y="{base - h:.1f}" '
            f'width="{max(bar_w - 1, 0.5):.1f}" '
            f'height="{h:.1f}" fill="#5b9bd5"><title>{escape(job)}: {value:.4g}</title></rect>'
        )
    low = base - CHART_H * ranked[0][1] / high
    out.append(
        f'<line x1="{MARGIN}" y1="{low:.1f}" x2="{MARGIN + plot_w}" y2="{low:.1f}" '
        'stroke="#c00000" stroke-dasharray="4,3"><title>the minimum</title></line>'
    )
    return out

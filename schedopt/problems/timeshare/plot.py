"""An SVG picture of a time-share round: how each GPU type is shared, and how fair it is.

Top: one bar per GPU type, its GPUs × the round, split into the GPUs each job (or pair) uses
on average (s_c × fraction); what is left is idle. Bottom: every job's weighted throughput
a_j ρ_j (the quantity the policy's level 1 maximises the minimum of), sorted, with the minimum
drawn as a line. Drawn with :mod:`schedopt.core.svg` (``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from schedopt.core import svg

from .instance import TimeshareInstance
from .solution import TimeshareSolution
from .validate import evaluate, job_throughputs, weighted_throughputs

WIDTH, MARGIN, BAR_H, CHART_H = 880, 50, 26, 180


def to_svg(inst: TimeshareInstance, sol: TimeshareSolution, title: str | None = None) -> str:
    types = inst.worker_types
    chart_top = MARGIN + len(types) * (BAR_H + 8) + 40
    plot_w = WIDTH - 2 * MARGIN - 60
    order = {j.id: k for k, j in enumerate(inst.jobs)}
    scale = {j.id: j.scale_factor for j in inst.jobs}
    bars = []
    for w in types:
        segments = []
        for s in sorted((s for s in sol.shares if s.worker_type == w), key=lambda s: order[s.job]):
            used = scale[s.job] * s.fraction
            segments.append(
                svg.Segment(
                    used,
                    svg.colour(order[s.job]),
                    f"{' + '.join(s.members)}: {s.fraction:.3f} of the round on "
                    f"{scale[s.job]} GPU(s) = {used:.2f} GPUs",
                    outlined=s.with_job is not None,
                )
            )
        bars.append(svg.Bar(w, inst.workers[w], segments, f"{inst.workers[w]} {w} GPUs"))
    weighted = weighted_throughputs(inst, job_throughputs(inst, sol))
    body = [
        *svg.bar_rows(bars, MARGIN, MARGIN, plot_w, BAR_H),
        *svg.sorted_bars(
            weighted,
            MARGIN,
            chart_top,
            plot_w,
            CHART_H,
            "weighted throughput a_j ρ_j per job "
            f"(level 1 = the minimum, {evaluate(inst, sol)[0]:.4g})",
        ),
    ]
    heading = f"{title or inst.name}: {inst.policy.value}, GPUs shared per type"
    return svg.document(WIDTH, chart_top + CHART_H + MARGIN, heading, body)

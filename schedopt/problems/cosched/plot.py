"""An SVG picture of a co-scheduling plan: one cycle of every group, one lane per pool.

Each group is a band with a lane per pool it holds; every member's phases are drawn at their
start modulo the cycle (a phase running over the cycle's end wraps to the lane's start), one
colour per job, switch gaps left blank. No plotting dependency: the SVG is written directly
(``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from collections import Counter
from html import escape

from schedopt.core.svg import PALETTE, document

from .instance import CoschedInstance
from .solution import CoschedSolution
from .validate import evaluate

WIDTH, MARGIN, LANE_H = 880, 60, 20
#: Groups drawn at most.
MAX_GROUPS = 24


def to_svg(inst: CoschedInstance, sol: CoschedSolution, title: str | None = None) -> str:
    jobs = {j.id: j for j in inst.jobs}
    order = {j.id: k for k, j in enumerate(inst.jobs)}
    plans = {p.job_id: p for p in sol.plans}
    groups = [g for g in sol.groups if g.members][:MAX_GROUPS]
    lanes = [(g, sorted(Counter(h.rpartition("/")[0] for h in g.hosts))) for g in groups]
    height = 2 * MARGIN + sum((len(p) or 1) * (LANE_H + 2) + 24 for _, p in lanes)
    plot_w = WIDTH - 2 * MARGIN - 40
    cost, _, _ = evaluate(inst, sol)
    heading = f"{title or inst.name or 'cosched'}: one cycle per group, ${cost:,.2f}/h"
    parts: list[str] = []
    y = MARGIN
    for g, pools in lanes:
        T = max(g.cycle_ms, 1)
        unit = plot_w / T
        parts.append(
            f'<text x="{MARGIN}" y="{y - 6}">{escape(g.id)}: cycle {g.cycle_ms:,} ms, '
            f"{escape(', '.join(g.members))}</text>"
        )
        for lane, pool in enumerate(pools):
            ly = y + lane * (LANE_H + 2)
            parts.append(
                f'<text x="{MARGIN - 6}" y="{ly + LANE_H * 0.7:.1f}" text-anchor="end">'
                f"{escape(pool)}</text>"
            )
            parts.append(
                f'<rect x="{MARGIN}" y="{ly}" width="{plot_w}" height="{LANE_H}" '
                f'fill="#f2f2f2" stroke="#bfbfbf"/>'
            )
            for m in g.members:
                job, plan = jobs[m], plans[m]
                colour = PALETTE[order[m] % len(PALETTE)]
                for ph, pp in zip(job.phases, plan.phases, strict=True):
                    opt = ph.options[pp.option]
                    if opt.pool != pool:
                        continue
                    s, d = pp.start_ms % T, min(opt.duration_ms, T)
                    for x0, w in ((s, min(d, T - s)), (0, max(0, s + d - T))):
                        if w > 0:
                            parts.append(
                                f'<rect x="{MARGIN + x0 * unit:.1f}" y="{ly + 1}" '
                                f'width="{w * unit:.1f}" height="{LANE_H - 2}" fill="{colour}">'
                                f"<title>{escape(m)} {escape(ph.name)} on {opt.gpus} "
                                f"{escape(pool)}, {opt.duration_ms:,} ms from "
                                f"{pp.start_ms:,} ms</title></rect>"
                            )
        y += (len(pools) or 1) * (LANE_H + 2) + 24
    return document(WIDTH, height, heading, parts, margin=MARGIN)

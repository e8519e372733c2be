"""An SVG picture of an admission decision: GPUs per slot, stacked by job, against capacity.

No plotting dependency: the SVG is written directly. ``schedopt plot FILE SOLUTION --out x.svg``.
Strict SLO jobs are drawn in blues, soft SLO jobs in purples, best-effort jobs in greys; the
dashed line is the free-GPU capacity; a job's guaranteed deadline is a tick on the time axis.
"""

from __future__ import annotations

from html import escape

from schedopt.core.svg import document

from .instance import AdmissionInstance, JobKind
from .solution import AdmissionSolution

WIDTH, HEIGHT, MARGIN, LEGEND_W = 880, 420, 50, 220
PALETTES = {
    JobKind.STRICT_SLO: ("#1f4e79", "#2e75b6", "#5b9bd5", "#9dc3e6"),
    JobKind.SOFT_SLO: ("#4b2a7a", "#7030a0", "#9e6fce", "#c9a9e6"),
    JobKind.BEST_EFFORT: ("#595959", "#7f7f7f", "#a6a6a6", "#cfcfcf"),
}


def to_svg(inst: AdmissionInstance, sol: AdmissionSolution, title: str | None = None) -> str:
    jobs = {j.id: j for j in inst.jobs}
    out = set(inst.unavailable_gpus)
    capacity = sum(1 for g in inst.cluster.gpus() if g not in out)
    top = max(
        [capacity, *(sum(p.gpus[t] for p in sol.plans) for t in range(inst.slots))], default=1
    )
    plot_w = WIDTH - 2 * MARGIN - LEGEND_W
    plot_h = HEIGHT - 2 * MARGIN
    slot_w = plot_w / inst.slots
    unit = plot_h / max(top, 1)
    parts: list[str] = []
    colour: dict[str, str] = {}
    seen: dict[JobKind, int] = {}
    for plan in sol.plans:
        kind = jobs[plan.job_id].kind
        palette = PALETTES[kind]
        colour[plan.job_id] = palette[seen.get(kind, 0) % len(palette)]
        seen[kind] = seen.get(kind, 0) + 1
    y0 = HEIGHT - MARGIN
    for t in range(inst.slots):
        base = 0
        x = MARGIN + t * slot_w
        for plan in sol.plans:
            n = plan.gpus[t]
            if not n:
                continue
            y = y0 - (base + n) * unit
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{slot_w - 2:.1f}" '
                f'height="{n * unit:.1f}" fill="{colour[plan.job_id]}" stroke="white">'
                f"<title>{escape(plan.job_id)}: {n} {escape(plan.gpu_types[t] or '')} GPUs in "
                f"slot {t}</title></rect>"
            )
            base += n
        parts.append(
            f'<text x="{x + slot_w / 2:.1f}" y="{y0 + 14}" text-anchor="middle">{t}</text>'
        )
    cap_y = y0 - capacity * unit
    parts.append(
        f'<line x1="{MARGIN}" y1="{cap_y:.1f}" x2="{MARGIN + plot_w}" y2="{cap_y:.1f}" '
        f'stroke="#c00000" stroke-dasharray="6,4"/>'
        f'<text x="{MARGIN + plot_w - 4}" y="{cap_y - 4:.1f}" text-anchor="end" fill="#c00000">'
        f"{capacity} free GPUs</text>"
    )
    for plan in sol.plans:  # guaranteed deadlines as ticks under the axis
        if plan.admitted and plan.tier is not None:
            d = jobs[plan.job_id].deadlines[plan.tier].deadline_s
            x = MARGIN + min(d / inst.slot_s, inst.slots) * slot_w
            parts.append(
                f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + 5}" '
                f'stroke="{colour[plan.job_id]}" stroke-width="3">'
                f"<title>{escape(plan.job_id)} guaranteed by {d:g} s</title></line>"
            )
    parts.append(
        f'<line x1="{MARGIN}" y1="{y0}" x2="{MARGIN + plot_w}" y2="{y0}" stroke="black"/>'
        f'<line x1="{MARGIN}" y1="{y0}" x2="{MARGIN}" y2="{MARGIN}" stroke="black"/>'
        f'<text x="{MARGIN + plot_w / 2}" y="{y0 + 32}" text-anchor="middle">'
        f"slot ({inst.slot_s:g} s each)</text>"
        f'<text x="{MARGIN - 8}" y="{cap_y:.1f}" text-anchor="end">{capacity}</text>'
        f'<text x="{MARGIN - 8}" y="{y0}" text-anchor="end">0</text>'
    )
    lx, ly = WIDTH - LEGEND_W - 10, MARGIN
    shown = [p for p in sol.plans if any(p.gpus)][:24]
    for i, plan in enumerate(shown):
        kind_label = jobs[plan.job_id].kind.value.replace("_", " ")
        state = "" if plan.admitted is None else (" admitted" if plan.admitted else " rejected")
        parts.append(
            f'<rect x="{lx}" y="{ly + 15 * i}" width="11" height="11" '
            f'fill="{colour[plan.job_id]}"/><text x="{lx + 16}" y="{ly + 15 * i + 10}">'
            f"{escape(plan.job_id)} ({kind_label}{state})</text>"
        )
    rejected = [p.job_id for p in sol.plans if p.admitted is False]
    if rejected:
        y = ly + 15 * len(shown) + 12
        names = ", ".join(rejected[:6]) + (" …" if len(rejected) > 6 else "")
        parts.append(f'<text x="{lx}" y="{y}">rejected: {escape(names)}</text>')
    return document(WIDTH, HEIGHT, f"{title or inst.name}: GPUs per slot", parts, margin=MARGIN)

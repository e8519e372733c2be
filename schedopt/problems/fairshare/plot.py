"""An SVG picture of a fair-share round: who gets the GPUs of each type, and how fair it is.

Top: one bar per GPU type, its free GPUs, split into the GPUs each running job gets this round,
coloured by tenant (hover: job, tenant, GPUs, hosts); what is left is idle. Bottom: every
counted tenant's (or job's) long-term GPU-time fairness after the round (F3), sorted, with the
minimum — level 1, the value the round maximises — drawn as a line. Drawn with
:mod:`schedopt.core.svg` (``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from collections import Counter

from schedopt.core import svg

from .instance import FairshareInstance
from .solution import FairshareSolution
from .validate import evaluate, metrics

WIDTH, MARGIN, BAR_H, CHART_H = 880, 50, 26, 180
SHARE = "share["


def to_svg(inst: FairshareInstance, sol: FairshareSolution, title: str | None = None) -> str:
    free: Counter[str] = Counter()
    for h, n in inst.free_by_host.items():
        kind = inst.host_type.get(h)
        if kind is not None:
            free[kind] += n
    tenant_of = {j.id: j.tenant for j in inst.jobs}
    tenant_colour = {t.id: svg.colour(k) for k, t in enumerate(inst.tenants)}
    bars = []
    for kind in sorted(free):
        segments = [
            svg.Segment(
                a.count,
                tenant_colour[tenant_of[a.job_id]],
                f"{a.job_id} ({tenant_of[a.job_id]}): {a.count} {kind} GPUs on "
                + ", ".join(f"{h} ×{n}" for h, n in sorted(a.hosts.items())),
            )
            for a in sol.allocations
            if a.hosts and a.gpu_type == kind
        ]
        used = sum(s.amount for s in segments)
        bars.append(
            svg.Bar(kind, free[kind], segments, f"{free[kind]} free {kind} GPUs, {used:g} used")
        )
    shares = {k[len(SHARE) : -1]: v for k, v in metrics(inst, sol).items() if k.startswith(SHARE)}
    chart_top = MARGIN + len(bars) * (BAR_H + 8) + 40
    unit = inst.fairness_unit.value
    body = [
        *svg.bar_rows(bars, MARGIN, MARGIN, WIDTH - 2 * MARGIN - 60, BAR_H),
        *svg.sorted_bars(
            shares,
            MARGIN,
            chart_top,
            WIDTH - 2 * MARGIN - 60,
            CHART_H,
            f"long-term GPU-time fairness per {unit} after the round "
            f"(level 1 = the minimum, {evaluate(inst, sol)[0]:.4g})",
        ),
    ]
    heading = f"{title or inst.name}: GPUs per type this round, coloured by tenant"
    return svg.document(WIDTH, chart_top + CHART_H + MARGIN, heading, body)

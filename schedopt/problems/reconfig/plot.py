"""An SVG picture of a plan on the topology: one row per host, one cell per GPU, coloured by
pipeline and labelled with its stage; failed GPUs crossed, slow GPUs outlined in orange with
their κ, idle GPUs grey. No plotting dependency (``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from html import escape

from schedopt.core.svg import PALETTE, document

from .instance import ReconfigInstance
from .solution import ReconfigSolution
from .validate import evaluate

CELL, GAP, MARGIN, LABEL = 26, 3, 40, 60
#: Hosts drawn (a 16,384-GPU cluster has 2,048; the picture says how many are left out).
MAX_HOSTS = 64


def to_svg(inst: ReconfigInstance, sol: ReconfigSolution, title: str | None = None) -> str:
    hosts = list(inst.cluster.hosts())
    shown = hosts[:MAX_HOSTS]
    per_host = max(len(inst.cluster.gpus_on(h)) for h in hosts)
    where: dict[str, tuple[int, int, int]] = {}  # gpu → (pipeline, stage, TP rank)
    for pi, p in enumerate(sol.pipelines):
        for si, s in enumerate(p.stages):
            for r, g in enumerate(s.gpus):
                where[g] = (pi, si, r)
    kept = {p.stages for p in inst.current_plan or ()}
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    width = 2 * MARGIN + LABEL + per_host * (CELL + GAP)
    height = 2 * MARGIN + 30 + len(shown) * (CELL + GAP) + 20
    t, gb, gpus = evaluate(inst, sol)
    heading = (
        f"{title or inst.name}: {len(sol.pipelines)} pipelines, iteration {t:.4g} s, "
        f"{gb:.4g} GB moved, {gpus:g} GPUs"
    )
    parts: list[str] = []
    for row, h in enumerate(shown):
        y = MARGIN + row * (CELL + GAP)
        parts.append(
            f'<text x="{MARGIN + LABEL - 6}" y="{y + CELL * 0.65:.1f}" '
            f'text-anchor="end">{escape(h)}</text>'
        )
        for col, g in enumerate(inst.cluster.gpus_on(h)):
            x = MARGIN + LABEL + col * (CELL + GAP)
            fill, label, note = "#e7e6e6", "", "idle"
            if g in where:
                pi, si, r = where[g]
                fill = PALETTE[pi % len(PALETTE)]
                label = str(si)
                flag = " (kept)" if sol.pipelines[pi].stages in kept else ""
                note = f"pipeline {pi}{flag}, stage {si}, TP rank {r}"
            stroke, sw = ("#ff8c00", 3) if g in slow else ("white", 1)
            if g in slow:
                note += f", slow κ = {slow[g]:g}"
            if g in failed:
                fill, note = "#404040", "failed"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
                f'stroke="{stroke}" stroke-width="{sw}">'
                f"<title>{escape(g)}: {escape(note)}</title></rect>"
            )
            if g in failed:
                parts.append(
                    f'<path d="M{x + 4},{y + 4} L{x + CELL - 4},{y + CELL - 4} '
                    f'M{x + CELL - 4},{y + 4} L{x + 4},{y + CELL - 4}" '
                    'stroke="white" stroke-width="2"/>'
                )
            elif label:
                parts.append(
                    f'<text x="{x + CELL / 2}" y="{y + CELL * 0.65:.1f}" text-anchor="middle" '
                    f'fill="white">{label}</text>'
                )
    if len(hosts) > len(shown):
        y = MARGIN + len(shown) * (CELL + GAP) + 14
        parts.append(f'<text x="{MARGIN}" y="{y}">… {len(hosts) - len(shown)} more hosts</text>')
    return document(width, height, heading, parts, margin=MARGIN, font_size=10)

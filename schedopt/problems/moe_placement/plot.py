"""An SVG picture of an expert placement: one row per layer, one cell per GPU, shaded by the
GPU's load in that layer (µs of expert compute per batch at the point popularity; white idle,
dark blue the layer's most loaded GPU, whose load is level 1's term for the layer). Hover a cell
for its load and the experts (with their token shares) on it. Drawn with
:mod:`schedopt.core.svg` (``schedopt plot FILE SOLUTION --out x.svg``).
"""

from __future__ import annotations

from collections import defaultdict

from schedopt.core import svg

from .instance import MoePlacementInstance
from .solution import MoePlacementSolution
from .validate import gpu_loads

WIDTH, MARGIN, LABEL, ROW_H, RIGHT = 880, 50, 70, 18, 90
#: Layers drawn (DeepSeek-V3 has 58; the picture says how many are left out).
MAX_LAYERS = 64


def to_svg(inst: MoePlacementInstance, sol: MoePlacementSolution, title: str | None = None) -> str:
    gpus = inst.cluster.gpus()
    loads = gpu_loads(inst, sol)
    shown = min(len(inst.layers), MAX_LAYERS)
    cell = (WIDTH - 2 * MARGIN - LABEL - RIGHT) / max(len(gpus), 1)
    body: list[str] = []
    for li in range(shown):
        layer, plan, load = inst.layers[li], sol.layers[li], loads[li]
        held: dict[str, list[str]] = defaultdict(list)
        for e, ep in enumerate(plan.experts):
            for r in ep.replicas:
                held[r.gpu].append(f"{e} ({r.share:.2f})")
        top = max(load.values(), default=0.0)
        y = MARGIN + li * ROW_H
        name = layer.name or f"layer {li}"
        body.append(svg.label(MARGIN + LABEL - 6, y + ROW_H * 0.7, name, "end"))
        for k, g in enumerate(gpus):
            value = load.get(g, 0.0)
            tip = f"{name}, {g}: {value:.4g} µs; experts {', '.join(held[g]) or 'none'}"
            fill = svg.heat(value / top if top > 0 else 0.0)
            body.append(
                svg.rect(
                    MARGIN + LABEL + k * cell, y, cell, ROW_H - 2, fill, tip, stroke=svg.OUTLINE
                )
            )
        body.append(svg.label(WIDTH - MARGIN - RIGHT + 6, y + ROW_H * 0.7, f"max {top:.4g} µs"))
    bottom = MARGIN + shown * ROW_H + 16
    if shown < len(inst.layers):
        body.append(svg.label(MARGIN, bottom, f"… {len(inst.layers) - shown} more layers"))
        bottom += 16
    body.append(
        svg.label(
            MARGIN + LABEL, bottom, f"{len(gpus)} GPUs, left to right: {gpus[0]} … {gpus[-1]}"
        )
    )
    heading = (
        f"{title or inst.name}: GPU load per layer, Σ of the layers' max "
        f"{sum(max(load.values(), default=0.0) for load in loads):.4g} µs, "
        f"{sol.replicas()} replicas"
    )
    return svg.document(WIDTH, bottom + MARGIN, heading, body)

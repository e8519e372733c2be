"""C10: which GPUs are interchangeable, and the fixed weights by which the models order them
(``formulations/moe_placement.md``)."""

from __future__ import annotations

import numpy as np

from .data import ModelData


def symmetry_classes(data: ModelData) -> list[list[int]]:
    """Interchangeable GPUs: same C7 group, expert memory, speed and transfer cost, and none
    holding anything in the current placement. Swapping two of them (all layers at once) maps
    a solution to one with the same objectives, so the models may order them (C10)."""
    classes: dict[tuple[float, ...], list[int]] = {}
    if not data.symmetric:
        return []
    for g in range(data.G):
        if data.current is not None and any(c[:, g].any() for c in data.current):
            continue
        key = (
            float(data.group[g]),
            round(float(data.cap[g]), 9),
            float(data.speed[g]),
            round(float(data.comm[g]), 12),
        )
        classes.setdefault(key, []).append(g)
    return [c for c in classes.values() if len(c) > 1]


def symmetry_weights(data: ModelData) -> list[np.ndarray]:
    """Fixed pseudo-random weights r_le in [1, 2) (seed 0) for the ordering rows of C10; the
    same eligibility on every GPU of a class is guaranteed by equal capacity."""
    rng = np.random.default_rng(0)
    return [1.0 + rng.random(len(m)) for m in data.mem]

"""Whole-slot rows B1c for the LP bound (formulations/admission.md, "Whole-slot rows B1c").

A job admitted at tier ``k`` or earlier runs whole slots before ``e_jk``: ``K_o`` slots on
option ``o`` (integers, ``Σ_o K_o ≤`` the slots it may run in, C1) with ``Σ_o ω_o K_o ≥ W``
(C6). For any weights ``w_o ≥ 0`` (the GPUs an option takes at a level of C3, or 1 per slot)
every such plan has ``Σ_o w_o K_o ≥ need_w``, the least value of ``Σ w K`` over those integer
vectors. The LP, whose ``K`` may be fractional, can do the work on fewer GPU-slots than any
plan; these rows take that away.
"""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=65_536)
def least_weight(
    work: int, per_slot: tuple[int, ...], weights: tuple[float, ...], slots: int
) -> float | None:
    """``min Σ w_o K_o`` over integers ``K ≥ 0`` with ``Σ K ≤ slots`` and ``Σ ω_o K_o ≥ work``
    (``per_slot`` = ω, one entry per option); None when no such ``K`` exists."""
    if work <= 0:
        return 0.0
    best: float | None = None

    def go(i: int, left: int, free: int, acc: float) -> None:
        nonlocal best
        if best is not None and acc >= best:
            return
        if left <= 0:
            best = acc
            return
        if i == len(per_slot) or free <= 0:
            return
        w, om = weights[i], per_slot[i]
        if i == len(per_slot) - 1:  # the last option: the fewest slots that finish
            if om <= 0:
                return
            k = math.ceil(left / om)
            if k <= free:
                go(i + 1, 0, free - k, acc + k * w)
            return
        top = free if om <= 0 else min(free, math.ceil(left / om))
        for k in range(top + 1):
            go(i + 1, left - k * om, free - k, acc + k * w)

    go(0, work, slots, 0.0)
    return best


__all__ = ["least_weight"]

"""The L1 fix behind a plan (formulations/fairshare.md, "B3L", R1 and *Settled*): what every
allocation at least as fair as the plan's minimum share ``t̂`` gives each counted unit
(``m_v(t̂)``), and whether ``t̂`` is L1 of the optimum, so that the plan's L2 bounds L2* from
below. The rows that B2L, B3L, B3U and the L3 repair steps hold the plan's L1 by."""

from __future__ import annotations

import math

import numpy as np

from .data import GPU_TOL, ModelData


def l1_settled(data: ModelData, t_hat: float, b1: float) -> bool:
    """True when no minimum share in ``(t̂, B1]`` can be reached by whole GPUs, so that
    ``t̂`` (a solution's L1) is L1 of the optimum: for every counted unit the next share it
    can reach above ``t̂`` (one GPU past what ``t̂`` needs) is above B1."""
    for v in data.included:
        gpus = (t_hat * v.deserved_after_s - v.used_s) / data.round_s
        nxt = math.floor(gpus + GPU_TOL) + 1
        if v.share(nxt, data.round_s) <= b1 * (1.0 + 1e-12):
            return False
    return True


def need_gpus(data: ModelData, t_hat: float) -> np.ndarray:
    """``m_v(t̂)`` by unit (0 for units not counted): what every allocation at least as fair
    as ``t̂`` gives each counted unit."""
    need = np.zeros(len(data.units))
    for v in data.included:
        need[v.index] = data.min_gpus(v, t_hat)
    return need


__all__ = ["l1_settled", "need_gpus"]

"""Raw decisions (``placement.Raw``, one per job) ↔ a point of the fair-share model."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .data import SHARE_SCALE, ModelData
from .model import FairshareModel
from .placement import Raw

#: Float noise allowed when putting a value on a CP-SAT grid.
_GRID_TOL = 1e-9


def unit_gpus(data: ModelData, raw: Sequence[Raw]) -> list[float]:
    """g_v, the GPUs each fairness unit gets."""
    g = [0.0] * len(data.units)
    for job, r in zip(data.jobs, raw, strict=True):
        if r.option is not None:
            g[job.unit] += job.options[r.option].n
    return g


def min_share_on_both_grids(data: ModelData, gpus: Sequence[float]) -> float:
    """The largest t on CP-SAT's grid that both C7 variants allow: the real minimum share and
    the one of the rounded accounts (so a hint is a point of the model for every back-end)."""
    if not data.included:
        return 0.0
    real = data.min_share(list(gpus))
    rounded = min(
        (v.used_units + data.round_units * gpus[v.index]) / v.deserved_units for v in data.included
    )
    return max(0.0, math.floor(min(real, rounded) * SHARE_SCALE + _GRID_TOL) / SHARE_SCALE)


def encode(fm: FairshareModel, raw: Sequence[Raw]) -> np.ndarray:
    """A complete point from a raw decision: x and k as decided, t and the chunks derived as
    C7 and C3 define them, so a solver starts from a point it can check instead of one it
    must repair."""
    data, x, k = fm.data, fm.x, fm.k
    values = np.zeros(fm.model.num_cols)
    kept_hosts: dict[str, int] = {}
    for job, r in zip(data.jobs, raw, strict=True):
        o = r.option
        if o is None:
            continue
        values[x[job.index, o]] = 1.0
        if job.keepable and r.keep and o == job.prev_option:
            values[k[job.index,]] = 1.0
            for h, n in job.prev_hosts.items():
                kept_hosts[h] = kept_hosts.get(h, 0) + n
    for (h, s), col in fm.c.items():  # C3c: as many chunks as the host has room for
        values[col] = max(0, (data.free[h] - kept_hosts.get(h, 0)) // s)
    t = fm.t[()]
    values[t] = min(min_share_on_both_grids(data, unit_gpus(data, raw)), fm.model.ub[t])
    return values


def decode(fm: FairshareModel, values: np.ndarray) -> list[Raw]:
    data = fm.data
    raw = [Raw() for _ in data.jobs]
    on = values > 0.5
    for (j, o), col in fm.x.items():
        if on[col]:
            raw[j].option = o
    for (j,), col in fm.k.items():
        raw[j].keep = bool(on[col]) and raw[j].option == data.jobs[j].prev_option
    return raw

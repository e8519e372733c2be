"""Raw decisions ↔ a point of the co-scheduling model (model.py's columns)."""

from __future__ import annotations

import numpy as np

from .assemble import Raw, RawGroup
from .model import CoschedModel


def encode(cm: CoschedModel, raw: Raw) -> np.ndarray:
    """A complete point: y, x, h, T, t, the starts shifted so step 0 begins in cycle 0, z, and
    for every pair sharing a group's pool the shift ``q`` that orders it (C11)."""
    data = cm.data
    v = np.zeros(cm.model.num_cols)
    group_of: dict[int, int] = {}
    cycle: dict[int, int] = {}
    for rg in raw.groups:
        g = min(rg.members)
        for j in rg.members:
            group_of[j], cycle[j] = g, rg.cycle
        if (g, 0) in cm.h:
            for p, n in enumerate(rg.hosts):
                v[cm.h[g, p]] = n
            v[cm.T[g,]] = rg.cycle
    starts: dict[int, list[int]] = {}
    pool_of: dict[tuple[int, int], int] = {}
    for job in cm.jobs:
        j, g, T = job.index, group_of[job.index], max(cycle[job.index], 1)
        v[cm.x[j, g]] = 1
        v[cm.t[j,]] = cycle[j]
        shift = raw.start[j][0] // T * T
        starts[j] = [s - shift for s in raw.start[j]]
        for k, opts in enumerate(job.phases):
            v[cm.a[j, k]] = starts[j][k]
            for o, opt in enumerate(opts):
                if opt.index == raw.option[j][k]:
                    v[cm.y[j, k, o, g]] = 1
                    pool_of[j, k] = opt.pool
        first, last = pool_of.get((j, 0)), pool_of.get((j, job.last))
        v[cm.z[j,]] = float(first != last)
    for pair in data.pairs(cm.jobs):
        (ja, ka), (jb, kb) = pair.a, pair.b
        if group_of[ja] != group_of[jb]:
            continue
        if pool_of.get((ja, ka)) != pair.pool or pool_of.get((jb, kb)) != pair.pool:
            continue
        T = max(cycle[ja], 1)
        sa, sb = starts[ja][ka], starts[jb][kb]
        q = -((sb - sa) // T)  # the least q with sb + q·T ≥ sa: β's next occurrence
        if q in pair.shifts:
            v[cm.e[(ja, ka, jb, kb, pair.pool, q)]] = 1
    _scenarios_held(cm, v)
    return v


def _scenarios_held(cm: CoschedModel, v: np.ndarray) -> None:
    """ok[j,s] = 1 unless a C13 row of job j in scenario s breaks (each such row names one
    ok column; clearing it only relaxes rows, so one pass suffices)."""
    if not len(cm.ok):
        return
    v[cm.ok.cols] = 1.0
    ok_cols = set(cm.ok.cols.tolist())
    for block in cm.model.blocks:
        if block.cid not in ("C13b", "C13c"):
            continue
        act = block.activity(v)
        broken = np.flatnonzero((act < block.lo - 1e-9) | (act > block.hi + 1e-9))
        for r in broken:
            cols, _ = block.row(int(r))
            for c in cols.tolist():
                if c in ok_cols:
                    v[c] = 0.0


def decode(cm: CoschedModel, values: np.ndarray) -> Raw:
    on = values > 0.5
    raw = Raw()
    groups: dict[int, list[int]] = {}
    for (j, g), col in cm.x.items():
        if on[col]:
            groups.setdefault(g, []).append(j)
    P = len(cm.data.pools)
    for g, members in sorted(groups.items()):
        hosts = [round(values[cm.h[g, p]]) for p in range(P)]
        raw.groups.append(RawGroup(sorted(members), hosts, round(values[cm.T[g,]])))
    for job in cm.jobs:
        raw.option[job.index] = [0] * len(job.phases)
        raw.start[job.index] = [round(values[cm.a[job.index, k]]) for k in range(len(job.phases))]
    by_index = {job.index: job for job in cm.jobs}
    for (j, k, o, _g), col in cm.y.items():
        if on[col]:
            raw.option[j][k] = by_index[j].phases[k][o].index
    return raw

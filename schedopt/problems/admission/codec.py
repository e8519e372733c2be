"""Raw decisions ↔ a point of the admission model (model.py's columns)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .assemble import RawPlan
from .model import AdmissionModel


def encode(am: AdmissionModel, raw: Sequence[RawPlan]) -> np.ndarray:
    """A complete point from a raw plan (p and c derived as C8 and C9 define them), so a
    solver starts from a feasible point instead of having to repair a partial one."""
    data, x, p, c = am.data, am.x, am.p, am.c
    values = np.zeros(am.model.num_cols)
    ub = am.model.ub
    for (j,), col in am.z.items():
        values[col] = float(bool(raw[j].admitted))
    for (j, k), col in am.y.items():
        values[col] = float(bool(raw[j].admitted) and raw[j].tier == k)
    # the model's jobs (a model without the count changes, ``l1_only``, has no c)
    seen = {key[0] for key in c.index} | {key[0] for key in x.index}
    for job in data.jobs:
        if job.index not in seen:
            continue
        j, r = job.index, raw[job.index]
        left, prev = job.work, job.current_gpus
        for t in range(data.T):
            o = r.run[t] if t >= job.arrival else None
            if o is not None and (j, t, o) in x:
                values[x[j, t, o]] = 1.0
            n = 0 if o is None else job.options[o].n
            change = c.get((j, t))
            if change is not None:
                values[change] = abs(n - prev)
            prev = n
            at = p.get((j, t))
            if at is not None:
                got = 0 if o is None else min(left, job.options[o].work, ub[at])
                values[at] = got
                left -= got
    return values


def decode(am: AdmissionModel, values: np.ndarray) -> list[RawPlan]:
    raw = [RawPlan([None] * am.data.T) for _ in am.data.jobs]
    on = values > 0.5
    for (j, t, o), col in am.x.items():
        if on[col]:
            raw[j].run[t] = o
    for (j,), col in am.z.items():
        raw[j].admitted = bool(on[col])
    for (j, k), col in am.y.items():
        if on[col]:
            raw[j].tier = k
    return raw

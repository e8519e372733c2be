"""A raw plan (plan.Raw) ↔ a point of the reconfiguration model (model.py's columns)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from .model import ReconfigModel
from .plan import Raw, hand_out


def encode(rm: ReconfigModel, raw: Raw) -> np.ndarray:
    """A complete point: bits, w = bit·q, used flags and the epigraphs derived (C6–C10)."""
    d, x = rm.data, np.zeros(rm.model.num_cols)
    T = len(d.templates)
    for c, packs in enumerate(raw.packs):
        for pi, count in Counter(packs).items():
            x[rm.g[c, pi]] = count
    per_kind = Counter(k for k, _ in raw.pipelines)
    most: dict[int, int] = {}
    for k, m in raw.pipelines:
        most[k] = max(most.get(k, 0), m)
    pipe = sync = rec = 0
    for k in range(d.kinds):
        n, q = per_kind.get(k, 0), most.get(k, 0)
        x[rm.n[k,]], x[rm.q[k,]], x[rm.y[k,]] = n, q, float(n > 0)
        for j in range(d.bits(k)):
            b = (n >> j) & 1
            x[rm.bit[k, j]], x[rm.w[k, j]] = b, b * q
        if n:
            tau, p, s = (
                (d.templates[k].tau, d.templates[k].p, d.templates[k].sync)
                if k < T
                else (d.kept[k - T].tau, d.kept[k - T].p, d.kept[k - T].sync)
            )
            pipe = max(pipe, (q + p - 1) * tau)
            sync = max(sync, s)
            rec = max(rec, d.recovery_us(k) if k < T else 0)
    x[rm.top["pipe",]], x[rm.top["sync",]], x[rm.top["rec",]] = pipe, sync, rec
    return x


def decode(rm: ReconfigModel, values: np.ndarray) -> Raw:
    """Packings per class, then the pipelines: every kind's pipelines take at most q_k
    micro-batches, M in all (plan.hand_out); a pipeline left with none is dropped (C9)."""
    d, v = rm.data, np.rint(values).astype(np.int64)
    raw = Raw([[] for _ in d.classes])
    for (c, pi), col in rm.g.items():
        raw.packs[c].extend([pi] * int(v[col]))
    kinds, caps = [], []
    for k in range(d.kinds):
        for _ in range(int(v[rm.n[k,]])):
            kinds.append(k)
            caps.append(int(v[rm.q[k,]]))
    shares = hand_out(caps, d.M) or [0] * len(caps)
    raw.pipelines = [(k, m) for k, m in zip(kinds, shares, strict=True) if m > 0]
    return raw

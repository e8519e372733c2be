"""``decomp:layer``, the partition of any shape: one part per layer, its memory per GPU fixed.

In the first objective level the layers are coupled only through memory (C1 per GPU, C6 in
total; "Decomposition by layer" in ``formulations/moe_placement.md``). Fixing how much memory
each layer may use on each GPU, ``M_lg`` with ``Σ_l M_lg ≤ M_g``, makes every layer a problem
of its own, and any answers of the layers join into a placement that keeps C1 and C6.
``M_lg`` is what a plan (the best so far) gives layer ``l`` on GPU ``g`` (:func:`warm_memory`).

:func:`pack_layer` is the greedy a part falls back on: replica counts by the min-max greedy of
the bound, then longest piece first onto the least loaded GPU with room (the GPU with the
fewest free GiB first among equal loads). The identical-GPU shape has its own partition, by
replica budgets (``layer_bins.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import ModelData, Plan


@dataclass(frozen=True)
class LayerPart:
    """Layer ``layer`` on the GPUs ``gpus`` (its C7 group), with ``cap[j]`` GiB on ``gpus[j]``
    (fixed) and ``extra_gib`` GiB for replicas beyond one copy (C6's share, or inf)."""

    layer: int
    gpus: np.ndarray
    cap: np.ndarray
    extra_gib: float
    #: The warm start's layer on ``gpus`` when it fits ``cap`` (x, f), else None.
    warm: tuple[np.ndarray, np.ndarray] | None


def warm_memory(data: ModelData, warm: Plan) -> list[np.ndarray]:
    """(G,) GiB the warm start's layer uses on every GPU, per layer."""
    return [data.mem[i] @ warm.x[i] for i in range(data.L)]


def partition(data: ModelData, warm: Plan, memory: list[np.ndarray]) -> list[LayerPart]:
    """One part per layer: its C7 group (the warm start's), ``memory`` fixed (GiB per GPU)."""
    parts = []
    for i in range(data.L):
        used = np.flatnonzero(warm.x[i].any(axis=0))
        gpus = np.flatnonzero(data.group == data.group[used[0]]) if len(used) else np.arange(0)
        cap = memory[i][gpus]
        fits = bool((data.mem[i] @ warm.x[i][:, gpus] <= cap + 1e-9).all())
        covered = fits and bool(warm.x[i][:, gpus].any(axis=1).all())
        extra = float(data.mem[i] @ np.maximum(warm.x[i].sum(axis=1) - 1, 0))
        parts.append(
            LayerPart(
                layer=i,
                gpus=gpus,
                cap=cap,
                extra_gib=extra if np.isfinite(data.extra_memory_gib) else np.inf,
                warm=(warm.x[i][:, gpus].copy(), warm.f[i][:, gpus].copy()) if covered else None,
            )
        )
    return parts


def replica_counts(work: np.ndarray, extra: int, most: int) -> np.ndarray:
    """``extra`` replicas beyond one copy each, one at a time to the largest work per replica
    (the bound's greedy), at most ``most`` per expert."""
    r = np.ones(len(work), dtype=np.int64)
    for _ in range(max(0, extra)):
        ratio = np.where(r < most, work / r, -1.0)
        e = int(np.argmax(ratio))
        if ratio[e] < 0:
            break
        r[e] += 1
    return r


def pack_layer(
    work: np.ndarray,
    mem: np.ndarray,
    speed: np.ndarray,
    cap: np.ndarray,
    eligible: np.ndarray,
    replica_cap: int,
    extra_gib: float = np.inf,
) -> tuple[np.ndarray, np.ndarray] | None:
    """A layer's (x, f) on GPUs of capacity ``cap`` GiB: replica counts for the memory there
    (:func:`replica_counts`), pieces ``w_e / r_e`` longest first onto the least loaded GPU with
    room (fewest free GiB first among equal loads); tokens split evenly. None when a first copy
    finds no room."""
    E, G = eligible.shape
    size = float(mem.max())
    spare = min(float(cap.sum() - mem.sum()), extra_gib)
    most = min(replica_cap, G)
    reps = replica_counts(work, int(np.floor(spare / size + 1e-9)), most) if spare > 0 else None
    if reps is None:
        reps = np.ones(E, dtype=np.int64)
    x = np.zeros((E, G), dtype=bool)
    load = np.zeros(G)
    free = cap.astype(float).copy()
    pieces = sorted(
        ((float(work[e] / reps[e]), c, e) for e in range(E) for c in range(int(reps[e]))),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    first_left = float(mem.sum())  # memory the first copies still need
    extra_left = extra_gib
    for piece, copy, e in pieces:
        room = eligible[e] & ~x[e] & (free >= mem[e] - 1e-9)
        # an extra copy must leave room for every first copy still to come
        if copy and (extra_left < mem[e] - 1e-9 or free.sum() - mem[e] < first_left - 1e-9):
            continue
        if not room.any():
            if copy == 0:
                return None
            continue
        c = np.flatnonzero(room)
        g = int(c[np.lexsort((c, free[c], (load[c] + piece) / speed[c]))[0]])
        x[e, g] = True
        free[g] -= mem[e]
        load[g] += piece
        if copy == 0:
            first_left -= float(mem[e])
        else:
            extra_left -= float(mem[e])
    f = x / x.sum(axis=1, keepdims=True)
    return x, f

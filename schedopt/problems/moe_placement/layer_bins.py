"""``decomp:layer`` on identical GPUs (every expert the same size, one speed, no C7 groups, no
C6 cap: the real models' shape): each layer as bins, then the bins onto GPUs.

- **budget** (:func:`slot_budgets`): the replicas of each layer, the bound's own exact split of
  the slots over the layers' replica curves (``ModelData.budget_table``), or where that table
  is too large for the time left, the curves priced by one Lagrange multiplier.
- **part** (:func:`bin_layer`): the smallest target load ``T`` for which the layer fits in at
  most ``G`` bins of capacity ``T`` with at most its budget of replicas: experts heavier than
  ``T`` fill whole bins and open one with their rest, the others go whole, heaviest first,
  into the bin they fit best (best-fit decreasing). A bin is one GPU's share of the layer.
- **join** (:func:`assign_bins`): every layer's bins onto GPUs, at most one bin of a layer per
  GPU, within each GPU's slots (C1): the layers with the largest bins first, each layer's
  bins by replica count onto the GPUs with the most slots left, then swaps inside a layer
  repair a GPU over its slots.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, Task
from schedopt.model.decompose import run_parts

from .data import ModelData, Plan

#: Bisection steps of the target load (a part) and of the price of a replica (budgets).
TARGET_STEPS = 20
#: The target search starts this share above its floor and stops within this precision.
TARGET_FIRST_STEP = 0.01
TARGET_PRECISION = 1e-5
PRICE_STEPS = 40
#: Slots per GPU kept free of the budgets on each try, so that the join has room to fit the
#: bins (the first try keeps none: one replica less per GPU cost 4% at OLMoE's 64 GPUs).
JOIN_SLACK_SLOTS = (0, 1, 2)

#: A layer's bins: lists of (expert, work in the bin).
Bins = list[list[tuple[int, float]]]


def identical_slots(data: ModelData) -> np.ndarray | None:
    """Slots per GPU (whole experts of the common size) when the instance has this shape,
    else None."""
    size = float(data.mem[0][0])
    if (
        data.hierarchical
        or np.isfinite(data.extra_memory_gib)
        or not np.allclose(data.speed, data.speed[0])
        or not all(np.allclose(m, size) for m in data.mem)
        or not all(e.all() for e in data.eligible)
    ):
        return None
    return np.floor(data.cap / size + 1e-9).astype(np.int64)


def slot_budgets(
    data: ModelData, slots: np.ndarray, max_cells: int, slack: int = 0
) -> np.ndarray | None:
    """Replicas per layer (module docstring): the exact split of the bound
    (``ModelData.budget_table``) for the slots less ``slack`` per GPU, what the split
    leaves going round robin to the layers with the highest curve; None when the table is not
    built or one copy of everything does not fit."""
    experts = np.array([len(m) for m in data.mem])
    spare = int(slots.sum()) - int(experts.sum())
    if spare < 0:
        return None
    spare = max(0, spare - slack * len(slots))
    curves = data.layer_curves
    table = data.budget_table(max_cells)
    extra = table.split(spare) if table is not None else _priced_split(curves, spare)
    top = experts * (min(data.replica_cap, data.G) - 1)
    extra = np.minimum(extra, top)
    left = spare - int(extra.sum())
    while left > 0 and (extra < top).any():
        at = [float(c[min(int(k), len(c) - 1)]) for c, k in zip(curves, extra, strict=True)]
        for i in np.argsort(-np.array(at), kind="stable"):
            if left > 0 and extra[i] < top[i]:
                extra[i] += 1
                left -= 1
    return experts + extra


def _priced_split(curves: list[np.ndarray], spare: int) -> np.ndarray:
    """Without the exact table (too large for the time left): the minimiser of
    ``c_l(k) + λ k`` per layer for the smallest multiplier ``λ`` (bisection) that fits."""

    def pick(lam: float) -> np.ndarray:
        return np.array([int(np.argmin(c + lam * np.arange(len(c)))) for c in curves])

    lo, hi = 0.0, max(float(c[0]) for c in curves) + 1.0
    if pick(lo).sum() <= spare:
        return pick(lo)
    for _ in range(PRICE_STEPS):
        mid = 0.5 * (lo + hi)
        if pick(mid).sum() > spare:
            lo = mid
        else:
            hi = mid
    return pick(hi)


def pack_bins(work: np.ndarray, cap: float, most_bins: int) -> tuple[Bins, int] | None:
    """The layer in bins of capacity ``cap`` (work units), and its replica count; None when
    it needs more than ``most_bins`` bins."""
    eps = 1e-9 * max(cap, 1e-300)
    bins: Bins = []
    rooms: list[tuple[float, int]] = []  # (room left, bin), ascending
    pieces = 0
    for e in np.flatnonzero(work > cap):
        left = float(work[e])
        while left > cap + eps:
            bins.append([(int(e), cap)])
            left -= cap
            pieces += 1
        bins.append([(int(e), left)])
        pieces += 1
        if cap - left > eps:
            bisect.insort(rooms, (cap - left, len(bins) - 1))
    small = np.flatnonzero(work <= cap)
    for e in small[np.argsort(-work[small], kind="stable")]:
        w = float(work[e])
        pieces += 1
        k = bisect.bisect_left(rooms, (w - eps, -1))
        if k < len(rooms):
            room, b = rooms.pop(k)
            bins[b].append((int(e), w))
            if room - w > eps:
                bisect.insort(rooms, (room - w, b))
        else:
            bins.append([(int(e), w)])
            bisect.insort(rooms, (cap - w, len(bins) - 1))
        if len(bins) > most_bins:
            return None
    return (bins, pieces) if len(bins) <= most_bins else None


def bin_layer(
    work: np.ndarray, speed: float, gpus: int, replicas: int, per_expert: int, floor: float = 0.0
) -> tuple[Bins, float] | None:
    """The smallest target load (µs, by bisection) whose bins fit ``gpus`` GPUs with at most
    ``replicas`` replicas, ``per_expert`` of one expert (C5); the bins and the target. None if
    no target fits. ``floor``: a lower bound on the target (the layer's curve at its budget),
    where the search starts: first ``floor`` itself, then above it in growing steps."""

    def fits(target: float) -> Bins | None:
        if float(work.max()) > per_expert * target * speed * (1 - 1e-9):
            return None
        got = pack_bins(work, target * speed, gpus)
        return None if got is None or got[1] > replicas else got[0]

    low = max(float(work.sum()) / (speed * gpus), floor * (1 - 1e-9))
    top = 1e3 * (low + float(work.max()) / speed) + 1.0
    step = TARGET_FIRST_STEP * low if low > 0 else 1.0
    high = low + step
    best = fits(high)
    while best is None:  # 1%, 3%, 7%, ... above the floor
        if high > top:
            return None
        low, step = high, 2.0 * step
        high += step
        best = fits(high)
    for _ in range(TARGET_STEPS):
        if high - low <= TARGET_PRECISION * high:
            break
        mid = 0.5 * (low + high)
        got = fits(mid)
        if got is None:
            low = mid
        else:
            best, high = got, mid
    return best, high


def assign_bins(layer_bins: list[Bins], slots: np.ndarray) -> list[np.ndarray] | None:
    """Per layer, the GPU of each bin (module docstring), or None when no swap repairs a GPU
    over its slots."""
    G = len(slots)
    left = slots.astype(np.int64).copy()
    out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(layer_bins)
    counts = [np.array([len(b) for b in bins], dtype=np.int64) for bins in layer_bins]
    order = sorted(range(len(layer_bins)), key=lambda i: -int(counts[i].max(initial=0)))
    for i in order:
        c = counts[i]
        if len(c) > G:
            return None
        by_count = np.argsort(-c, kind="stable")
        gpus = np.argsort(-left, kind="stable")[: len(c)]
        where = np.empty(len(c), dtype=np.int64)
        where[by_count] = gpus
        left[where] -= c
        out[i] = where
    for _ in range(4 * G):  # repair: swap a bin off a GPU over its slots
        over = np.flatnonzero(left < 0)
        if not len(over):
            return out
        g = int(over[0])
        if not _swap_off(g, left, out, counts, G):
            return None
    return None if (left < 0).any() else out


def _swap_off(
    g: int, left: np.ndarray, out: list[np.ndarray], counts: list[np.ndarray], G: int
) -> bool:
    """Lower GPU ``g``'s slots by swapping one of its bins with a smaller bin of the same
    layer (or an empty place) on a GPU with room; True if done."""
    need = -int(left[g])
    best = None
    for i, where in enumerate(out):
        mine = np.flatnonzero(where == g)
        if not len(mine):
            continue
        b = int(mine[0])
        holder = np.full(G, -1, dtype=np.int64)
        holder[where] = np.arange(len(where))
        for h in np.argsort(-left, kind="stable"):
            if h == g:
                continue
            other = int(holder[h])
            theirs = 0 if other < 0 else int(counts[i][other])
            gain = int(counts[i][b]) - theirs
            if gain >= need and left[h] >= gain:
                best = (i, b, int(h), other, gain)
                break
            if gain > 0 and left[h] >= gain and (best is None or gain > best[4]):
                best = (i, b, int(h), other, gain)
        if best is not None and best[4] >= need:
            break
    if best is None:
        return False
    i, b, h, other, gain = best
    out[i][b] = h
    if other >= 0:
        out[i][other] = g
    left[g] += gain
    left[h] -= gain
    return True


def to_plan(data: ModelData, layer_bins: list[Bins], where: list[np.ndarray]) -> Plan:
    """The bins on their GPUs as a plan: an expert's share on a GPU is its work there over its
    work (an expert without work: its copies split evenly)."""
    plan = data.empty_plan()
    for i, (bins, gpus) in enumerate(zip(layer_bins, where, strict=True)):
        w = data.work(i)
        for b, g in zip(bins, gpus, strict=True):
            for e, amount in b:
                plan.x[i][e, g] = True
                plan.f[i][e, g] += amount / w[e] if w[e] > 0 else 1.0
        plan.f[i] /= plan.f[i].sum(axis=1, keepdims=True)
    return plan


@dataclass(frozen=True)
class BinInput:
    """A layer of the identical-GPU shape (``layer_bins.py``): its work, the GPUs' speed and
    count, its replica budget and the replica cap. Picklable."""

    layer: int
    work: np.ndarray
    speed: float
    gpus: int
    replicas: int
    per_expert: int
    #: The layer's curve at its budget: no target below it fits (``bin_layer``).
    floor: float = 0.0


def solve_bins_part(inp: BinInput) -> tuple[int, Bins] | None:
    """One layer in bins (``layer_bins.bin_layer``)."""
    got = bin_layer(inp.work, inp.speed, inp.gpus, inp.replicas, inp.per_expert, inp.floor)
    return None if got is None else (inp.layer, got[0])


def bins_round(
    data: ModelData, deadline: Deadline, max_cells: int, share: float, pool: Executor
) -> Plan | None:
    """Identical GPUs only: every layer in bins (tasks run by ``pool``, within ``share`` of
    the time left; a layer is a few bisection steps of packing, no solver), joined onto the
    GPUs, with no slot kept free first, then more (JOIN_SLACK_SLOTS); the budgets' exact
    split if its table has at most ``max_cells`` cells. None where the shape differs, time
    ran out or no join fits."""
    slots = identical_slots(data)
    if slots is None:
        return None
    stop = Deadline(time.perf_counter() + deadline.share(share))
    per_expert = min(data.replica_cap, data.G)
    curves = data.layer_curves
    for slack in JOIN_SLACK_SLOTS:
        budgets = slot_budgets(data, slots, max_cells, slack)
        if budgets is None or stop.expired():
            return None
        tasks = [
            Task(
                f"bins-layer{i}",
                solve_bins_part,
                (
                    BinInput(
                        i,
                        data.work(i),
                        float(data.speed[0]),
                        data.G,
                        int(n),
                        per_expert,
                        float(curves[i][min(int(n) - len(data.mem[i]), len(curves[i]) - 1)]),
                    ),
                ),
            )
            for i, n in enumerate(budgets)
        ]
        answers, _ = run_parts(pool, tasks, stop)
        found: dict[int, Bins] = dict(v for v in answers.values() if v is not None)
        if len(found) < data.L:
            return None
        layer_bins = [found[i] for i in range(data.L)]
        where = assign_bins(layer_bins, slots)
        if where is not None:
            return to_plan(data, layer_bins, where)
    return None

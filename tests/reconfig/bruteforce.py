"""Brute force over the documented plan space of tiny instances (formulations/reconfig.md):
every packing of every host into TP groups, every multiset of pipelines (one TP degree, at most
one slow group each, every contiguous layer partition, every slow position), every split of the
micro-batches. Times and memory come from the validator's own cost model, never from the
model's data. Instances without a current plan (no kept pipelines)."""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

from schedopt.problems.reconfig.instance import ReconfigInstance
from schedopt.problems.reconfig.validate import _Costs

Group = tuple[int, float]  # (t, κ)


def compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    return [
        tuple(b - a for a, b in zip((0, *cut), (*cut, total), strict=True))
        for cut in itertools.combinations(range(1, total), parts - 1)
    ]


def host_packings(healthy: int, slow: list[float], sizes: list[int]) -> set[tuple]:
    """Every multiset of groups (t, κ) a host can give (not only the maximal ones)."""
    out = set()
    for assign in itertools.product([0, *sizes], repeat=len(slow)):
        left = healthy - sum(t - 1 for t in assign if t)
        if left < 0:
            continue
        base = [(t, k) for t, k in zip(assign, slow, strict=True) if t]
        for n in range(left + 1):
            for combo in itertools.combinations_with_replacement(sizes, n):
                if sum(combo) <= left:
                    out.add(tuple(sorted(base + [(t, 1.0) for t in combo])))
    return out


def best_iteration_us(inst: ReconfigInstance) -> int | None:
    """The smallest iteration time (µs) over the plan space, or None if no plan fits."""
    assert inst.current_plan is None and inst.failure_rate_per_hour is None
    c = _Costs(inst)
    L, M = inst.model.layers, inst.micro_batches
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    per_host = max(len(inst.cluster.gpus_on(h)) for h in inst.cluster.hosts())
    sizes = [t for t in inst.tp_sizes if t <= per_host and inst.model.heads % t == 0]
    kappas = sorted(set(slow.values()))

    @cache
    def tau(t: int, p: int, kappa: float) -> int | None:
        """min over partitions and slow positions of the max stage time (memory checked)."""
        best = None
        for sizes_ in compositions(L, p):
            for j in [None] if kappa == 1.0 else range(p):
                if any(
                    c.stage_bytes(n, i == 0, i == p - 1, t, p - i) > c.cap
                    for i, n in enumerate(sizes_)
                ):
                    continue
                worst = max(
                    c.stage_us(n, i == p - 1, t, p, kappa if i == j else 1.0)
                    for i, n in enumerate(sizes_)
                )
                best = worst if best is None else min(best, worst)
        return best

    shapes = []  # (groups used, p, τ, sync)
    for t in sizes:
        for p in range(1, min(L, inst.max_stages) + 1):
            for kappa in [1.0, *kappas]:
                tt = tau(t, p, kappa)
                if tt is None:
                    continue
                need = Counter({(t, 1.0): p})
                if kappa < 1.0:
                    need[(t, 1.0)] -= 1
                    need[(t, kappa)] += 1
                shapes.append((+need, p, tt, c.sync_us(p * t)))
    hosts = []
    for h in inst.cluster.hosts():
        gpus = inst.cluster.gpus_on(h)
        healthy = sum(1 for g in gpus if g not in failed and g not in slow)
        hosts.append(host_packings(healthy, [slow[g] for g in gpus if g in slow], sizes))
    best: int | None = None
    seen: set[tuple] = set()
    for choice in itertools.product(*hosts):
        avail = Counter(g for pk in choice for g in pk)
        key = tuple(sorted(avail.items()))
        if key in seen:
            continue
        seen.add(key)
        for chosen in _multisets(shapes, avail, M):
            for split in _splits(M, len(chosen)):
                pipe = max((m + s[1] - 1) * s[2] for m, s in zip(split, chosen, strict=True))
                t_us = pipe + max(s[3] for s in chosen)
                best = t_us if best is None else min(best, t_us)
    return best


def _multisets(shapes: list, avail: Counter, most: int, start: int = 0, got: tuple = ()):
    if got:
        yield got
    if len(got) == most:
        return
    for i in range(start, len(shapes)):
        need = shapes[i][0]
        if all(avail[g] >= n for g, n in need.items()):
            yield from _multisets(shapes, avail - need, most, i, (*got, shapes[i]))


def _splits(total: int, parts: int):
    return compositions(total, parts) if parts <= total else []

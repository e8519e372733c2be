"""Brute force over the documented plan space of tiny instances (formulations/reconfig.md):
every packing of every host into TP groups, every multiset of pipelines (one TP degree, at most
one slow group each, every contiguous layer partition, every slow position), every split of the
micro-batches. Times and memory come from the validator's own cost model, never from the
model's data. Instances without a current plan (no kept pipelines)."""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

from schedopt.problems.reconfig.instance import Pipeline, ReconfigInstance, Stage
from schedopt.problems.reconfig.solution import ReconfigSolution
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


# --- the physical plan space (V1–V5 and max_stages; #17 item 3) ------------------------------
#
# Every stage a TP group of t GPUs of one host (t allowed, dividing the heads), any GPUs of it
# (slow ones as they are: the group runs at its slowest), TP free to differ between stages,
# any number of slow groups per pipeline; every contiguous layer partition; every split of the
# micro-batches. GPUs of one host with the same speed are interchangeable, so a group is
# (host, the speeds of its GPUs) and a pipeline is kept, per (GPUs it uses, stages), with its
# smallest stage time only (the all-reduce depends on its GPU count alone).

Use = tuple[tuple[int, float, int], ...]  # (host, κ, GPUs of that speed) used, sorted


def _groups(inst: ReconfigInstance, sizes: list[int]) -> tuple[list[Counter], list[tuple]]:
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    avail: list[Counter] = []
    groups = []  # (host, t, κ of the group, Counter of κ used)
    for h_i, h in enumerate(inst.cluster.hosts()):
        speeds = Counter(slow.get(g, 1.0) for g in inst.cluster.gpus_on(h) if g not in failed)
        avail.append(speeds)
        for t in sizes:
            pool = [k for k, n in speeds.items() for _ in range(n)]
            for combo in set(itertools.combinations(sorted(pool), t)):
                groups.append((h_i, t, min(combo), Counter(combo)))
    return avail, groups


def physical_best(inst: ReconfigInstance) -> tuple[int, list] | None:
    """(the smallest iteration time in µs, a plan achieving it as [(groups, sizes, m)]) over
    the physical plan space, or None if no physical plan exists."""
    assert inst.current_plan is None and inst.failure_rate_per_hour is None
    c = _Costs(inst)
    L, M = inst.model.layers, inst.micro_batches
    sizes = [t for t in inst.tp_sizes if inst.model.heads % t == 0]
    avail, groups = _groups(inst, sizes)
    room = c.cap + 1e-6 * c.cap

    def best_partition(seq: tuple) -> tuple[int, tuple[int, ...]] | None:
        p, best = len(seq), None
        for parts in compositions(L, p):
            if any(
                c.stage_bytes(n, i == 0, i == p - 1, g[1], p - i) > room
                for i, (n, g) in enumerate(zip(parts, seq, strict=True))
            ):
                continue
            tau = max(
                c.stage_us(n, i == p - 1, g[1], p, g[2])
                for i, (n, g) in enumerate(zip(parts, seq, strict=True))
            )
            if best is None or tau < best[0]:
                best = (tau, parts)
        return best

    def fits(use: list[Counter]) -> bool:
        return all(u[k] <= a[k] for u, a in zip(use, avail, strict=True) for k in u)

    shapes: dict[tuple, tuple[int, tuple, tuple[int, ...]]] = {}  # (use, p) -> (τ, seq, parts)

    def extend(seq: tuple, use: list[Counter]) -> None:
        if seq:
            found = best_partition(seq)
            key = (tuple(tuple(sorted(u.items())) for u in use), len(seq))
            if found is not None and (key not in shapes or found[0] < shapes[key][0]):
                shapes[key] = (found[0], seq, found[1])
        if len(seq) == min(L, inst.max_stages):
            return
        for g in groups:
            more = [Counter(u) for u in use]
            more[g[0]] += g[3]
            if fits(more):
                extend((*seq, g), more)

    extend((), [Counter() for _ in avail])
    items = [
        (
            [Counter(dict(u)) for u in use],
            p,
            tau,
            c.sync_us(sum(g[1] for g in seq)),
            seq,
            parts,
        )
        for (use, p), (tau, seq, parts) in shapes.items()
    ]
    best: tuple[int, list] | None = None

    def choose(start: int, left: list[Counter], got: list) -> None:
        nonlocal best
        if got:
            for split in _splits(M, len(got)):
                pipe = max((m + it[1] - 1) * it[2] for m, it in zip(split, got, strict=True))
                t_us = pipe + max(it[3] for it in got)
                if best is None or t_us < best[0]:
                    best = (t_us, [(it[4], it[5], m) for it, m in zip(got, split, strict=True)])
        if len(got) == M:
            return
        for i in range(start, len(items)):
            use = items[i][0]
            if all(u[k] <= a[k] for u, a in zip(use, left, strict=True) for k in u):
                choose(i, [a - u for a, u in zip(left, use, strict=True)], [*got, items[i]])

    choose(0, [Counter(a) for a in avail], [])
    return best


def physical_plan(inst: ReconfigInstance, plan: list) -> ReconfigSolution:
    """The concrete plan of ``physical_best``: GPUs of the right host and speed handed out."""
    failed, slow = set(inst.failed_gpus), inst.slow_factor
    hosts = list(inst.cluster.hosts())
    free = {h: [g for g in inst.cluster.gpus_on(h) if g not in failed] for h in hosts}
    pipes = []
    for seq, parts, m in plan:
        stages, at = [], 0
        for (h_i, _, _, need), n in zip(seq, parts, strict=True):
            gpus = []
            for kappa, count in need.items():
                for _ in range(count):
                    g = next(g for g in free[hosts[h_i]] if slow.get(g, 1.0) == kappa)
                    free[hosts[h_i]].remove(g)
                    gpus.append(g)
            stages.append(Stage(layer_start=at, layer_end=at + n, gpus=tuple(gpus)))
            at += n
        pipes.append(Pipeline(stages=tuple(stages), micro_batches=m))
    return ReconfigSolution(pipelines=tuple(pipes))

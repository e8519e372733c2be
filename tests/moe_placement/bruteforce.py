"""Exhaustive reference solver for tiny MoE placement instances (tests only).

It shares no code with the package's models: every expert gets every non-empty subset of GPUs
as its replica set; placements breaking memory, the replica caps or the group rule are
skipped. For a fixed placement the best token split of a layer is known in closed form: by the
supply–demand theorem (Gale; max-flow min-cut on the expert→GPU bipartite graph) a layer can
finish within z iff every set S of experts has Σ_{e∈S} w_e <= z · Σ_{g ∈ N(S)} s_g, so the
optimal max load is max_S Σ_S w_e / Σ_{N(S)} s_g.
"""

from __future__ import annotations

import itertools
import math

from schedopt.problems.moe_placement import MoePlacementInstance


def best_split_max_load(work: list[float], replicas: list[frozenset[str]], speed) -> float:
    best = 0.0
    n = len(work)
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            need = sum(work[e] for e in subset)
            if need <= 0:
                continue
            hood = set().union(*(replicas[e] for e in subset))
            best = max(best, need / sum(speed[g] for g in hood))
    return best


def best_layer_time(inst: MoePlacementInstance) -> float | None:
    """min over placements of Σ_l (optimal max load of layer l); None if nothing fits."""
    gpus = list(inst.cluster.gpus())
    speed = {g: inst.cluster.gpu(g).speed for g in gpus}
    free = {g: inst.cluster.gpu(g).memory_gib - inst.dense_memory_gib for g in gpus}
    subsets = [
        frozenset(c) for k in range(1, len(gpus) + 1) for c in itertools.combinations(gpus, k)
    ]
    if inst.max_replicas_per_expert is not None:
        subsets = [s for s in subsets if len(s) <= inst.max_replicas_per_expert]
    experts = [(li, e) for li, layer in enumerate(inst.layers) for e in layer.experts]
    host = {g: inst.cluster.host_of(g) for g in gpus}
    best: float | None = None
    for choice in itertools.product(subsets, repeat=len(experts)):
        used = dict.fromkeys(gpus, 0.0)
        extra = 0.0
        for (_, e), reps in zip(experts, choice, strict=True):
            for g in reps:
                used[g] += e.memory_gib
            extra += (len(reps) - 1) * e.memory_gib
        if any(used[g] > free[g] + 1e-9 for g in gpus):
            continue
        if inst.max_extra_memory_gib is not None and extra > inst.max_extra_memory_gib + 1e-9:
            continue
        total = 0.0
        ok = True
        for li in range(len(inst.layers)):
            reps = [c for (lj, _), c in zip(experts, choice, strict=True) if lj == li]
            if inst.layer_within.value == "host" and len({host[g] for r in reps for g in r}) > 1:
                ok = False
                break
            pop = inst.point_popularity(li)
            work = [
                p * e.compute_us_per_token
                for p, e in zip(pop, inst.layers[li].experts, strict=True)
            ]
            total += best_split_max_load(work, reps, speed)
        if ok and (best is None or total < best):
            best = total
    return best if best is None or math.isfinite(best) else None

"""First-slot placement: which GPUs each running job gets.

Best fit, largest first. Jobs wider than a host take whole free hosts, under one leaf switch
when one has enough. Because gang sizes are powers of two and the counts satisfy C3, this never
fails (see the argument under C3 in ``formulations/admission.md``); a failure is a bug.
"""

from __future__ import annotations

from collections import defaultdict

from .instance import AdmissionInstance


def place_first_slot(
    inst: AdmissionInstance, demands: dict[str, tuple[str, int]]
) -> dict[str, tuple[str, ...]]:
    """``demands``: job id → (GPU type, count) in slot 0. Returns job id → GPU ids."""
    cluster = inst.cluster
    unavailable = set(inst.unavailable_gpus)
    free: dict[str, list[str]] = {
        h: [g for g in cluster.gpus_on(h) if g not in unavailable] for h in cluster.hosts()
    }
    host_type = inst.host_type
    sigma = inst.host_size
    placement: dict[str, tuple[str, ...]] = {}
    # Largest first; ties by job id so the result is deterministic.
    for job_id, (g, n) in sorted(demands.items(), key=lambda kv: (-kv[1][1], kv[0])):
        if n > sigma[g]:
            hosts = _whole_hosts(inst, free, g, n // sigma[g])
            gpus = [gpu for h in hosts for gpu in free[h]]
            for h in hosts:
                free[h] = []
        else:
            candidates = [h for h in free if host_type[h] == g and len(free[h]) >= n]
            if not candidates:
                raise RuntimeError(f"placement failed for {job_id!r} ({n}×{g}): C3 was violated")
            host = min(candidates, key=lambda h: (len(free[h]), h))  # best fit
            gpus, free[host] = free[host][:n], free[host][n:]
        placement[job_id] = tuple(gpus)
    return placement


def _whole_hosts(inst: AdmissionInstance, free, g: str, count: int) -> list[str]:
    size = inst.host_size[g]
    whole = [
        h
        for h in free
        if inst.host_type[h] == g and len(free[h]) == size == len(inst.cluster.gpus_on(h))
    ]
    if len(whole) < count:
        raise RuntimeError(f"placement failed: {count} whole {g} hosts needed, {len(whole)} free")
    by_leaf: dict[str | None, list[str]] = defaultdict(list)
    for h in whole:
        by_leaf[inst.cluster.leaf_of(h)].append(h)
    # One leaf that has enough (the tightest such leaf keeps bigger leaves whole) ...
    fitting = [hs for hs in by_leaf.values() if len(hs) >= count]
    if fitting:
        return sorted(min(fitting, key=lambda hs: (len(hs), hs[0])))[:count]
    # ... else as few leaves as possible: the fullest leaves first.
    chosen: list[str] = []
    for hs in sorted(by_leaf.values(), key=lambda hs: (-len(hs), hs[0])):
        chosen.extend(sorted(hs)[: count - len(chosen)])
        if len(chosen) == count:
            break
    return chosen

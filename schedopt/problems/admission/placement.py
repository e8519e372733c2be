"""First-slot placement: which GPUs each running job gets.

Best fit, largest first. Jobs wider than a host take whole free hosts, under one leaf switch
when one has enough. Because gang sizes are powers of two and the counts satisfy C3, this never
fails (see the argument under C3 in ``formulations/admission.md``); a failure is a bug. A host
is a (host, GPU type) group (``AdmissionInstance.gpu_groups``), as in C3.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from .instance import AdmissionInstance

Group = tuple[str, str]  # (host, GPU type)


def place_first_slot(
    inst: AdmissionInstance, demands: dict[str, tuple[str, int]]
) -> dict[str, tuple[str, ...]]:
    """``demands``: job id → (GPU type, count) in slot 0. Returns job id → GPU ids."""
    free: dict[Group, list[str]] = {k: list(v) for k, v in inst.free_gpus_by_group.items()}
    sigma = inst.host_size
    placement: dict[str, tuple[str, ...]] = {}
    fit = _BestFit(free)
    # Largest first; ties by job id so the result is deterministic.
    for job_id, (g, n) in sorted(demands.items(), key=lambda kv: (-kv[1][1], kv[0])):
        if n > sigma[g]:
            groups = _whole_hosts(inst, free, g, n // sigma[g])
            gpus = [gpu for k in groups for gpu in free[k]]
            for k in groups:
                free[k] = []
        else:
            best = fit.smallest_fitting(g, n, sigma[g])
            if best is None:
                raise RuntimeError(f"placement failed for {job_id!r} ({n}×{g}): C3 was violated")
            gpus, free[best] = free[best][:n], free[best][n:]
            fit.moved(best)
        placement[job_id] = tuple(gpus)
    return placement


class _BestFit:
    """Best fit, the group with the fewest free GPUs that still fit, ties by group id: the
    groups sit in one heap per (GPU type, free count), so a job costs O(σ log hosts) instead
    of a scan of every host (a scan took 3 s for 5,000 first-slot jobs on 1,024 hosts).
    Entries whose group has changed count since are dropped when met (counts only fall)."""

    def __init__(self, free: dict[Group, list[str]]):
        self._free = free
        self._heaps: dict[tuple[str, int], list[Group]] = defaultdict(list)
        for k in sorted(free):
            self.moved(k)

    def moved(self, k: Group) -> None:
        if self._free[k]:
            heapq.heappush(self._heaps[k[1], len(self._free[k])], k)

    def smallest_fitting(self, gpu_type: str, n: int, most: int) -> Group | None:
        for count in range(n, most + 1):
            heap = self._heaps.get((gpu_type, count))
            while heap and len(self._free[heap[0]]) != count:
                heapq.heappop(heap)  # stale: that group has fewer free GPUs now
            if heap:
                return heap[0]
        return None


def _whole_hosts(inst: AdmissionInstance, free, g: str, count: int) -> list[Group]:
    size = inst.host_size[g]
    whole = [k for k in free if k[1] == g and len(free[k]) == size == len(inst.gpu_groups[k])]
    if len(whole) < count:
        raise RuntimeError(f"placement failed: {count} whole {g} hosts needed, {len(whole)} free")
    by_leaf: dict[str | None, list[Group]] = defaultdict(list)
    for k in whole:
        by_leaf[inst.cluster.leaf_of(k[0])].append(k)
    # One leaf that has enough (the tightest such leaf keeps bigger leaves whole) ...
    fitting = [ks for ks in by_leaf.values() if len(ks) >= count]
    if fitting:
        tightest = min(fitting, key=lambda ks: (len(ks), ks[0]))
        return sorted(tightest)[:count]
    # ... else as few leaves as possible: the fullest leaves first.
    chosen: list[Group] = []
    for ks in sorted(by_leaf.values(), key=lambda ks: (-len(ks), ks[0])):
        chosen.extend(sorted(ks)[: count - len(chosen)])
        if len(chosen) == count:
            break
    return chosen

"""``eplb``: DeepSeek's expert-parallel load balancer (EPLB) adapted to memory budgets.

Greedy replication (repeatedly give one more replica to the expert with the largest work per
replica, while it exceeds ``stop_ratio`` × the layer's fair per-GPU share and memory, the
replica cap and the extra-memory cap allow), then balanced longest-processing-time (LPT)
packing of the replicas, layer by layer (with equal-size experts, each GPU takes its quota of
the layer's replicas: EPLB's equal-count packing). Hierarchical when the shape allows (more
than one host in the layer's group, hosts of at least two GPUs, every expert's replicas fit
one host): experts (with their replicas) are packed to hosts first, then replicas to the GPUs
inside each host; global LPT otherwise. Tokens are split evenly among an expert's replicas.
"""

from __future__ import annotations

import heapq

import numpy as np

from schedopt.core.stopping import Deadline, Ticker

from .data import ModelData, Plan
from .heuristic_params import EplbParams, LocalSearchParams

EPS = 1e-12


def _layer_groups(data: ModelData) -> list[int] | None:
    """C7: a group for every layer, balancing memory (every layer would rather have the
    fastest group; groups compete only for memory). None if a layer fits no group."""
    if not data.hierarchical:
        return [0] * data.L
    free = np.array([data.cap[data.group == k].sum() for k in range(data.n_groups)])
    speed = np.array([data.speed[data.group == k].sum() for k in range(data.n_groups)])
    out = [0] * data.L
    for i in sorted(range(data.L), key=lambda i: -float(data.mem[i].sum())):
        need = float(data.mem[i].sum())
        ok = [k for k in range(data.n_groups) if free[k] >= need - 1e-9]
        if not ok:
            return None
        k = max(ok, key=lambda k: (speed[k], free[k] - need, -k))
        out[i] = k
        free[k] -= need
    return out


def _replicate(
    data: ModelData, groups: list[int], params: EplbParams | LocalSearchParams
) -> list[np.ndarray]:
    """Replica counts r[l][e] by the greedy of EPLB, within the memory budgets."""
    reps = [np.ones(len(m), dtype=np.int64) for m in data.mem]
    single = np.zeros(data.n_groups)
    for i, k in enumerate(groups):
        single[k] += data.mem[i].sum()
    size = float(data.mem[0][0])
    if all(np.allclose(m, size) for m in data.mem):  # equal sizes: count whole slots
        cap = np.floor(data.cap / size + 1e-9) * size
    else:
        cap = data.cap
    left = (
        np.array([cap[data.group == k].sum() - single[k] for k in range(data.n_groups)])
        * params.replica_budget
    )
    extra = data.extra_memory_gib * (1.0 if params.replica_budget >= 1 else params.replica_budget)
    heap: list[tuple[float, int, int]] = []  # (-work per replica / fair share, layer, expert)
    fair = []
    for i, k in enumerate(groups):
        w = data.work(i)
        in_k = data.group == k
        fair.append(float(w.sum()) / float(data.speed[in_k].sum()) if w.sum() > 0 else 0.0)
        for e in range(len(w)):
            if w[e] > 0:
                heapq.heappush(heap, (-(w[e] / max(fair[i], EPS)), i, e))
    while heap:
        neg, i, e = heapq.heappop(heap)
        if -neg <= params.stop_ratio:
            break
        k = groups[i]
        m = float(data.mem[i][e])
        eligible = int(data.eligible[i][e][data.group == k].sum())
        if reps[i][e] >= min(data.replica_cap, eligible) or m > left[k] + 1e-9 or m > extra + 1e-9:
            continue
        reps[i][e] += 1
        left[k] -= m
        extra -= m
        heapq.heappush(heap, (-(data.work(i)[e] / reps[i][e] / max(fair[i], EPS)), i, e))
    return reps


def _pack_layer(
    data: ModelData,
    plan: Plan,
    i: int,
    gpus: np.ndarray,
    reps: np.ndarray,
    free: np.ndarray,
    reserve: np.ndarray,
    hierarchical: bool,
    quota: np.ndarray | None = None,
) -> bool:
    """LPT-pack layer ``i``'s replicas onto ``gpus``; False if a first copy does not fit.
    ``quota``: at most that many of the layer's replicas per GPU (EPLB's equal-count packing,
    used when every expert has the same size); otherwise ``reserve`` GiB stay free."""
    w = data.work(i)
    mem = data.mem[i]
    load = np.zeros(data.G)
    count = np.zeros(data.G, dtype=np.int64)  # this layer's replicas per GPU
    order = sorted(range(len(w)), key=lambda e: (-w[e] / reps[e], -mem[e], e))
    host_of = data.host[gpus]
    hosts = np.unique(host_of)
    # The shape allows the hierarchy when there are several hosts of >= 2 GPUs and every
    # expert's replicas fit inside one host.
    smallest = min(int((host_of == h).sum()) for h in hosts)
    use_hosts = hierarchical and len(hosts) > 1 and smallest >= 2 and int(reps.max()) <= smallest
    if use_hosts:
        host_load = {int(h): 0.0 for h in hosts}
        host_speed = {int(h): float(data.speed[gpus[host_of == h]].sum()) for h in hosts}
    for e in sorted(order, key=lambda e: (-w[e], e)) if use_hosts else order:
        candidates = gpus[data.eligible[i][e, gpus]]
        if use_hosts:
            # Step 1: the expert, with all its replicas, to the least loaded host that has room.
            best_h = None
            for h in sorted(host_load, key=lambda h: (host_load[h] / host_speed[h], h)):
                on_h = candidates[data.host[candidates] == h]
                if (free[on_h] >= mem[e] - 1e-9).sum() >= 1:
                    best_h = h
                    break
            if best_h is not None:
                candidates = candidates[data.host[candidates] == best_h]
                host_load[best_h] += float(w[e])
        placed = 0
        for copy in range(int(reps[e])):
            if quota is None:
                room = free[candidates] - mem[e] >= reserve[candidates] - 1e-9
            else:
                room = (count[candidates] < quota[candidates]) & (free[candidates] >= mem[e] - 1e-9)
            room &= ~plan.x[i][e, candidates]
            if not room.any() and copy == 0:  # a first copy may eat into the reserve
                room = (free[candidates] >= mem[e] - 1e-9) & ~plan.x[i][e, candidates]
            if not room.any():
                break
            c = candidates[room]
            part = w[e] / reps[e]
            key = (load[c] + part) / data.speed[c]
            g = int(c[np.lexsort((-free[c], data.comm[c], key))[0]])
            plan.x[i][e, g] = True
            free[g] -= mem[e]
            load[g] += part
            count[g] += 1
            placed += 1
        if placed == 0:
            return False
        on = np.flatnonzero(plan.x[i][e])
        plan.f[i][e, on] = 1.0 / len(on)
    return True


def run_eplb(
    data: ModelData, params: EplbParams | LocalSearchParams, stop: Deadline | None = None
) -> Plan | None:
    """EPLB's placement of every layer (None: no packing fits); past ``stop`` it raises
    :class:`DeadlineReached` (a placement missing layers is no answer)."""
    tick = Ticker(stop, "placing experts (EPLB)", every=1)
    groups = _layer_groups(data)
    if groups is None:
        return None
    hierarchical = bool(getattr(params, "hierarchical", 1))
    for scale in (1.0, 0.9, 0.7, 0.4, 0.0):  # less replica memory when the packing fails
        p = EplbParams(params.replica_budget * scale, params.stop_ratio, int(hierarchical))
        reps = _replicate(data, groups, p)
        plan = data.empty_plan()
        free = data.cap.copy()
        # Memory the layers not packed yet will need (with their replicas), per group; each
        # GPU keeps its proportional part of it free, so early layers cannot starve late ones.
        need = [float(data.mem[i] @ reps[i]) for i in range(data.L)]
        future = np.zeros(data.n_groups)
        for i, k in enumerate(groups):
            future[k] += need[i]
        size = float(data.mem[0][0])
        uniform = all(np.allclose(m, size) for m in data.mem)
        ok = True
        for i in sorted(range(data.L), key=lambda i: (-need[i], i)):
            tick()
            k = groups[i]
            gpus = np.flatnonzero(data.group == k)
            future[k] -= need[i]
            total = free[gpus].sum()
            reserve = np.zeros(data.G)
            reserve[gpus] = free[gpus] * (future[k] / total if total > 0 else 0.0)
            quota = _quota(free, gpus, int(reps[i].sum()), size) if uniform else None
            if not _pack_layer(data, plan, i, gpus, reps[i], free, reserve, hierarchical, quota):
                ok = False
                break
        if ok:
            _fill(data, plan, reps, free, groups, hierarchical)
            return plan
    return _memory_first_fit(data, groups)


def _quota(free: np.ndarray, gpus: np.ndarray, items: int, size: float) -> np.ndarray:
    """Equal-size experts: the layer's ``items`` replicas spread over ``gpus`` in proportion to
    their free slots (largest remainder), never above a GPU's free slots."""
    slots = np.floor(free[gpus] / size + 1e-9)
    quota = np.zeros(len(free))
    total = slots.sum()
    if total <= 0:
        return quota
    want = min(items, total) * slots / total
    base = np.minimum(np.floor(want), slots)
    left = int(min(items, total) - base.sum())
    for j in np.argsort(-(want - base), kind="stable"):
        if left <= 0:
            break
        if base[j] < slots[j]:
            base[j] += 1
            left -= 1
    quota[gpus] = base
    return quota


def _fill(
    data: ModelData,
    plan: Plan,
    reps: list[np.ndarray],
    free: np.ndarray,
    groups: list[int],
    hierarchical: bool,
) -> None:
    """Replicas the packing dropped (its reserves round memory per layer) go wherever memory
    is left at the end, hottest per replica first, to the GPU where the layer is least loaded;
    the expert's tokens are then split evenly again (hierarchical: inside the expert's host)."""
    heap: list[tuple[float, int, int]] = []  # (-work per replica, layer, expert)
    for i in range(data.L):
        w = data.work(i)
        placed = plan.x[i].sum(axis=1)
        for missing in np.flatnonzero(placed < reps[i]):
            heapq.heappush(heap, (-w[missing] / placed[missing], i, int(missing)))
    while heap:
        _, i, e = heapq.heappop(heap)
        x = plan.x[i]
        ok = (
            (data.group == groups[i])
            & data.eligible[i][e]
            & ~x[e]
            & (free >= data.mem[i][e] - 1e-9)
        )
        if hierarchical and int(reps[i].max()) <= _smallest_host(data, groups[i]):
            ok &= np.isin(data.host, data.host[x[e]])
        if not ok.any() or x[e].sum() >= reps[i][e]:
            continue
        load = data.layer_loads(plan, i)
        c = np.flatnonzero(ok)
        g = int(c[np.argmin(load[c])])
        x[e, g] = True
        free[g] -= data.mem[i][e]
        on = np.flatnonzero(x[e])
        plan.f[i][e] = 0.0
        plan.f[i][e, on] = 1.0 / len(on)
        if x[e].sum() < reps[i][e]:
            heapq.heappush(heap, (-data.work(i)[e] / x[e].sum(), i, e))


def _smallest_host(data: ModelData, group: int) -> int:
    hosts = data.host[data.group == group]
    return int(min(np.sum(hosts == h) for h in np.unique(hosts)))


def _memory_first_fit(data: ModelData, groups: list[int]) -> Plan | None:
    """Last resort: one copy of every expert, first-fit decreasing by memory."""
    plan = data.empty_plan()
    free = data.cap.copy()
    items = sorted(
        ((float(data.mem[i][e]), i, e) for i in range(data.L) for e in range(len(data.mem[i]))),
        reverse=True,
    )
    for m, i, e in items:
        gpus = np.flatnonzero((data.group == groups[i]) & (free >= m - 1e-9))
        if not len(gpus):
            return None
        g = int(gpus[np.argmax(free[gpus])])
        plan.x[i][e, g] = True
        plan.f[i][e, g] = 1.0
        free[g] -= m
    return plan

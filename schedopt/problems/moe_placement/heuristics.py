"""Heuristic fallbacks for MoE expert placement.

- ``eplb``: DeepSeek's expert-parallel load balancer (EPLB) adapted to memory budgets. Greedy
  replication (repeatedly give one more replica to the expert with the largest work per
  replica, while it exceeds ``stop_ratio`` × the layer's fair per-GPU share and memory, the
  replica cap and the extra-memory cap allow), then balanced longest-processing-time (LPT)
  packing of the replicas, layer by layer (with equal-size experts, each GPU takes its quota of
  the layer's replicas: EPLB's equal-count packing). Hierarchical when the shape allows (more
  than one host in the layer's group, hosts of at least two GPUs, every expert's replicas fit
  one host): experts (with their replicas) are packed to hosts first, then replicas to the GPUs
  inside each host; global LPT otherwise. Tokens are split evenly among an expert's replicas.
- ``local-search``: starts from ``eplb`` and, layer by layer, lowers the most loaded GPU by
  shifting token share to another replica, moving or swapping replicas, or adding a replica,
  while the memory (C1), replica (C5, C6) and group (C7) constraints keep holding.

Parameters are frozen dataclasses with a ``SPACE`` so that :mod:`schedopt.tuning` can tune them.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from schedopt.core.options import SolveOptions, method_params
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, Ticker

from .data import ModelData, Plan, build_data
from .instance import MoePlacementInstance

EPS = 1e-12

#: A local-search move: (the new max load of the GPU pair, kind, the kind's payload).
_Move = tuple[float, str, tuple[Any, ...]]


@dataclass(frozen=True)
class EplbParams:
    """``replica_budget``: fraction of the memory left after one copy of every expert that
    replicas may take; ``stop_ratio``: replicate while work per replica exceeds this times the
    layer's fair per-GPU share; ``hierarchical``: 1 packs to hosts then GPUs when possible."""

    replica_budget: float = 1.0
    stop_ratio: float = 0.5
    hierarchical: int = 1

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "replica_budget": (0.0, 1.0),
        "stop_ratio": (0.1, 2.0),
        "hierarchical": (0, 1),
    }


@dataclass(frozen=True)
class LocalSearchParams:
    """EPLB start (``replica_budget``, ``stop_ratio``) and the moves: ``replicate`` 1 allows
    adding replicas, ``swap`` 1 allows swapping two replicas; ``max_iterations`` per layer."""

    replica_budget: float = 1.0
    stop_ratio: float = 0.5
    replicate: int = 1
    swap: int = 1
    max_iterations: int = 400

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "replica_budget": (0.0, 1.0),
        "stop_ratio": (0.1, 2.0),
        "replicate": (0, 1),
        "swap": (0, 1),
        "max_iterations": (50, 2000),
    }


# --- EPLB ------------------------------------------------------------------------------------
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


# --- local search ----------------------------------------------------------------------------
class _State:
    """Memory, extra memory and group bookkeeping shared by every layer's moves."""

    def __init__(self, data: ModelData, plan: Plan):
        self.data = data
        self.plan = plan
        used = np.zeros(data.G)
        extra = 0.0
        for i in range(data.L):
            used += data.mem[i] @ plan.x[i]
            extra += float(data.mem[i] @ np.maximum(plan.x[i].sum(axis=1) - 1, 0))
        self.free = data.cap - used
        self.extra_left = data.extra_memory_gib - extra
        self.group_of_layer = [
            int(data.group[np.flatnonzero(plan.x[i].any(axis=0))[0]]) for i in range(data.L)
        ]
        self.loads = [data.layer_loads(plan, i) for i in range(data.L)]

    def trade(self, i: int, e: int, h: int, need: float) -> bool:
        """Free ``need`` GiB on GPU ``h`` for layer ``i`` by dropping one replica of another
        layer's expert that has other replicas, its tokens going to its least loaded other
        replica, only if that layer's max load does not grow (so the objective cannot get
        worse). True when done."""
        data, plan = self.data, self.plan
        for j in range(data.L):
            if j == i:
                continue
            xj, fj, lj = plan.x[j], plan.f[j], self.loads[j]
            top = float(lj.max())
            for e2 in np.flatnonzero(xj[:, h]):
                if data.mem[j][e2] < need - 1e-9 or xj[e2].sum() < 2:
                    continue
                others = np.flatnonzero(xj[e2])
                others = others[others != h]
                g2 = int(others[np.argmin(lj[others])])
                w2 = float(data.work(j)[e2])
                moved = w2 * fj[e2, h]
                if lj[g2] + moved / data.speed[g2] > top + 1e-12 * max(top, 1.0):
                    continue
                xj[e2, h] = False
                fj[e2, g2] += fj[e2, h]
                fj[e2, h] = 0.0
                lj[h] -= moved / data.speed[h]
                lj[g2] += moved / data.speed[g2]
                self.free[h] += data.mem[j][e2]
                self.extra_left += data.mem[j][e2]
                return True
        return False


def _improve_layer(
    st: _State, i: int, params: LocalSearchParams, deadline: Deadline, trade: bool = False
) -> None:
    data, plan = st.data, st.plan
    w, mem, s = data.work(i), data.mem[i], data.speed
    x, f = plan.x[i], plan.f[i]
    allowed = (
        data.group == st.group_of_layer[i] if data.hierarchical else np.ones(data.G, dtype=bool)
    )
    allowed_idx = np.flatnonzero(allowed)
    load = st.loads[i]  # kept up to date in place
    for it in range(params.max_iterations):
        if it % 4 == 0 and deadline.expired():
            return
        g = int(np.argmax(load))
        top = float(load[g])
        if top <= EPS:
            return
        best: _Move | None = None
        for e in np.flatnonzero(x[:, g]):
            part = w[e] * f[e, g]  # µs·speed of expert e on g
            if w[e] <= 0:
                continue
            # (a) shift share to another replica of e
            for h in np.flatnonzero(x[e]):
                if h == g:
                    continue
                t = (load[g] - load[h]) / (1 / s[g] + 1 / s[h])
                t = min(t, part)
                if t <= EPS:
                    continue
                new = max(load[g] - t / s[g], load[h] + t / s[h])
                if best is None or new < best[0]:
                    best = (new, "shift", (e, h, t))
            # (b) move the replica to a GPU without e
            for h in allowed_idx:
                if x[e, h] or not data.eligible[i][e, h] or st.free[h] < mem[e] - 1e-9:
                    continue
                new = max(load[g] - part / s[g], load[h] + part / s[h])
                if best is None or new < best[0]:
                    best = (new, "move", (e, h))
                # (d) add a replica on h and split the tokens
                if (
                    params.replicate
                    and x[e].sum() < data.replica_cap
                    and st.extra_left >= mem[e] - 1e-9
                ):
                    t = min(part, (load[g] - load[h]) / (1 / s[g] + 1 / s[h]))
                    if t > EPS:
                        new = max(load[g] - t / s[g], load[h] + t / s[h])
                        if best is None or new < best[0] - 1e-9 * top:
                            best = (new + 1e-12 * top, "replicate", (e, h, t))
            # (c) swap with a replica of another expert on h
            if params.swap:
                for h in allowed_idx:
                    if h == g or x[e, h] or not data.eligible[i][e, h]:
                        continue
                    for e2 in np.flatnonzero(x[:, h] & ~x[:, g]):
                        if not data.eligible[i][e2, g]:
                            continue
                        dm = mem[e] - mem[e2]
                        if st.free[h] < dm - 1e-9 or st.free[g] < -dm - 1e-9:
                            continue
                        part2 = w[e2] * f[e2, h]
                        new = max(load[g] + (part2 - part) / s[g], load[h] + (part - part2) / s[h])
                        if best is None or new < best[0]:
                            best = (new, "swap", (e, h, e2))
        if (best is None or best[0] >= top * (1 - 1e-9) - EPS) and trade:
            # (e) at a local optimum: take a slot from another layer for a new replica here
            best = _trade_move(st, i, g, load, top)
        if best is None or best[0] >= top * (1 - 1e-9) - EPS:
            return
        _, kind, pay = best
        if kind == "shift":
            e, h, t = pay
            f[e, g] -= t / w[e]
            f[e, h] += t / w[e]
            load[g] -= t / s[g]
            load[h] += t / s[h]
        elif kind == "move":
            e, h = pay
            part = w[e] * f[e, g]
            x[e, h], f[e, h], x[e, g], f[e, g] = True, f[e, g], False, 0.0
            st.free[h] -= mem[e]
            st.free[g] += mem[e]
            load[g] -= part / s[g]
            load[h] += part / s[h]
        elif kind == "replicate":
            e, h, t = pay
            x[e, h] = True
            f[e, h] = t / w[e]
            f[e, g] -= t / w[e]
            st.free[h] -= mem[e]
            st.extra_left -= float(mem[e])
            load[g] -= t / s[g]
            load[h] += t / s[h]
        else:
            e, h, e2 = pay
            part, part2 = w[e] * f[e, g], w[e2] * f[e2, h]
            x[e, h], f[e, h], x[e, g], f[e, g] = True, f[e, g], False, 0.0
            x[e2, g], f[e2, g], x[e2, h], f[e2, h] = True, f[e2, h], False, 0.0
            dm = mem[e] - mem[e2]
            st.free[h] -= dm
            st.free[g] += dm
            load[g] += (part2 - part) / s[g]
            load[h] += (part - part2) / s[h]
        np.clip(f[:, g], 0.0, 1.0, out=f[:, g])


def _trade_move(st: _State, i: int, g: int, load: np.ndarray, top: float) -> _Move | None:
    """The best 'replicate' of an expert on the hot GPU ``g`` onto a full GPU whose memory a
    replica of another layer gives up (see :meth:`_State.trade`); applied to the memory at
    once, returned as a replicate move (or None)."""
    data, plan = st.data, st.plan
    w, mem, s = data.work(i), data.mem[i], data.speed
    x, f = plan.x[i], plan.f[i]
    allowed = data.group == st.group_of_layer[i] if data.hierarchical else np.ones(data.G, bool)
    for e in sorted(np.flatnonzero(x[:, g]), key=lambda e: -w[e] * f[e, g]):
        part = w[e] * f[e, g]
        if part <= EPS or x[e].sum() >= data.replica_cap:
            continue
        for h in np.argsort(load):
            if h == g or x[e, h] or not allowed[h] or not data.eligible[i][e, h]:
                continue
            t = min(part, (load[g] - load[h]) / (1 / s[g] + 1 / s[h]))
            if t <= EPS:
                break  # GPUs are sorted by load: no lighter one left
            new = max(load[g] - t / s[g], load[h] + t / s[h])
            if new >= top * (1 - 1e-9) - EPS:
                continue
            need = mem[e] - st.free[h]
            extra_need = mem[e] - st.extra_left
            short = need > 1e-9 or extra_need > 1e-9
            if short and not st.trade(i, int(e), int(h), max(need, extra_need, 0.0)):
                continue
            return (new, "replicate", (int(e), int(h), t))
    return None


def improve(data: ModelData, plan: Plan, params: LocalSearchParams, deadline: Deadline) -> Plan:
    """Local search on a copy of ``plan``; layers with the largest max load first."""
    plan = plan.copy()
    st = _State(data, plan)
    # Pass 1 moves inside each layer; pass 2 also takes slots from other layers (trades), so
    # that it starts from pass 1's local optimum and can only improve on it.
    for trade in (False, True) if params.replicate else (False,):
        order = sorted(range(data.L), key=lambda i: -float(st.loads[i].max()))
        for i in order:
            if deadline.expired():
                return plan
            _improve_layer(st, i, params, deadline, trade)
    return plan


def validation_reserve_s(plan: Plan) -> float:
    """Seconds to keep for validating and evaluating a plan's solution: 0.1 s plus 30 µs per
    replica (measured: 0.45 s for the 22k replicas of the 256-GPU DeepSeek-V3 shape)."""
    return 0.1 + 3e-5 * sum(int(x.sum()) for x in plan.x)


# --- registered methods ----------------------------------------------------------------------
def _outcome(data: ModelData, plan: Plan | None, t0: float, build_s: float) -> Outcome:
    solve_s = time.perf_counter() - t0 - build_s
    if plan is None:
        return Outcome(
            Status.NO_SOLUTION,
            bound=data.lower_bound(),
            build_s=build_s,
            solve_s=solve_s,
            explanation="the heuristic found no placement that fits the GPU memory "
            "(not a proof of infeasibility; try an exact method)",
        )
    return Outcome(
        Status.FEASIBLE,
        solution=data.to_solution(plan),
        bound=data.lower_bound(),
        build_s=build_s,
        solve_s=solve_s,
    )


def solve_eplb(inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data = build_data(inst, check_size=False)
    build_s = time.perf_counter() - t0
    plan = run_eplb(data, method_params(EplbParams, options.params), deadline)
    return _outcome(data, plan, t0, build_s)


def solve_local_search(
    inst: MoePlacementInstance, options: SolveOptions, deadline: Deadline
) -> Outcome:
    t0 = time.perf_counter()
    params = method_params(LocalSearchParams, options.params)
    if deadline.expired():  # e.g. auto's heuristic share already used by EPLB
        return Outcome(Status.NO_SOLUTION, explanation="no time left for the local search")
    data = build_data(inst, check_size=False)
    build_s = time.perf_counter() - t0
    plan = run_eplb(data, params, deadline)
    if plan is not None:
        plan = improve(data, plan, params, Deadline(deadline.end - validation_reserve_s(plan)))
    return _outcome(data, plan, t0, build_s)


HEURISTICS: Sequence[str] = ("heuristic:eplb", "heuristic:local-search")

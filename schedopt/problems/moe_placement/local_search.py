"""``local-search``: improves a placement (``eplb``'s, in :mod:`.heuristics`) layer by layer.

It lowers the most loaded GPU by shifting token share to another replica, moving or swapping
replicas, or adding a replica, while the memory (C1), replica (C5, C6) and group (C7)
constraints keep holding; at a local optimum it may take a slot from another layer (a trade)
for a new replica, only when that layer's max load does not grow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schedopt.core.stopping import Deadline

from .data import ModelData, Plan
from .eplb import EPS
from .heuristic_params import LocalSearchParams

#: A local-search move: (the new max load of the GPU pair, kind, the kind's payload).
_Move = tuple[float, str, tuple[Any, ...]]


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

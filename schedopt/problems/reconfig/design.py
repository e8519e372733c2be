"""W6: pipelines designed for a target pipe time over the physical plan space (formulations/
reconfig.md; #17 item 3). For a target ``π``, a pipeline of ``p`` stages running ``m``
micro-batches must keep every stage within ``τ = ⌊π/(m + p − 1)⌋``; Q1 gives each group type's
layer capacity at each position, and the pipeline takes, first stage first, the available type
with the most layers per GPU there, then gives back GPUs where a narrower type still holds
every layer. Pipelines are designed one at a time, the (p, m) with the most micro-batches per
GPU first, until they hold ``M``; the layer split is then re-chosen per pipeline (W2)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline

from .instance import ReconfigInstance
from .validate import _Costs

Group = tuple[str, ...]
Type = tuple[int, float]


@dataclass(frozen=True)
class Chain:
    """A pipeline's groups in stage order, its layer split and its stage time (µs)."""

    groups: tuple[tuple[str, ...], ...]
    sizes: tuple[int, ...]
    tau: int

    @property
    def gpus(self) -> int:
        return sum(len(g) for g in self.groups)


class Partitioner:
    """W2: the best contiguous layer split of a fixed sequence of groups (validator's costs)."""

    def __init__(self, inst: ReconfigInstance) -> None:
        self.inst, self.c = inst, _Costs(inst)
        self.L = inst.model.layers
        self.room = self.c.cap * (1 + 1e-6)
        self._time: dict[tuple, np.ndarray] = {}
        self._mem: dict[tuple, int] = {}

    def kappa(self, group: tuple[str, ...]) -> float:
        return min(self.inst.slow_factor.get(g, 1.0) for g in group)

    def _arr(self, t: int, kappa: float, last: bool, p: int) -> np.ndarray:
        """Stage times (µs) of 0..L layers on a group of ``t`` at ``kappa``."""
        key = (t, kappa, last, p > 1)
        arr = self._time.get(key)
        if arr is None:
            arr = self._time[key] = np.array(
                [self.c.stage_us(n, last, t, p, kappa) for n in range(self.L + 1)]
            )
        return arr

    def _mem_cap(self, t: int, f: int, p: int) -> int:
        """The most layers a group of ``t`` holds in memory ``f`` positions from the end."""
        mk = (t, f, f == p, f == 1)
        mem = self._mem.get(mk)
        if mem is None:
            mem = 0
            while mem < self.L and self.c.stage_bytes(mem + 1, f == p, f == 1, t, f) <= self.room:
                mem += 1
            self._mem[mk] = mem
        return mem

    def _cap(self, t: int, kappa: float, f: int, p: int, tau: int) -> int:
        arr = self._arr(t, kappa, f == 1, p)
        mem = self._mem_cap(t, f, p)
        return max(0, min(int(np.searchsorted(arr, tau, "right")) - 1, mem))

    def chain(self, groups: list[tuple[str, ...]]) -> Chain | None:
        """The split with the least stage time, or None if none fits."""
        found = self.split([(len(g), self.kappa(g)) for g in groups])
        return None if found is None else Chain(tuple(groups), *found)

    def split(self, kinds: list[tuple[int, float]]) -> tuple[tuple[int, ...], int] | None:
        """W2 for groups of these (t, κ) in stage order: (layers per stage, stage time), or
        None. The capacities change only at the stage times of whole layers, so the least
        such time that fits is found among them, every position at once."""
        p = len(kinds)
        if p > self.L:
            return None
        arrs = [self._arr(t, k, i == p - 1, p) for i, (t, k) in enumerate(kinds)]
        mems = np.array([self._mem_cap(t, p - i, p) for i, (t, _) in enumerate(kinds)])
        cand = np.unique(np.concatenate(arrs))
        table = np.stack([np.searchsorted(a, cand, "right") - 1 for a in arrs])
        table = np.maximum(np.minimum(table, mems[:, None]), 0)  # (position, candidate τ)
        fits = (table.min(axis=0) >= 1) & (table.sum(axis=0) >= self.L)
        if not fits.any():
            return None
        sizes = [int(v) for v in table[:, int(np.argmax(fits))]]
        extra = sum(sizes) - self.L
        for i in range(p):  # give layers back from the first stages (the most in flight)
            give = min(extra, sizes[i] - 1)
            sizes[i] -= give
            extra -= give
        tau = max(
            self.c.stage_us(n, i == p - 1, t, p, k)
            for i, (n, (t, k)) in enumerate(zip(sizes, kinds, strict=True))
        )
        return tuple(sizes), tau


class Designer:
    def __init__(self, part: Partitioner, groups: list[Group]) -> None:
        self.part = part
        self.inst: ReconfigInstance = part.inst
        self.L = part.L
        self.by_type: dict[Type, list[Group]] = defaultdict(list)
        for g in groups:
            self.by_type[(len(g), part.kappa(g))].append(g)
        self.types = sorted(self.by_type, key=lambda x: (-x[0], -x[1]))
        self.t = np.array([t for t, _ in self.types], dtype=np.float64)

        self._mem: dict[tuple[int, int], np.ndarray] = {}
        self._time: dict[tuple[int, bool, bool], np.ndarray] = {}

    def _mem_col(self, t: int, p: int) -> np.ndarray:
        key = (t, p)
        col = self._mem.get(key)
        if col is None:
            big = self.L + 1  # no time limit: the memory cap alone
            col = self._mem[key] = np.array(
                [self.part._cap(t, 1.0, p - i, p, 10**18) for i in range(p)]
            )
            col = np.minimum(col, big)
        return col

    def _time_arr(self, j: int, last: bool, deep: bool) -> np.ndarray:
        key = (j, last, deep)
        arr = self._time.get(key)
        if arr is None:
            t, k = self.types[j]
            arr = self._time[key] = np.array(
                [self.part.c.stage_us(n, last, t, 2 if deep else 1, k) for n in range(self.L + 1)]
            )
        return arr

    def caps(self, p: int, tau: int) -> np.ndarray:
        """Q1's capacities [position i (0 = first stage), type] within ``tau`` µs."""
        out = np.zeros((p, len(self.types)), dtype=np.int64)
        for j, (t, _) in enumerate(self.types):
            inner = int(np.searchsorted(self._time_arr(j, False, p > 1), tau, "right")) - 1
            end = int(np.searchsorted(self._time_arr(j, True, p > 1), tau, "right")) - 1
            col = np.minimum(self._mem_col(t, p), inner)
            col[p - 1] = min(int(self._mem_col(t, p)[p - 1]), end)
            out[:, j] = np.maximum(col, 0)
        return out

    def design(self, p: int, tau: int, avail: dict[Type, int]) -> list[int] | None:
        """The types of a ``p``-stage pipeline within ``tau`` (indices into ``types``), or None."""
        caps = self.caps(p, tau)
        left = dict(avail)
        pick: list[int] = []
        for i in range(p):
            best, score = None, 0.0
            for j, ty in enumerate(self.types):
                if left.get(ty, 0) > 0 and caps[i, j] >= 1 and caps[i, j] / ty[0] > score:
                    best, score = j, caps[i, j] / ty[0]
            if best is None:
                return None
            pick.append(best)
            left[self.types[best]] -= 1
        held = sum(int(caps[i, j]) for i, j in enumerate(pick))
        if held < self.L:
            return None
        for i in sorted(range(p), key=lambda i: -self.types[pick[i]][0]):  # give GPUs back
            for j in sorted(range(len(self.types)), key=lambda j: self.types[j][0]):
                ty = self.types[j]
                if ty[0] >= self.types[pick[i]][0] or left.get(ty, 0) <= 0 or caps[i, j] < 1:
                    continue
                if held - caps[i, pick[i]] + caps[i, j] >= self.L:
                    left[self.types[pick[i]]] += 1
                    left[ty] -= 1
                    held += int(caps[i, j] - caps[i, pick[i]])
                    pick[i] = j
                    break
        return pick

    def plan(self, pi: int, deadline: Deadline | None) -> list[list[Group]]:
        """Pipelines (groups in stage order) for the target pipe time ``pi``."""
        M, depth = self.inst.micro_batches, min(self.inst.max_stages, self.L)
        avail = {ty: len(gs) for ty, gs in self.by_type.items()}
        pools = {ty: list(gs) for ty, gs in self.by_type.items()}
        shares = sorted({max(1, math.ceil(M / k)) for k in range(1, 33)})
        out: list[list[Group]] = []
        held = 0
        while held < M:
            if deadline is not None and deadline.expired():
                break
            best: tuple[float, int, list[int]] | None = None
            for p in range(1, depth + 1):
                if p > 1 and deadline is not None and deadline.expired():
                    # a pipeline's search is 32 designs a depth: beside a CPU burner at 256
                    # GPUs one took 0.86 s and ended its design 0.06 s past the row's limit
                    return out
                for m in shares:
                    tau = pi // (m + p - 1)
                    if tau < 1:
                        continue
                    pick = self.design(p, tau, avail)
                    if pick is None:
                        continue
                    gpus = sum(self.types[j][0] for j in pick)
                    if best is None or m / gpus > best[0]:
                        best = (m / gpus, m, pick)
            if best is None:
                break
            groups = []
            for j in best[2]:
                ty = self.types[j]
                avail[ty] -= 1
                groups.append(pools[ty].pop(0))
            out.append(groups)
            held += best[1]
        return out

"""Greedy pricing of column generation over groups (formulations/cosched.md, "R' and exact
pricing"): per case (SLO level, hosts), a group of R' with a negative reduced cost found by a
greedy fill (a heuristic: the bound never depends on it; exact pricing is :mod:`.pricing`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from schedopt.core.stopping import Deadline

from .data import ModelData, OptionData
from .farley import Combos, Stack

#: A column prices in when its reduced cost is below this ($/h).
PRICE_TOL = 1e-6
#: Columns proposed per round, most negative reduced cost first.
MAX_NEW = 24

#: A group's members: (job index, the chosen option of every phase).
Members = tuple[tuple[int, tuple[OptionData, ...]], ...]


def price(
    data: ModelData,
    combos: list[Combos],
    pi: np.ndarray,
    y: np.ndarray,
    levels: list[int],
    boxes: list[tuple[int, ...]],
    deadline: Deadline | None = None,
    stack: Stack | None = None,
    fits: list[BoxFit] | None = None,
) -> list[Members]:
    """Groups of R' with a negative reduced cost, found greedily (a heuristic: the bound never
    depends on it). Per case (SLO level, hosts ``h``): the admissible jobs, each on its
    combination of least normalised load, join in decreasing ``π_j`` per normalised load while
    the pool loads (R3', with every switch once two jobs share a pool) and memory (R2) fit;
    the case's group is kept if its reduced cost ``c(h) − y·h − Σ π_j`` is negative."""
    P = len(data.pools)
    y = np.minimum(y, 0.0)
    stack = stack or Stack(combos, P)
    slo = np.array([j.slo for j in data.jobs])
    factor = 1 + np.array([j.sigma for j in data.jobs])
    switch = np.array([j.switch for j in data.jobs])
    on = stack.load > 0  # (J, K, P)
    fits = fits or box_fits(data, stack, boxes)
    peak = np.where(stack.real, stack.load.max(axis=2), 0)  # (J, K): the most loaded pool
    found: dict[tuple[int, ...], tuple[float, Members]] = {}
    for level in levels:
        cand = (slo >= level) & (pi > 0)
        chain_ok = cand[:, None] & stack.real & (stack.chain <= factor[:, None] * level)
        for h, fit in zip(boxes, fits, strict=True):
            if deadline is not None and deadline.expired():
                break
            hv = np.array(h)
            fixed = float(np.dot(np.array(data.cost) - y, hv))
            ok = chain_ok & fit.ok
            jobs = np.flatnonzero(ok.any(axis=1))
            if not len(jobs):
                continue
            size = np.where(ok[jobs], peak[jobs] / level + fit.mem[jobs], np.inf)
            pick = size.argmin(axis=1)
            ratio = pi[jobs] / np.maximum(size[np.arange(len(jobs)), pick], 1e-9)
            chosen = _fill(
                jobs,
                pick,
                np.argsort(-ratio, kind="stable"),
                stack,
                on,
                switch,
                level,
                fit.room,
            )
            value = float(pi[[j for j, _ in chosen]].sum())
            rc = fixed - value
            if chosen and rc < -PRICE_TOL:
                key = tuple(sorted(j for j, _ in chosen))
                if key not in found or rc < found[key][0]:
                    found[key] = (rc, tuple((j, combos[j].options[i]) for j, i in chosen))
    best = sorted(found.values(), key=lambda t: t[0])
    return [m for _, m in best[:MAX_NEW]]


def _fill(
    jobs: np.ndarray,
    pick: np.ndarray,
    order: np.ndarray,
    stack: Stack,
    on: np.ndarray,
    switch: np.ndarray,
    level: int,
    room: np.ndarray,
) -> list[tuple[int, int]]:
    """The greedy fill of one case: the candidates in ``order``, each joining when the pool
    loads (R3': a pool's only user pays no switch; once two use it, every one is paid) and
    memory (R2) fit. The loads only grow, so a candidate that does not fit now never fits
    later: each step takes the first candidate that fits, all tested at once (the same group
    as testing them one by one, in a handful of array operations)."""
    jobs, pick = jobs[order], pick[order]
    cl = stack.load[jobs, pick]  # (n, P)
    cm = stack.mem[jobs, pick]
    co = on[jobs, pick]
    sw = switch[jobs][:, None]
    P = cl.shape[1]
    load = np.zeros(P, dtype=np.int64)
    mem = np.zeros(P, dtype=np.int64)
    users = np.zeros(P, dtype=np.int64)
    chosen: list[tuple[int, int]] = []
    start = 0
    while start < len(jobs):
        cap = level + np.where(users == 0, sw[start:], 0)
        takes = ((mem + cm[start:]) <= room).all(axis=1) & (
            ~co[start:] | (load + cl[start:] <= cap)
        ).all(axis=1)
        first = int(takes.argmax())
        if not takes[first]:
            break
        t = start + first
        users += co[t]
        load += cl[t]
        mem += cm[t]
        chosen.append((int(jobs[t]), int(pick[t])))
        start = t + 1
    return chosen


@dataclass(frozen=True)
class BoxFit:
    """What one host vector ``h`` admits, whatever the duals and the level: ``ok`` (J, K) the
    combinations whose devices (R1) and resident state (R2) fit ``h``; ``mem`` their largest
    share of a pool's memory; ``room`` MiB per pool."""

    ok: np.ndarray
    mem: np.ndarray
    room: np.ndarray


def box_fits(data: ModelData, stack: Stack, boxes: list[tuple[int, ...]]) -> list[BoxFit]:
    """:class:`BoxFit` of every box (made once per solve: pricing reads them every round)."""
    out = []
    for h in boxes:
        hv = np.array(h)
        room = np.maximum(np.array(data.memory_mib) * hv, 0)
        ok = (stack.need <= hv).all(axis=2) & (stack.mem <= room).all(axis=2)
        out.append(BoxFit(ok, (stack.mem / np.maximum(room, 1)).max(axis=2), room))
    return out


def boxes_of(data: ModelData, combos: list[Combos], most: int = 2) -> list[tuple[int, ...]]:
    """Host vectors the pricing tries: up to ``most`` hosts per pool, enough for any option."""
    tops = []
    for p in range(len(data.pools)):
        need = max((int(c.need[:, p].max()) for c in combos if len(c.need)), default=0)
        tops.append(min(data.hosts[p], max(need, most if need else 0)))
    return [h for h in itertools.product(*(range(t + 1) for t in tops)) if any(h)]

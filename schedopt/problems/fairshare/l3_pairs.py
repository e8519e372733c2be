"""The swap step's search (``l3_swap.py``; formulations/fairshare.md, "Decomposition", the swap
step): every job's e on each (type, GPUs) kind (:class:`Tables`), the jobs that may move at no
restart (:func:`pools`), the pairs across two types at the least price of L2 that keeps their
L2 (:func:`matched`) and each other restarting job's best partners (:func:`candidates`). Only
estimates: ``l3_swap`` applies and checks every pair on the board.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

import numpy as np

from .data import JobData, ModelData
from .l1_fix import need_gpus
from .l2_repair import COST_TOL
from .option_arrays import Arrays
from .plan import Plan

#: Bisection steps of the matching's price of L2.
PRICE_STEPS = 12
#: Plain legs (moves without a return) kept per direction beyond twice the returns.
PLAIN = 200
#: Candidate partners looked at per returning job (the best by L2 first).
PARTNERS = 4

#: A candidate pair: (L3 saved estimate, L2 change estimate, A, B, B's target option or None).
Pair = tuple[float, float, int, int, int | None]

#: A move of one job: "keep" (back on its previous hosts, kept), an option index, or None.
Move = tuple[int, int | str | None]


class Tables:
    """Every job's e on each (type, GPUs) kind (-inf where it has no such option) and the
    option's index (-1), and its unit; from ``l3_bound.arrays`` (one row per job with
    options, padded options at +inf base)."""

    def __init__(self, data: ModelData, a: Arrays):
        types = sorted(data.type_capacity)
        rows = np.array([j.index for j in data.jobs if j.options], dtype=np.int64)
        real = np.isfinite(a.base)
        n = a.n.astype(np.int64)
        code = a.gtype * (int(n.max(initial=0)) + 1) + n
        kinds, inverse = np.unique(code[real], return_inverse=True)
        width = int(n.max(initial=0)) + 1
        self.kix = {(types[int(c) // width], int(c) % width): k for k, c in enumerate(kinds)}
        self.eff = np.full((len(data.jobs), len(kinds)), -np.inf)
        self.opt_of = np.full((len(data.jobs), len(kinds)), -1, dtype=np.int64)
        r, o = np.nonzero(real)
        self.eff[rows[r], inverse] = a.eff[r, o]
        self.opt_of[rows[r], inverse] = o
        self.unit = np.array([j.unit for j in data.jobs], dtype=np.int64)
        self.columns = (self.eff, self.opt_of, self.unit, self.kix)


def pools(state: Plan, used: Collection[int] = ()) -> dict[tuple[str, int], np.ndarray]:
    """The jobs that may move at no restart: running, not kept, not placed as before (moving
    such a job would restart it), not in ``used``; by (type, GPUs) now."""
    data = state.data
    out: dict[tuple[str, int], list[int]] = {}
    for job in data.jobs:
        r = state.raw[job.index]
        if r.option is None or r.keep or job.index in used:
            continue
        if r.option == job.prev_option and state.hosts[job.index] == job.prev_hosts:
            continue
        o = job.options[r.option]
        out.setdefault((o.gpu_type, o.n), []).append(job.index)
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def matched(
    state: Plan,
    tables: Tables,
    returning: list[JobData],
    by_kind: dict[tuple[str, int], np.ndarray],
) -> list[tuple[float, list[Move]]]:
    """Pairs of moves across two GPU types with as many GPUs (module docstring, "the
    matching"): ``(ΔL2, moves)``, each job in at most one, at the least price of L2 that
    leaves their ΔL2 together non-negative."""
    data = state.data
    kix, eff, opt_of = tables.kix, tables.eff, tables.opt_of
    # the returns of each (from, to, n): L3 saved, ΔL2, job
    back: dict[tuple[str, str, int], tuple[list[float], list[float], list[int]]] = {}
    for job in returning:
        r = state.raw[job.index]
        assert job.prev_option is not None
        p = job.options[job.prev_option]
        if r.option is None:
            continue
        now = job.options[r.option]
        if now.gpu_type == p.gpu_type or now.n != p.n:
            continue
        save = job.restart_cost + data.frag_cost * (now.extra_hosts - p.extra_hosts)
        if save <= COST_TOL:
            continue
        leg = back.setdefault((now.gpu_type, p.gpu_type, p.n), ([], [], []))
        leg[0].append(save)
        leg[1].append(p.eff - now.eff)
        leg[2].append(job.index)

    def plain(y: str, x: str, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` jobs of the pool of ``(y, n)`` that gain most L2 on ``(x, n)`` (at
        any price they rank so), and that gain."""
        pool = by_kind.get((y, n), np.zeros(0, dtype=np.int64))
        d = eff[pool, kix[x, n]] - eff[pool, kix[y, n]] if (x, n) in kix else np.zeros(0)
        ok = np.flatnonzero(np.isfinite(d))
        ok = ok[np.argsort(-d[ok], kind="stable")][:count]
        return pool[ok], d[ok]

    # each pair of directions: per direction (L3 saved, ΔL2, moves), returns first
    sides = []
    for y, x, n in sorted({(min(k[0], k[1]), max(k[0], k[1]), k[2]) for k in back}):
        returns = sum(len(back.get(k, ((),))[0]) for k in ((y, x, n), (x, y, n)))
        side = []
        for a, b in ((y, x), (x, y)):
            s_r, d_r, j_r = back.get((a, b, n), ([], [], []))
            jobs, d = plain(a, b, n, 2 * returns + PLAIN)
            moves: list[Move] = [(j, "keep") for j in j_r]
            moves += [(int(j), int(opt_of[j, kix[b, n]])) for j in jobs]
            side.append(
                (
                    np.concatenate([np.asarray(s_r, dtype=np.float64), np.zeros(len(jobs))]),
                    np.concatenate([np.asarray(d_r, dtype=np.float64), d]),
                    moves,
                )
            )
        sides.append(side)

    def match(lam: float) -> tuple[float, list[tuple[float, int, int, int]]]:
        """The pairs at price ``lam``: their ΔL2 together, and (ΔL2, side, k-th up, k-th
        down) each."""
        total, out = 0.0, list[tuple[float, int, int, int]]()
        for s, (up, down) in enumerate(sides):  # (s: the side)
            vu, vd = up[0] + lam * up[1], down[0] + lam * down[1]
            ou, od = np.argsort(-vu, kind="stable"), np.argsort(-vd, kind="stable")
            k = min(len(ou), len(od))
            value = vu[ou[:k]] + vd[od[:k]]
            d_l2 = up[1][ou[:k]] + down[1][od[:k]]
            take = np.flatnonzero(value > 0.0)
            total += float(d_l2[take].sum())
            out.extend((float(d_l2[c]), s, int(ou[c]), int(od[c])) for c in take)
        return total, out

    lo, hi = 0.0, 1.0
    while match(hi)[0] < 0.0 and hi < 1e12:
        hi *= 10.0
    total, best = match(hi)
    if total < 0.0:
        return []
    for _ in range(PRICE_STEPS):
        mid = (lo + hi) / 2.0 if hi < 10.0 * max(lo, 1.0) else np.sqrt(max(lo, 1.0) * hi)
        t, got = match(mid)
        if t >= 0.0:
            hi, best = mid, got
        else:
            lo = mid
    return [(d_l2, [sides[s][0][2][u], sides[s][1][2][d]]) for d_l2, s, u, d in best]


def candidates(
    state: Plan,
    tables: Tables,
    returning: list[JobData],
    by_kind: dict[tuple[str, int], np.ndarray],
    used: Collection[int],
    end: float = np.inf,
) -> list[Pair]:
    """For every restarting job ``A`` whose previous hosts have room beside the kept jobs,
    its best partners ``B`` (module docstring), at most ``PARTNERS`` each, most L2 first,
    among those whose unit can give the GPUs the pair takes from it (``B``'s own unit, or
    one above ``m_v(t̂)`` by that much); the estimates do not count the jobs on ``A``'s
    previous hosts. Those found by ``end`` (``time.perf_counter``)."""
    data = state.data
    phi = data.frag_cost
    need = need_gpus(data, data.min_share([float(g) for g in state.unit_gpus]))
    slack = np.asarray(state.unit_gpus, dtype=np.float64) - need
    slack[[not v.included for v in data.units]] = np.inf
    kix, eff, opt_of, unit = tables.kix, tables.eff, tables.opt_of, tables.unit
    taken = np.zeros(len(data.jobs), dtype=bool)
    taken[list(used)] = True
    ranked: dict[tuple[str, int, str | None, int], tuple[np.ndarray, np.ndarray, Any, Any]] = {}
    spare: dict[tuple[Any, int], list[int]] = {}

    def ranking(key: tuple[str, int, str | None, int]) -> tuple[np.ndarray, np.ndarray, Any, Any]:
        """The pool of ``(Y, n)`` ranked by the L2 a move to ``(X, m)`` (None: idle) adds,
        each unit's first positions in it, and (jobs, gains, options of ``(X, m)``) as
        lists."""
        if key not in ranked:
            y, n, x, m = key
            pool = by_kind.get((y, n), np.zeros(0, dtype=np.int64))
            pool = pool[~taken[pool]]
            here = eff[pool, kix[y, n]]
            if x is None:
                gain = -here
            else:
                there = eff[pool, kix[x, m]] if (x, m) in kix else np.full(len(pool), -np.inf)
                gain = there - here
            order = np.argsort(-gain, kind="stable")
            pool, gain = pool[order], gain[order]
            finite = np.flatnonzero(np.isfinite(gain))
            by_unit = np.argsort(unit[pool[finite]], kind="stable")
            units, starts = np.unique(unit[pool[finite]][by_unit], return_index=True)
            ends = np.append(starts[1:], len(by_unit))[: len(starts)]
            first = {
                int(u): finite[by_unit[s : min(e, s + PARTNERS + 1)]]
                for u, s, e in zip(units, starts, ends, strict=True)
            }
            to = opt_of[pool, kix[x, m]] if x is not None and (x, m) in kix else pool * 0 - 1
            ranked[key] = (pool, gain, first, (pool.tolist(), gain.tolist(), to.tolist()))
        return ranked[key]

    out: list[Pair] = []
    for c, job in enumerate(returning):
        if c % 256 == 0 and time.perf_counter() >= end:
            break
        if taken[job.index]:
            continue
        assert job.prev_option is not None
        r = state.raw[job.index]
        p = job.options[job.prev_option]
        now = None if r.option is None else job.options[r.option]
        if now is not None and now.gpu_type == p.gpu_type:
            continue  # (its own type: the return step's)
        save = job.restart_cost + phi * ((now.extra_hosts if now else 0) - p.extra_hosts)
        if save <= COST_TOL:
            continue
        d_a = p.eff - (now.eff if now else 0.0)
        key = (p.gpu_type, p.n, None if now is None else now.gpu_type, now.n if now else 0)
        pool, gain, first, (jobs, gains, tos) = ranking(key)
        # B's unit loses n − m GPUs (A's gains n − m): B's own unit, or one with the slack
        loses = max(0, p.n - (now.n if now else 0))
        if (key, loses) not in spare:
            ok = np.isfinite(gain)
            if loses > 0:
                ok &= slack[unit[pool]] >= loses
            spare[key, loses] = [int(k) for k in np.flatnonzero(ok)[: PARTNERS + 1]]
        mine = first.get(job.unit, ()) if loses > 0 else ()
        picks = sorted({*spare[key, loses], *(int(k) for k in mine)})
        picks = [k for k in picks if jobs[k] != job.index][:PARTNERS]
        for k in picks:
            out.append((save, d_a + gains[k], job.index, jobs[k], None if now is None else tos[k]))
    return out


__all__ = ["Move", "Pair", "Tables", "candidates", "matched", "pools"]

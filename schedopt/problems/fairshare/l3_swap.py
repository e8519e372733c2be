"""Restarting jobs returned by swaps with one other job each, at the plan's L1 and L2
(formulations/fairshare.md, "Decomposition", the swap step).

After the return step (``l3_return.py``) every GPU type is full, so a restarting job ``A``
that ran on type ``Y`` (its previous hosts) and now runs on ``X`` (or is idle) goes back only
if a job ``B`` leaves ``Y``: to ``X`` on ``A``'s count (the GPUs ``A`` gives back there), or
to idle when ``A`` was idle. Each such pair keeps every type's GPUs; ``A``'s unit gets
``n_p − n_now`` more GPUs and ``B``'s ``n_to − n_B``; L2 changes by
``ΔL2 = (e_Ap − e_A,now) + (e_B,to − e_B,now)``; L3 falls by ``c_A`` (less the host costs).
The jobs not kept that sit on ``A``'s previous hosts are placed again on their own options.

Found by array passes, no LP: across two types with as many GPUs, each direction's *legs*
(returns, valued ``s_A + λ ΔL2``, and moves of jobs that restart nothing, ``λ ΔL2``) are
paired best with best while a pair's value is positive, at the least price ``λ`` of L2 whose
pairs do not lower L2 together (``matched``); then each other restarting job's best partner
by L2 whose unit can give the GPUs (``candidates``); where the L2 gained so far cannot pay
for a partner, idle jobs take the places of movable jobs they beat on L2 (``l3_idle.py``), once.
Each pair is applied on the board and
checked exactly (the touched jobs' L2 and L3 as the validator counts them, every touched
unit at a share of at least t̂) and undone if it fails: the matching's pairs first, most L2
first, then the partners' (those that do not lower L2 first, then by L3 saved per L2 spent),
the L2 gained so far (the bank) never going below 0. The whole plan is then checked: kept
only if its minimum share is at least t̂ and its L3 fell (the pairs' changes add up to the
whole plan's: each is its touched jobs' change); otherwise every pair is undone. So the
plan gets lexicographically better or stays, kept jobs are never moved, and C1–C4 hold as
the board holds them.
Nothing else is claimed (a heuristic: the exchange's LP and MILP, ``l3_exchange.py``, see
more moves, at a cost that does not fit 16,384 GPUs).
Not with hard guarantees or a preemption cap (``decomp`` refuses both).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

import numpy as np

from .data import JobData, ModelData
from .heuristics import _State
from .l2_repair import COST_TOL, RepairStats, _levels, _put_back
from .l3_bound import Arrays, arrays, need_gpus
from .l3_idle import Leg, idle_legs
from .restore import restarting

#: Seconds ``decomp`` gives the step at least (at 16,384 GPUs × 20,000 jobs: about 0.1 s
#: to find the pairs, 0.2 s at load 4, then about 0.2 ms a pair tried).
SWAP_S = 0.25
#: Fewest seconds the step is started with.
MIN_S = 0.05
#: Slack on the bank of L2 (sums of e in another order).
BANK_TOL = 1e-12
#: Bisection steps of the matching's price of L2.
PRICE_STEPS = 12
#: Plain legs (moves without a return) kept per direction beyond twice the returns.
PLAIN = 200
#: Candidate partners looked at per returning job (the best by L2 first).
PARTNERS = 4

#: A candidate pair: (L3 saved estimate, L2 change estimate, A, B, B's target option or None).
Pair = tuple[float, float, int, int, int | None]


def swap_returns(
    state: _State, seconds: float, out: RepairStats, a: Arrays | None = None
) -> RepairStats:
    """The swap step (module docstring) within ``seconds``; its effect added to ``out``
    (``a``: ``l3_bound.arrays(state.data)``, if made already)."""
    started = time.perf_counter()
    end = started + seconds
    data = state.data
    inst = data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None or seconds < MIN_S:
        return out
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    tables = Tables(data, arrays(data) if a is None else a)
    returning = _returning(state)
    by_kind = pools(state)
    journal: list[tuple[list[int], list[tuple[Any, dict[str, int]]]]] = []
    used: set[int] = set()
    on_host: dict[str, set[int]] = {}
    for i, hosts in enumerate(state.hosts):
        for h in hosts:
            on_host.setdefault(h, set()).add(i)
    bank = saved = 0.0  # the L2 the pairs gained and the L3 they saved, so far

    def run(moves: list[Move]) -> bool:
        nonlocal bank, saved
        got = _try(state, moves, t_hat, bank, on_host)
        if got is None:
            return False
        touched, old, delta, less = got
        journal.append((touched, old))
        saved += less
        used.update(touched)
        bank += delta
        return True

    # the pairs across types, those that raise L2 first (the bank), then the others
    pairs_x = matched(state, tables, returning, by_kind) if time.perf_counter() < end else []
    for _, moves in sorted(pairs_x, key=lambda p: -p[0]):
        if time.perf_counter() >= end:
            break
        if not any(i in used for i, _ in moves):
            run(moves)
    pairs = candidates(state, tables, returning, by_kind, used, end)
    gain = [p for p in pairs if p[1] >= 0.0]
    spend = [p for p in pairs if p[1] < 0.0]
    gain.sort(key=lambda p: (-p[0], -p[1], p[2]))
    spend.sort(key=lambda p: (-p[0] / -p[1], p[2]))
    legs: list[Leg] | None = None
    for _, d_l2, job, other, to in gain + spend:
        if time.perf_counter() >= end:
            break
        if legs is None and bank + d_l2 < -BANK_TOL and not {job, other} & used:
            # the bank first short: idle jobs in the places of jobs that move at no restart
            # (l3_idle.py), among the jobs no pair has touched: L2 for the bank
            legs = idle_legs(state, *tables.columns, by_kind, used)
            for _, c, b, o in legs:
                if time.perf_counter() >= end:
                    break
                run([(b, None), (c, o)])
        if job in used or other in used or bank + d_l2 < -BANK_TOL:
            continue
        run([(job, "keep"), (other, to)])
    fair = data.min_share([float(g) for g in state.unit_gpus]) >= t_hat
    # (every pair's L2 and L3 are its touched jobs' change, so their sums are the whole
    # plan's; the bank never went below -BANK_TOL)
    if journal and not (fair and bank >= -BANK_TOL and saved > COST_TOL):
        for touched, old in reversed(journal):
            _put_back(state, touched, old)
    elif journal:
        out.neighbourhoods += 1
        out.improved += len(journal)
        out.gained_l2 += bank
        out.saved_l3 += saved
    out.seconds += time.perf_counter() - started
    return out


def _returning(state: _State) -> list[JobData]:
    """The restarting jobs (``restore.restarting``) whose previous hosts have room beside
    the kept jobs (``f_h − K_h``)."""
    data = state.data
    room = dict(data.free)
    for i, r in enumerate(state.raw):
        if r.keep:
            for h, m in state.hosts[i].items():
                room[h] -= m
    return [j for j in restarting(state) if all(room[h] >= m for h, m in j.prev_hosts.items())]


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


def pools(state: _State, used: Collection[int] = ()) -> dict[tuple[str, int], np.ndarray]:
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
    state: _State,
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
    state: _State,
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


#: A move of one job: "keep" (back on its previous hosts, kept), an option index, or None.
Move = tuple[int, int | str | None]


def _try(
    state: _State,
    moves: list[Move],
    t_hat: float,
    bank: float,
    on_host: dict[str, set[int]],
) -> tuple[list[int], list[tuple[Any, dict[str, int]]], float, float] | None:
    """The moves applied on the board (the jobs kept first, then the others, then the jobs
    not kept that sat on the kept ones' previous hosts, largest first) and checked (module
    docstring): the jobs touched, how they were, the change of L2 and the L3 saved; or None
    and the plan as it was."""
    data = state.data
    mine = [i for i, _ in moves]
    prev = {h for i, act in moves if act == "keep" for h in data.jobs[i].prev_hosts}
    sitters = sorted({i for h in prev for i in on_host.get(h, ())} - set(mine))
    sitters = [i for i in sitters if not state.raw[i].keep]
    touched = [*mine, *sitters]
    before = _levels(state, touched)
    old = [(state.raw[i], dict(state.hosts[i])) for i in touched]
    again = [(i, state.raw[i].option) for i in sitters]
    for i in touched:
        state.unset(data.jobs[i])
    ok = all(state.keep(data.jobs[i]) for i, act in moves if act == "keep")
    if ok:
        rest = [(i, act) for i, act in moves if isinstance(act, int)] + again
        rest.sort(key=lambda m: -_gpus(state, *m))
        ok = all(not isinstance(o, int) or state.place(data.jobs[i], o) for i, o in rest)
    if ok:
        after = _levels(state, touched)
        d_l2 = after[0] - before[0]
        ok = (
            bank + d_l2 >= -BANK_TOL
            and after[1] <= before[1] + COST_TOL
            and (after[1] < before[1] - COST_TOL or d_l2 > BANK_TOL)
            and all(
                data.units[v].share(state.unit_gpus[v], data.round_s) >= t_hat
                for v in {data.jobs[i].unit for i in touched}
                if data.units[v].included
            )
        )
        if ok:
            for i, (_, was) in zip(touched, old, strict=True):
                for h in was:
                    on_host[h].discard(i)
                for h in state.hosts[i]:
                    on_host.setdefault(h, set()).add(i)
            return touched, old, d_l2, before[1] - after[1]
    _put_back(state, touched, old)
    return None


def _gpus(state: _State, i: int, o: int | str | None) -> int:
    return state.data.jobs[i].options[o].n if isinstance(o, int) else 0


__all__ = ["swap_returns"]

"""Building a group's explicit periodic schedule for chosen options (the heuristics' tool).

:func:`schedule_group` searches cycle times from a lower bound up to the members' smallest SLO
and, for each, places the members' phases one job at a time at the earliest start where the
periodic interval fits its pool (C11, with switch times) and the step's precedence and
staleness hold (C8, C9). A cycle it returns is valid by construction (the validator checks it
anyway); a cycle it misses may exist: it is a heuristic.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from schedopt.core.stopping import Deadline

from .data import JobData, ModelData, OptionData

Member = tuple[JobData, tuple[OptionData, ...]]
#: Cycle times tried between the lower bound and the smallest SLO.
CYCLE_TRIES = 10
#: Origins tried per job.
ORIGIN_TRIES = 24
#: Groups up to this size are placed in every order of their members.
PERMUTED = 4


@dataclass(frozen=True)
class Planned:
    cycle: int
    starts: dict[int, list[int]]  # job index → step-0 start per phase


def host_counts(data: ModelData, members: Sequence[Member]) -> list[int] | None:
    """Fewest hosts per pool for the members' options: devices (C5) and residency (C6)."""
    out = []
    for p in range(len(data.pools)):
        gpus = max((o.gpus for _, opts in members for o in opts if o.pool == p), default=0)
        mem = sum(o.resident_mib for _, opts in members for o in opts if o.pool == p)
        need = math.ceil(gpus / data.per_host[p])
        if mem:
            if not data.memory_mib[p]:
                return None
            need = max(need, math.ceil(mem / data.memory_mib[p]))
        out.append(need)
    return out


def group_cost(data: ModelData, hosts: Sequence[int]) -> float:
    return sum(n * data.cost[p] for p, n in enumerate(hosts))


def cross(job: JobData, opts: Sequence[OptionData]) -> bool:
    return opts[0].pool != opts[-1].pool


def cycle_bound(members: Sequence[Member]) -> int:
    """A lower bound on the cycle: pool loads (with switches when jobs share a pool), each
    job's step over 1+σ cycles (C9), each phase (C12)."""
    load: dict[int, int] = {}
    jobs_on: dict[int, set[int]] = {}
    lo = 1
    for job, opts in members:
        chain = sum(o.duration for o in opts) + (job.sync_ms if cross(job, opts) else 0)
        lo = max(lo, -(-chain // (1 + job.sigma)), max(o.duration for o in opts))
        for o in opts:
            load[o.pool] = load.get(o.pool, 0) + o.duration
            jobs_on.setdefault(o.pool, set()).add(job.index)
    switch = {job.index: job.switch for job, _ in members}
    for p, total in load.items():
        if len(jobs_on[p]) > 1:
            total += sum(switch[j] for j in jobs_on[p])
        lo = max(lo, total)
    return lo


def cycle_window(members: Sequence[Member]) -> tuple[int, int]:
    """The cycles a group's schedule can have: from :func:`cycle_bound` up to the members'
    smallest SLO (C7); empty (``lo > hi``) when none can. Both schedulers search it."""
    return cycle_bound(members), min(job.slo for job, _ in members)


def schedule_group(members: Sequence[Member], deadline: Deadline | None = None) -> Planned | None:
    if not members:
        return None
    lo, hi = cycle_window(members)
    if lo > hi:
        return None
    tries = sorted({lo + (hi - lo) * i // (CYCLE_TRIES - 1) for i in range(CYCLE_TRIES)})
    if lo < hi:
        tries = sorted({lo, lo + 1, *tries})
    orders = _orders(members)
    for T in tries:
        for order in orders:
            if deadline is not None and deadline.expired():
                return None
            starts = _place(order, T)
            if starts is not None:
                return Planned(T, starts)
    return None


def _orders(members: Sequence[Member]) -> list[list[Member]]:
    """The orders members are placed in: longest step first, then every permutation of a
    group of up to ``PERMUTED`` members (a job placed early at its earliest starts can leave
    no room for a later job's phase; another order often does), else rotations."""
    first = sorted(members, key=lambda m: -sum(o.duration for o in m[1]))
    if len(first) <= PERMUTED:
        rest = [list(p) for p in itertools.permutations(first)][1:]
    else:
        rest = [first[i:] + first[:i] for i in range(1, len(first))]
        rest.append(first[::-1])
    return [first, *rest]


Busy = dict[int, list[tuple[int, int, int, int]]]  # pool → (start mod T, d, job, switch)


def _fits(busy: Busy, pool: int, s: int, d: int, job: JobData, T: int) -> bool:
    for s2, d2, j2, sw2 in busy.get(pool, ()):
        other_job = j2 != job.index
        r = (s2 - s) % T
        if r < d + (sw2 if other_job else 0) or T - r < d2 + (job.switch if other_job else 0):
            return False
    return True


def _earliest(busy: Busy, pool: int, t: int, d: int, job: JobData, T: int) -> int | None:
    cands = {t}
    for s2, d2, j2, _ in busy.get(pool, ()):
        e = s2 + d2 + (job.switch if j2 != job.index else 0)
        cands.add(e + T * -(-(t - e) // T))
    for c in sorted(cands):
        if c >= t + T:
            break
        if _fits(busy, pool, c, d, job, T):
            return c
    return None


def _place(order: Sequence[Member], T: int) -> dict[int, list[int]] | None:
    busy: Busy = {}
    out: dict[int, list[int]] = {}
    for job, opts in order:
        if any(o.duration > T for o in opts):
            return None
        origins: list[int] = []
        t = 0
        while len(origins) < ORIGIN_TRIES and t < T:
            c = _earliest(busy, opts[0].pool, t, opts[0].duration, job, T)
            if c is None or c >= T:
                break
            origins.append(c)
            t = c + 1
        placed = None
        for origin in origins:
            trial: Busy = {p: list(v) for p, v in busy.items()}
            starts = []
            t = origin
            for o in opts:
                s = _earliest(trial, o.pool, t, o.duration, job, T)
                if s is None:
                    break
                starts.append(s)
                trial.setdefault(o.pool, []).append((s % T, o.duration, job.index, job.switch))
                t = s + o.duration
            else:
                sync = job.sync_ms if cross(job, opts) else 0
                if origin + (1 + job.sigma) * T >= t + sync:
                    placed = (starts, trial)
                    break
        if placed is None:
            return None
        out[job.index], busy = placed
    return out

"""Exhaustive reference for tiny co-scheduling instances (tests only): the least hourly cost.

It shares no code with the package's model, data or heuristics. It enumerates every partition
of the jobs into groups, every option of every phase, the fewest hosts per group and pool
(devices and host memory in whole MiB: more hosts never help), and for every cycle ``T`` up to
the members' smallest SLO a depth-first search over integer starts (the first member's step
starts at 0: a periodic schedule may be shifted) with the periodic no-overlap, switch,
precedence and staleness rules of formulations/cosched.md. Found schedules are handed back so
a test can run the independent validator on them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

from schedopt.problems.cosched import CoschedInstance, CoschedSolution, Group, JobPlan, PhasePlan

Choice = tuple[int, ...]  # option index per phase


def partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in partitions(rest):
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]
        yield [[first], *part]


def _sync(inst: CoschedInstance, j: int) -> int:
    return math.ceil(inst.jobs[j].params_b * 16000.0 / inst.sync_bandwidth_gbps - 1e-9)


def _schedule(inst: CoschedInstance, members: list[int], choice: dict[int, Choice], T: int):
    """Integer starts of every member's phases for cycle ``T``, or None."""
    jobs = inst.jobs
    phases = [(j, k) for j in members for k in range(len(jobs[j].phases))]
    opt = {(j, k): jobs[j].phases[k].options[choice[j][k]] for j, k in phases}
    if any(o.duration_ms > T for o in opt.values()):
        return None
    starts: dict[tuple[int, int], int] = {}

    def clash(j: int, k: int, s: int) -> bool:
        o = opt[j, k]
        for (j2, k2), s2 in starts.items():
            o2 = opt[j2, k2]
            if o2.pool != o.pool:
                continue
            other = j2 != j
            r = (s2 - s) % T
            into_other = jobs[j2].switch_ms if other else 0
            into_me = jobs[j].switch_ms if other else 0
            if r < o.duration_ms + into_other or T - r < o2.duration_ms + into_me:
                return True
        return False

    def place(i: int) -> bool:
        if i == len(phases):
            return _chance_holds(inst, members, opt, starts, T)
        j, k = phases[i]
        job = jobs[j]
        last = len(job.phases) - 1
        cross = opt[j, 0].pool != opt[j, last].pool if k == last else False
        if k == 0:
            lo, hi = (0, 0) if j == members[0] else (0, T - 1)
        else:
            lo = starts[j, k - 1] + opt[j, k - 1].duration_ms
            hi = (
                starts[j, 0]
                + (1 + job.staleness) * T
                - sum(opt[j, kk].duration_ms for kk in range(k, last + 1))
            )
        for s in range(lo, hi + 1):
            if k == last and (
                starts.get((j, 0), s) + (1 + job.staleness) * T
                < s + opt[j, k].duration_ms + (_sync(inst, j) if cross else 0)
            ):
                continue
            if clash(j, k, s):
                continue
            starts[j, k] = s
            if place(i + 1):
                return True
            del starts[j, k]
        return False

    return dict(starts) if place(0) else None


def _chance_holds(inst: CoschedInstance, members: list[int], opt: dict, starts: dict, T: int):
    """C13: every member's timetable holds with scenario durations in ⌈(1−ε)S⌉ scenarios."""
    if inst.chance is None:
        return True
    S = inst.chance.scenarios
    need = math.ceil((1 - inst.chance.epsilon) * S - 1e-9)
    jobs = inst.jobs
    held = dict.fromkeys(members, 0)
    for s in range(S):

        def d(key, s=s):
            o = opt[key]
            return o.samples_ms[s] if o.samples_ms else o.duration_ms

        broken = set()
        keys = list(starts)
        for x, (j, k) in enumerate(keys):
            job = jobs[j]
            last = len(job.phases) - 1
            if d((j, k)) > T:
                broken.add(j)
            if k < last and starts[j, k + 1] < starts[j, k] + d((j, k)):
                broken.add(j)
            if k == last:
                cross = opt[j, 0].pool != opt[j, last].pool
                sync = _sync(inst, j) if cross else 0
                if starts[j, 0] + (1 + job.staleness) * T < starts[j, k] + d((j, k)) + sync:
                    broken.add(j)
            for j2, k2 in keys[x + 1 :]:
                if opt[j2, k2].pool != opt[j, k].pool:
                    continue
                other = j2 != j
                r = (starts[j2, k2] - starts[j, k]) % T
                into2 = jobs[j2].switch_ms if other else 0
                into1 = jobs[j].switch_ms if other else 0
                if r < d((j, k)) + into2 or T - r < d((j2, k2)) + into1:
                    broken |= {j, j2}
        for j in members:
            held[j] += j not in broken
    return all(n >= need for n in held.values())


def _hosts(inst: CoschedInstance, members: list[int], choice: dict[int, Choice]):
    out = []
    for pool in inst.pools:
        opts = [
            inst.jobs[j].phases[k].options[choice[j][k]]
            for j in members
            for k in range(len(inst.jobs[j].phases))
        ]
        opts = [o for o in opts if o.pool == pool.name]
        need = math.ceil(max((o.gpus for o in opts), default=0) / pool.gpus_per_host)
        mib = sum(math.ceil(o.resident_gib * 1024 - 1e-9) for o in opts)
        if mib:
            have = math.floor(pool.host_memory_gib * 1024 + 1e-9)
            if not have:
                return None
            need = max(need, math.ceil(mib / have))
        out.append(need)
    return out


def _choices(inst: CoschedInstance, j: int) -> list[Choice]:
    per_host = {p.name: p.gpus_per_host for p in inst.pools}
    allowed = [
        [o for o, opt in enumerate(ph.options) if opt.tp <= per_host[opt.pool]]
        for ph in inst.jobs[j].phases
    ]
    return list(itertools.product(*allowed))


def best_groups(inst: CoschedInstance, members: list[int]):
    """Every (cost, hosts, solution part) the group can run with, one per host vector."""
    out: dict[tuple[int, ...], tuple] = {}
    prices = [p.price_per_gpu_hour * p.gpus_per_host for p in inst.pools]
    for combo in itertools.product(*(_choices(inst, j) for j in members)):
        choice = dict(zip(members, combo, strict=True))
        hosts = _hosts(inst, members, choice)
        if hosts is None or tuple(hosts) in out:
            continue
        if any(n > p.hosts for n, p in zip(hosts, inst.pools, strict=True)):
            continue
        slo = min(inst.jobs[j].slo_ms for j in members)
        for T in range(1, slo + 1):
            starts = _schedule(inst, members, choice, T)
            if starts is not None:
                cost = sum(n * c for n, c in zip(hosts, prices, strict=True))
                out[tuple(hosts)] = (cost, choice, T, starts)
                break
    return out


def least_cost(inst: CoschedInstance) -> tuple[float, CoschedSolution] | None:
    """The least hourly cost over every plan, with a plan reaching it; None if none is valid."""
    n = len(inst.jobs)
    cache: dict[tuple[int, ...], dict] = {}
    best: tuple[float, list] | None = None
    for part in partitions(list(range(n))):
        options = []
        for members in part:
            key = tuple(sorted(members))
            if key not in cache:
                cache[key] = best_groups(inst, sorted(members))
            options.append([(key, h, v) for h, v in cache[key].items()])
        for pick in itertools.product(*options):
            total = [sum(h[p] for _, h, _ in pick) for p in range(len(inst.pools))]
            if any(t > p.hosts for t, p in zip(total, inst.pools, strict=True)):
                continue
            cost = sum(v[0] for _, _, v in pick)
            if best is None or cost < best[0] - 1e-9:
                best = (cost, list(pick))
    if best is None:
        return None
    return best[0], _solution(inst, best[1])


def _solution(inst: CoschedInstance, pick: list) -> CoschedSolution:
    groups, plans = [], []
    used = [0] * len(inst.pools)
    for g, (members, hosts, (_, choice, T, starts)) in enumerate(pick):
        names = []
        for p, count in enumerate(hosts):
            names += [f"{inst.pools[p].name}/{used[p] + i}" for i in range(count)]
            used[p] += count
        ids = tuple(inst.jobs[j].id for j in members)
        groups.append(Group(id=f"b{g}", hosts=tuple(names), members=ids, cycle_ms=T))
        for j in members:
            phases = tuple(
                PhasePlan(option=choice[j][k], start_ms=starts[j, k])
                for k in range(len(inst.jobs[j].phases))
            )
            plans.append(JobPlan(job_id=inst.jobs[j].id, group=f"b{g}", phases=phases))
    return CoschedSolution(groups=tuple(groups), plans=tuple(plans))

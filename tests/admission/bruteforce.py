"""Exhaustive reference solver for tiny admission instances (tests only).

It shares no code with the package's models: it enumerates every schedule of every SLO job
(idle or one allowed option per slot), keeps combinations whose every slot can be packed onto
the hosts (checked by exhaustive bin packing, not by the C3 chunk argument), and returns the best
total value of the earliest tier each job meets. Best-effort jobs cannot raise the first
objective, so they are left idle.
"""

from __future__ import annotations

import itertools
import math

from schedopt.problems.admission import AdmissionInstance


def _options(inst: AdmissionInstance, job) -> list[tuple[str, int, int]]:
    types = inst.cluster.gpu_types()
    tables = job.throughput_by_type or {g: job.throughput for g in types}
    return [
        (g, n, math.floor(r * inst.slot_s + 1e-9)) for g, t in tables.items() for n, r in t.items()
    ]


def packable(inst: AdmissionInstance, items: list[tuple[str, int]]) -> bool:
    """Can every (type, n) item be placed: on one host if it fits a host, else on whole hosts?"""
    out = set(inst.unavailable_gpus)
    hosts = []
    for h in inst.cluster.hosts():
        on = inst.cluster.gpus_on(h)
        if on:
            g = inst.cluster.gpu(on[0]).gpu_type
            hosts.append([g, sum(1 for x in on if x not in out), len(on)])
    biggest = {}
    for g, _, size in hosts:
        biggest[g] = max(biggest.get(g, 0), size)
    items = sorted(items, key=lambda it: -it[1])

    def go(i: int) -> bool:
        if i == len(items):
            return True
        g, n = items[i]
        if n > biggest.get(g, 0):
            whole = [
                k
                for k, (hg, free, size) in enumerate(hosts)
                if hg == g and free == size == biggest[g]
            ]
            need = n // biggest[g]
            if n % biggest[g] or len(whole) < need:
                return False
            for combo in itertools.combinations(whole, need):
                for k in combo:
                    hosts[k][1] = 0
                if go(i + 1):
                    return True
                for k in combo:
                    hosts[k][1] = hosts[k][2]
            return False
        for k, (hg, free, _) in enumerate(hosts):
            if hg == g and free >= n:
                hosts[k][1] -= n
                ok = go(i + 1)
                hosts[k][1] += n
                if ok:
                    return True
        return False

    return go(0)


def best_first_level(inst: AdmissionInstance) -> float | None:
    """Max guaranteed value; None if the earlier-admitted jobs cannot all keep a guarantee."""
    T, slot = inst.slots, inst.slot_s
    slo = [j for j in inst.jobs if j.kind.is_slo]
    per_job: list[list[tuple[float, tuple]]] = []
    for job in slo:
        opts = _options(inst, job)
        first = math.ceil(job.arrival_s / slot - 1e-9)
        choices = []
        if not job.admitted:
            choices.append((0.0, (None,) * T))
        for sched in itertools.product([None, *range(len(opts))], repeat=T):
            if any(sched[t] is not None for t in range(min(first, T))):
                continue
            value = None
            for tier in job.deadlines:
                ends = math.floor(tier.deadline_s / slot + 1e-9)
                done = sum(opts[o][2] for t, o in enumerate(sched[:ends]) if o is not None)
                if done >= job.remaining_iterations:
                    value = tier.value
                    break
            if value is not None:
                choices.append((value, tuple(None if o is None else opts[o][:2] for o in sched)))
        # Dominance-free but smaller: keep one schedule per (value, usage pattern).
        per_job.append(list(dict.fromkeys(choices)))
    best: float | None = None

    def go(i: int, value: float, usage: list[list[tuple[str, int]]]) -> None:
        nonlocal best
        if i == len(per_job):
            best = value if best is None else max(best, value)
            return
        for v, sched in per_job[i]:
            trial = [u + ([sched[t]] if sched[t] is not None else []) for t, u in enumerate(usage)]
            if all(packable(inst, trial[t]) for t in range(T) if sched[t] is not None):
                go(i + 1, value + v, trial)

    go(0, 0.0, [[] for _ in range(T)])
    return best

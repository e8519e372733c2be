"""Exhaustive reference solver for tiny fair-share rounds (tests only).

It shares no code with the package's models or validator: it enumerates every host-level
allocation of every job (idle, or an allowed (type, count) split over hosts of that type in
every possible way; one host only when ``allow_multi_host`` is false), keeps those within the
free GPUs of every host, the hard guarantees and the preemption cap, and returns the best
minimum long-term share (L1) over the tenants, or over the jobs in per-job mode.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from schedopt.core.status import Status
from schedopt.problems.fairshare import FairnessUnit, FairshareInstance
from schedopt.problems.fairshare.data import SHARE_SCALE


def _splits(n: int, hosts: list[tuple[str, int]]):
    """Every way to put n GPUs on hosts (each part <= the host's free GPUs, parts >= 1)."""
    if n == 0:
        yield {}
        return
    if not hosts:
        return
    (h, cap), rest = hosts[0], hosts[1:]
    for take in range(min(n, cap), -1, -1):
        for tail in _splits(n - take, rest):
            yield ({h: take} | tail) if take else tail


def best_min_share(inst: FairshareInstance) -> float | None:
    """The optimal L1, or None when no allocation satisfies the hard constraints."""
    out = set(inst.unavailable_gpus)
    free, htype = {}, {}
    for h in inst.cluster.hosts():
        on = inst.cluster.gpus_on(h)
        free[h] = sum(1 for g in on if g not in out)
        htype[h] = inst.cluster.gpu(on[0]).gpu_type
    per_type = Counter()
    max_free = Counter()
    for h, g in htype.items():
        per_type[g] += free[h]
        max_free[g] = max(max_free[g], free[h])
    C = sum(per_type.values())

    def usable(n, g):
        return n <= per_type[g] and (inst.allow_multi_host or n <= max_free[g])

    biggest = {
        job.id: max((n for g, t in job.throughput.items() for n in t if usable(n, g)), default=0)
        for job in inst.jobs
    }
    demand = Counter()
    for job in inst.jobs:
        demand[job.tenant] += biggest[job.id]
    W = sum(t.weight for t in inst.tenants)
    quota = {t.id: math.floor(C * t.weight / W + 1e-9) for t in inst.tenants}
    # (id, jobs, used GPU-s, deserved GPU-s after the round, demand) of every unit
    if inst.fairness_unit is FairnessUnit.JOB:
        w = {j.id: 1.0 if j.weight is None else j.weight for j in inst.jobs}
        Wj = sum(w[j.id] for j in inst.jobs if biggest[j.id] > 0)
        units = [
            (
                j.id,
                {j.id},
                j.used_gpu_s,
                j.deserved_gpu_s
                + inst.round_s * min(biggest[j.id], C * w[j.id] / Wj if Wj else 0.0),
                biggest[j.id],
            )
            for j in inst.jobs
        ]
    else:
        units = [
            (
                t.id,
                {j.id for j in inst.jobs if j.tenant == t.id},
                t.used_gpu_s,
                t.deserved_gpu_s + inst.round_s * min(demand[t.id], quota[t.id]),
                demand[t.id],
            )
            for t in inst.tenants
        ]
    counted = [(v, jobs, u, d) for v, jobs, u, d, want in units if want > 0 and d > 0]
    need = {}
    if inst.guarantees_hard:
        for t in inst.tenants:
            if demand[t.id] > 0:
                g = quota[t.id] if t.guaranteed_gpus is None else t.guaranteed_gpus
                need[t.id] = min(g, demand[t.id])

    choices = []
    for job in inst.jobs:
        opts = [None]
        for g, table in job.throughput.items():
            hosts = [(h, free[h]) for h in free if htype[h] == g and free[h] > 0]
            for n in table:
                if not usable(n, g):
                    continue
                for split in _splits(n, hosts):
                    if inst.allow_multi_host or len(split) == 1:
                        opts.append((g, split))
        choices.append(opts)

    best = None
    used = Counter()
    gpus = Counter()
    of_job = Counter()

    def changed(job, choice):
        p = job.previous
        if p is None:
            return 0
        return int(choice is None or choice[0] != p.gpu_type or choice[1] != dict(p.hosts))

    def go(i, preempted):
        nonlocal best
        if inst.max_preemptions is not None and preempted > inst.max_preemptions:
            return
        if i == len(inst.jobs):
            if any(gpus[u] < g for u, g in need.items()):
                return
            shares = [
                (u + inst.round_s * sum(of_job[j] for j in jobs)) / d for _, jobs, u, d in counted
            ]
            value = min(shares, default=0.0)
            best = value if best is None else max(best, value)
            return
        job = inst.jobs[i]
        for choice in choices[i]:
            if choice is not None:
                _g, split = choice
                if any(used[h] + n > free[h] for h, n in split.items()):
                    continue
                for h, n in split.items():
                    used[h] += n
                gpus[job.tenant] += sum(split.values())
                of_job[job.id] = sum(split.values())
            go(i + 1, preempted + changed(job, choice))
            if choice is not None:
                for h, n in split.items():
                    used[h] -= n
                gpus[job.tenant] -= sum(split.values())
                of_job[job.id] = 0

    go(0, 0)
    return best


#: CP-SAT's shares sit on a grid of 1/SHARE_SCALE (formulations/fairshare.md).
CPSAT_TOL = 1.01 / SHARE_SCALE


def assert_exact(result, method: str, truth: float, tol: float = 1e-7) -> None:
    """OPTIMAL is a proof for the real shares, on every back-end: the value is the truth. Only
    CP-SAT may stop at its grid's optimum instead, as FEASIBLE saying so, within one step."""
    if method == "cpsat" and result.status is Status.FEASIBLE:
        assert result.stats["grid_optimal"] == "yes" and "grid" in result.explanation
        assert result.objective == pytest.approx(truth, abs=CPSAT_TOL)
        assert result.best_bound > result.objective
    else:
        assert result.status is Status.OPTIMAL, (result.status, result.explanation)
        assert result.objective == pytest.approx(truth, abs=tol)

"""The decomposition's parts (formulations/fairshare.md, "Decomposition"): every part holds an
equal slice of every GPU pool (hosts of each type, in topology order, or at random for
``decomp:pop``) and a slice of the jobs: a running job goes with the hosts it runs on (so that
it can be kept), the others are dealt tenant by tenant so that every part sees every tenant.
A unit's accounts are split in proportion to its demand in each part
(``α_vp = δ_vp / Σ_p δ_vp``): a share of ``t`` in every part is a share of at least ``t`` on
the whole (the formulation's Claim)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .data import ModelData, TenantData
from .units import NotCounted


def _host_groups(data: ModelData, k: int, random: bool, seed: int) -> dict[str, int]:
    """Host → part: each pool's hosts in ``k`` groups of about equal free GPUs."""
    rng = np.random.default_rng(seed)
    out: dict[str, int] = {}
    for g in sorted(data.type_capacity):
        hosts = sorted(h for h, t in data.host_type.items() if t == g)
        if random:
            hosts = [hosts[i] for i in rng.permutation(len(hosts))]
        total, seen = max(1, data.type_capacity[g]), 0
        for h in hosts:
            out[h] = min(k - 1, seen * k // total)
            seen += data.free[h]
    return out


def split(data: ModelData, k: int, random: bool, seed: int) -> list[list[int]]:
    """Job indices of each part (hosts: :func:`_host_groups`)."""
    rng = np.random.default_rng(seed + 1)
    groups = _host_groups(data, k, random, seed)
    parts: list[list[int]] = [[] for _ in range(k)]
    free: dict[int, list[int]] = {}
    for job in data.jobs:
        if job.prev_hosts:
            parts[groups[min(job.prev_hosts)]].append(job.index)
        else:
            free.setdefault(job.tenant, []).append(job.index)
    turn = 0
    for tenant in sorted(free):
        jobs = free[tenant]
        if random:
            jobs = [jobs[i] for i in rng.permutation(len(jobs))]
        for i in jobs:
            parts[turn % k].append(i)
            turn += 1
    return parts


def scale_units(data: ModelData, parts: list[ModelData]) -> list[ModelData]:
    """Every part's units and tenants: accounts split by ``α_vp`` (module docstring)."""
    demand = np.zeros((len(parts), len(data.units)))
    for p, part in enumerate(parts):
        for job in part.jobs:
            demand[p, job.unit] += max((o.n for o in job.options), default=0)
    total = demand.sum(axis=0)
    out = []
    for p, part in enumerate(parts):
        members: dict[int, list[int]] = {}
        tenant_jobs: dict[int, list[int]] = {}
        for job in part.jobs:
            members.setdefault(job.unit, []).append(job.index)
            tenant_jobs.setdefault(job.tenant, []).append(job.index)
        units = []
        for v in data.units:
            alpha = demand[p, v.index] / total[v.index] if total[v.index] > 0 else 0.0
            reason = v.not_counted
            if reason is None and demand[p, v.index] <= 0:
                reason = NotCounted.NO_DEMAND
            units.append(
                dataclasses.replace(
                    v,
                    demand=int(demand[p, v.index]),
                    deserved=v.deserved * alpha,
                    used_s=v.used_s * alpha,
                    deserved_after_s=v.deserved_after_s * alpha,
                    jobs=tuple(members.get(v.index, ())),
                    not_counted=reason,
                )
            )
        tenants = tuple(
            TenantData(
                t.index, t.id, t.quota, t.demand, t.deserved, 0, tuple(tenant_jobs.get(t.index, ()))
            )
            for t in data.tenants
        )
        out.append(dataclasses.replace(part, units=tuple(units), tenants=tenants))
    return out


__all__ = ["scale_units", "split"]

"""Independent validator and evaluator for fair-share solutions.

This module re-derives everything from the raw instance fields and the solution; it shares no
code with the model builders (``data.py``, ``model.py``, ``codec.py``), the Gavel LP or the
heuristics, so a modelling bug shows up as a violation instead of being checked against itself.
Constraint ids are the ``V`` numbers of ``formulations/fairshare.md``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from schedopt.core.result import Violation

from .instance import FairnessUnit, FairshareInstance, Job
from .solution import Allocation, FairshareSolution


@dataclass(frozen=True)
class _Cluster:
    free: dict[str, int]  # free GPUs per host
    host_type: dict[str, str | None]
    per_type: dict[str, int]
    largest_host: dict[str, int]  # σ_g: most GPUs on one host of the type
    largest_free: dict[str, int]


def _cluster(inst: FairshareInstance) -> _Cluster:
    out = set(inst.unavailable_gpus)
    free: dict[str, int] = {}
    host_type: dict[str, str | None] = {}
    per_type: Counter[str] = Counter()
    largest: dict[str, int] = {}
    largest_free: dict[str, int] = {}
    for h in inst.cluster.hosts():
        on = inst.cluster.gpus_on(h)
        free[h] = sum(1 for g in on if g not in out)
        g = inst.cluster.gpu(on[0]).gpu_type if on else None
        host_type[h] = g
        if g is not None:
            per_type[g] += free[h]
            largest[g] = max(largest.get(g, 0), len(on))
            largest_free[g] = max(largest_free.get(g, 0), free[h])
    return _Cluster(free, host_type, dict(per_type), largest, largest_free)


def _usable(inst: FairshareInstance, c: _Cluster, job: Job) -> list[tuple[str, int, float]]:
    """The (type, count, rate) options this cluster can host now."""
    return [
        (g, n, r)
        for g, table in job.throughput.items()
        for n, r in table.items()
        if r > 0  # 0: the job cannot run so
        and n <= c.per_type.get(g, 0)
        and (inst.allow_multi_host or n <= c.largest_free.get(g, 0))
    ]


@dataclass(frozen=True)
class _Tenant:
    id: str
    guarantee: int  # γ_u (C5)


@dataclass(frozen=True)
class _Unit:
    """A fairness unit (F1): a tenant, or a job in per-job mode."""

    id: str
    jobs: frozenset[str]
    demand: int
    deserved_after_s: float
    used_s: float

    @property
    def counted(self) -> bool:  # F3
        return self.demand > 0 and self.deserved_after_s > 0


@dataclass(frozen=True)
class _Derived:
    """What the checks read from an instance, derived from its raw fields once: the cluster,
    every job's largest usable gang (0: none) and best usable rate (0.0: none)."""

    cluster: _Cluster
    demand: dict[str, int]
    best: dict[str, float]
    units: list[_Unit]


def _derived(inst: FairshareInstance) -> _Derived:
    """The instance's derived data, made once per instance (it is immutable): validate,
    evaluate and metrics of one answer then derive it once, not four times (1 s at 20,000
    jobs, issue #17). It goes with its instance (``FrozenModel.derived``)."""
    return inst.derived("fairshare.validate", lambda: _derive(inst))


def _derive(inst: FairshareInstance) -> _Derived:
    c = _cluster(inst)
    demand: dict[str, int] = {}
    best: dict[str, float] = {}
    for job in inst.jobs:
        usable = _usable(inst, c, job)
        demand[job.id] = max((n for _, n, _ in usable), default=0)
        best[job.id] = max((r for _, _, r in usable), default=0.0)
    return _Derived(c, demand, best, _units(inst, c, demand))


def _demands(inst: FairshareInstance, c: _Cluster) -> dict[str, int]:
    """Every job's largest gang this cluster can host (0: none)."""
    return _derived(inst).demand


def _quota(capacity: int, weight: float, total: float) -> int:
    return math.floor(capacity * weight / total + 1e-9)


def _tenants(inst: FairshareInstance, c: _Cluster) -> list[_Tenant]:
    capacity = sum(c.per_type.values())
    total_w = sum(t.weight for t in inst.tenants)
    demand = Counter[str]()
    for job_id, n in _demands(inst, c).items():
        demand[inst.jobs[inst.job_index[job_id]].tenant] += n
    out = []
    for t in inst.tenants:
        guarantee = 0
        if inst.guarantees_hard and demand[t.id] > 0:
            quota = _quota(capacity, t.weight, total_w)
            wanted = quota if t.guaranteed_gpus is None else t.guaranteed_gpus
            guarantee = min(wanted, demand[t.id])
        out.append(_Tenant(t.id, guarantee))
    return out


def _units(inst: FairshareInstance, c: _Cluster, demand: dict[str, int]) -> list[_Unit]:
    """F1–F2: tenants with whole-GPU quotas, or jobs with fractional shares of the capacity."""
    capacity = sum(c.per_type.values())
    L = inst.round_s
    if inst.fairness_unit is FairnessUnit.JOB:
        competing = sum(j.unit_weight for j in inst.jobs if demand[j.id] > 0)
        out = []
        for j in inst.jobs:
            fair = capacity * j.unit_weight / competing if competing else 0.0
            deserved = min(float(demand[j.id]), fair)
            after = j.deserved_gpu_s + L * deserved
            out.append(_Unit(j.id, frozenset({j.id}), demand[j.id], after, j.used_gpu_s))
        return out
    total_w = sum(t.weight for t in inst.tenants)
    members: dict[str, set[str]] = {t.id: set() for t in inst.tenants}
    for j in inst.jobs:
        members[j.tenant].add(j.id)
    units = []
    for t in inst.tenants:
        want = sum(demand[j] for j in members[t.id])
        deserved = min(want, _quota(capacity, t.weight, total_w))
        after = t.deserved_gpu_s + L * deserved
        units.append(_Unit(t.id, frozenset(members[t.id]), want, after, t.used_gpu_s))
    return units


def _changed(job: Job, a: Allocation) -> bool:
    p = job.previous
    return p is not None and (a.gpu_type != p.gpu_type or dict(a.hosts) != dict(p.hosts))


def validate(inst: FairshareInstance, sol: FairshareSolution) -> list[Violation]:
    out: list[Violation] = []
    jobs = {j.id: j for j in inst.jobs}
    counts = Counter(a.job_id for a in sol.allocations)
    for job_id, n in counts.items():
        if job_id not in jobs:
            out.append(Violation("V1", f"allocation for unknown job {job_id!r}"))
        elif n > 1:
            out.append(Violation("V1", f"job {job_id!r} has {n} allocations"))
    for job_id in jobs:
        if job_id not in counts:
            out.append(Violation("V1", f"job {job_id!r} has no allocation"))
    if out:
        return out
    c = _derived(inst).cluster
    used = Counter[str]()
    gpus_of = Counter[str]()
    for a in sol.allocations:
        job = jobs[a.job_id]
        name = f"job {job.id!r}"
        if any(n < 1 for n in a.hosts.values()):
            out.append(Violation("V1", f"{name}: host GPU counts must be >= 1"))
            continue
        if (a.gpu_type is None) != (not a.hosts):
            out.append(Violation("V1", f"{name}: type {a.gpu_type!r} with hosts {a.hosts}"))
            continue
        if not a.hosts:
            continue
        if not job.throughput.get(a.gpu_type or "", {}).get(a.count, 0.0) > 0:
            out.append(Violation("V2", f"{name}: {a.count}×{a.gpu_type} is not an allowed option"))
        for h, n in a.hosts.items():
            if h not in c.free:
                out.append(Violation("V3", f"{name}: unknown host {h!r}"))
                continue
            if c.host_type[h] != a.gpu_type:
                out.append(Violation("V3", f"{name}: host {h!r} has no {a.gpu_type} GPUs"))
            used[h] += n
        if not inst.allow_multi_host and len(a.hosts) > 1:
            out.append(Violation("V4", f"{name}: spans hosts {sorted(a.hosts)} (one host only)"))
        gpus_of[job.tenant] += a.count
    for h, n in used.items():
        if n > c.free[h]:
            out.append(Violation("V3", f"host {h!r}: {n} GPUs used, {c.free[h]} free"))
    for t in _tenants(inst, c):
        if t.guarantee and gpus_of[t.id] < t.guarantee:
            out.append(
                Violation("V5", f"tenant {t.id!r}: {gpus_of[t.id]} GPUs < guarantee {t.guarantee}")
            )
    if inst.max_preemptions is not None:
        changed = sum(1 for a in sol.allocations if _changed(jobs[a.job_id], a))
        if changed > inst.max_preemptions:
            out.append(
                Violation("V6", f"{changed} preemptions > max_preemptions {inst.max_preemptions}")
            )
    return out


def _shares(
    inst: FairshareInstance, units: list[_Unit], sol: FairshareSolution
) -> dict[str, float]:
    """The LTGF after the round of every counted unit (F3)."""
    gpus = {a.job_id: a.count for a in sol.allocations}
    return {
        v.id: (v.used_s + inst.round_s * sum(gpus.get(j, 0) for j in v.jobs)) / v.deserved_after_s
        for v in units
        if v.counted
    }


def evaluate(inst: FairshareInstance, sol: FairshareSolution) -> tuple[float, float, float]:
    """(L1 minimum LTGF after the round, L2 normalised effective throughput, L3 cost in s)."""
    d = _derived(inst)
    c = d.cluster
    shares = _shares(inst, d.units, sol)
    jobs = {j.id: j for j in inst.jobs}
    throughput = cost = 0.0
    for a in sol.allocations:
        job = jobs[a.job_id]
        if _changed(job, a):
            cost += job.restart_cost_s
        if not a.hosts:
            continue
        best = d.best[job.id]
        rate = job.throughput.get(a.gpu_type or "", {}).get(a.count, 0.0)
        throughput += rate / best if best > 0 else 0.0
        sigma = c.largest_host.get(a.gpu_type or "", 1)
        cost += inst.fragmentation_cost_s * (math.ceil(a.count / sigma) - 1)
    return (min(shares.values(), default=0.0), throughput, cost)


def metrics(inst: FairshareInstance, sol: FairshareSolution) -> dict[str, float]:
    units = _derived(inst).units
    shares = _shares(inst, units, sol)
    values = list(shares.values())
    jobs = {j.id: j for j in inst.jobs}
    out: dict[str, float] = {
        "units_counted": float(len(shares)),  # F3
        "units_not_counted": float(len(units) - len(shares)),
    }
    if values:
        lo, hi = min(values), max(values)
        # Jain's index over the shares divided by the largest (the same value, and no overflow
        # where a unit deserved almost nothing: its share may be near the float limit).
        scaled = [v / hi for v in values] if hi > 0 else []
        square = sum(v * v for v in scaled)
        out["min_share"] = lo
        out["max_share"] = hi
        out["jain_index"] = sum(scaled) ** 2 / (len(scaled) * square) if square > 0 else 1.0
        if lo > 0:  # omitted when some tenant has nothing (the ratio is unbounded)
            out["max_min_share_ratio"] = hi / lo
    _, throughput, _ = evaluate(inst, sol)
    allocated = sum(a.count for a in sol.allocations)
    out["effective_throughput"] = throughput
    out["gpus_allocated"] = float(allocated)
    out["utilisation"] = allocated / inst.free_gpus if inst.free_gpus else 0.0
    out["preemptions"] = float(sum(1 for a in sol.allocations if _changed(jobs[a.job_id], a)))
    out["extra_hosts_spanned"] = float(sum(max(0, len(a.hosts) - 1) for a in sol.allocations))
    for unit_id, v in shares.items():
        out[f"share[{unit_id}]"] = v
    return out

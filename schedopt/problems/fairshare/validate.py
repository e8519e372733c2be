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
from typing import Any, cast

import numpy as np

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


def _widest(inst: FairshareInstance, c: _Cluster) -> dict[str, int]:
    """By GPU type, the most GPUs one job may use now (C1; one host without multi-host)."""
    if inst.allow_multi_host:
        return dict(c.per_type)
    return {g: min(n, c.largest_free.get(g, 0)) for g, n in c.per_type.items()}


def _usable(job: Job, widest: dict[str, int]) -> tuple[int, float]:
    """The largest gang (0: none) and best rate (0.0: none) of ``job``'s options this cluster
    can host now (``widest``: :func:`_widest`; rate 0: the job cannot run so)."""
    demand, best = 0, 0.0
    for g, table in job.throughput.items():
        most = widest.get(g, 0)
        for n, r in table.items():
            if r > 0 and n <= most:
                if n > demand:
                    demand = n
                if r > best:
                    best = r
    return demand, best


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
    unit_of: np.ndarray  # by job (instance order): the index of its unit in ``units``


def _derived(inst: FairshareInstance) -> _Derived:
    """The instance's derived data, made once per instance (it is immutable): validate,
    evaluate and metrics of one answer then derive it once, not four times (1 s at 20,000
    jobs, issue #17). It goes with its instance (``FrozenModel.derived``)."""
    return inst.derived("fairshare.validate", lambda: _derive(inst))


def _derive(inst: FairshareInstance) -> _Derived:
    c = _cluster(inst)
    demand: dict[str, int] = {}
    best: dict[str, float] = {}
    widest = _widest(inst, c)
    for job in inst.jobs:
        demand[job.id], best[job.id] = _usable(job, widest)
    units = _units(inst, c, demand)
    unit_of = np.zeros(len(inst.jobs), dtype=np.int64)
    for k, v in enumerate(units):
        unit_of[[inst.job_index[j] for j in v.jobs]] = k
    return _Derived(c, demand, best, units, unit_of)


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
    index = inst.job_index
    counts = Counter(a.job_id for a in sol.allocations)
    for job_id, n in counts.items():
        if job_id not in index:
            out.append(Violation("V1", f"allocation for unknown job {job_id!r}"))
        elif n > 1:
            out.append(Violation("V1", f"job {job_id!r} has {n} allocations"))
    if len(counts) < len(index):
        out.extend(
            Violation("V1", f"job {job_id!r} has no allocation")
            for job_id in index
            if job_id not in counts
        )
    if out:
        return out
    c = _derived(inst).cluster
    used = Counter[str]()
    gpus_of = Counter[str]()
    multi = inst.allow_multi_host
    for a in sol.allocations:
        hosts = a.hosts
        if not hosts:
            if a.gpu_type is not None:
                out.append(
                    Violation("V1", f"job {a.job_id!r}: type {a.gpu_type!r} with hosts {{}}")
                )
            continue
        job = inst.jobs[index[a.job_id]]
        name = f"job {job.id!r}"
        if min(hosts.values()) < 1:
            out.append(Violation("V1", f"{name}: host GPU counts must be >= 1"))
            continue
        if a.gpu_type is None:
            out.append(Violation("V1", f"{name}: type {a.gpu_type!r} with hosts {hosts}"))
            continue
        count = sum(hosts.values())
        if not job.throughput.get(a.gpu_type, {}).get(count, 0.0) > 0:
            out.append(Violation("V2", f"{name}: {count}×{a.gpu_type} is not an allowed option"))
        for h, n in hosts.items():
            if h not in c.free:
                out.append(Violation("V3", f"{name}: unknown host {h!r}"))
                continue
            if c.host_type[h] != a.gpu_type:
                out.append(Violation("V3", f"{name}: host {h!r} has no {a.gpu_type} GPUs"))
            used[h] += n
        if not multi and len(hosts) > 1:
            out.append(Violation("V4", f"{name}: spans hosts {sorted(hosts)} (one host only)"))
        gpus_of[job.tenant] += count
    for h, n in used.items():
        if n > c.free[h]:
            out.append(Violation("V3", f"host {h!r}: {n} GPUs used, {c.free[h]} free"))
    for t in _tenants(inst, c):
        if t.guarantee and gpus_of[t.id] < t.guarantee:
            out.append(
                Violation("V5", f"tenant {t.id!r}: {gpus_of[t.id]} GPUs < guarantee {t.guarantee}")
            )
    if inst.max_preemptions is not None:
        changed = sum(1 for a in sol.allocations if _changed(inst.jobs[index[a.job_id]], a))
        if changed > inst.max_preemptions:
            out.append(
                Violation("V6", f"{changed} preemptions > max_preemptions {inst.max_preemptions}")
            )
    return out


@dataclass(frozen=True)
class _Read:
    """One answer read once, by allocation (in the solution's order): its job's index in the
    instance, GPUs, hosts spanned, whether it changed a running job's allocation, its rate
    over the job's best usable rate (0 idle or no usable rate), and its restart and host costs
    (s) in the order :func:`evaluate` adds them."""

    job: np.ndarray
    count: np.ndarray
    spanned: np.ndarray
    changed: np.ndarray
    relative: np.ndarray
    costs: np.ndarray  # (allocations, 2): restart cost, then host cost


def _read(inst: FairshareInstance, sol: FairshareSolution) -> _Read:
    """:class:`_Read` of ``sol``; the last one read is kept with the instance (solutions are
    immutable), so that evaluate and metrics of one answer read it once (issue #17)."""
    # (one (solution, read) pair, replaced whole: a thread reading it never sees a solution
    # with another's read)
    last: list[Any] = inst.derived("fairshare.validate.last", list)
    got = last[0] if last else None
    if got is not None and got[0] is sol:
        return cast(_Read, got[1])
    d = _derived(inst)
    sigma_of = d.cluster.largest_host
    index, jobs = inst.job_index, inst.jobs
    n = len(sol.allocations)
    job = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    spanned = np.zeros(n, dtype=np.int64)
    changed = np.zeros(n, dtype=bool)
    relative = np.zeros(n)
    costs = np.zeros((n, 2))
    frag = inst.fragmentation_cost_s
    for k, a in enumerate(sol.allocations):
        i = index[a.job_id]
        j = jobs[i]
        job[k] = i
        if _changed(j, a):
            changed[k] = True
            costs[k, 0] = j.restart_cost_s
        if not a.hosts:
            continue
        m = sum(a.hosts.values())
        count[k], spanned[k] = m, len(a.hosts)
        best = d.best[j.id]
        if best > 0:
            relative[k] = j.throughput.get(a.gpu_type or "", {}).get(m, 0.0) / best
        costs[k, 1] = frag * (math.ceil(m / sigma_of.get(a.gpu_type or "", 1)) - 1)
    out = _Read(job, count, spanned, changed, relative, costs)
    last[:] = [(sol, out)]
    return out


def _in_order(values: np.ndarray) -> float:
    """The sum of ``values`` added one by one in order (as a loop would: the same float)."""
    return float(np.add.accumulate(values.ravel())[-1]) if values.size else 0.0


def _shares(inst: FairshareInstance, d: _Derived, r: _Read) -> dict[str, float]:
    """The LTGF after the round of every counted unit (F3)."""
    gpus = np.bincount(d.unit_of[r.job], weights=r.count, minlength=len(d.units))
    return {
        v.id: (v.used_s + inst.round_s * int(gpus[k])) / v.deserved_after_s
        for k, v in enumerate(d.units)
        if v.counted
    }


def evaluate(inst: FairshareInstance, sol: FairshareSolution) -> tuple[float, float, float]:
    """(L1 minimum LTGF after the round, L2 normalised effective throughput, L3 cost in s)."""
    d, r = _derived(inst), _read(inst, sol)
    shares = _shares(inst, d, r)
    return (min(shares.values(), default=0.0), _in_order(r.relative), _in_order(r.costs))


def metrics(inst: FairshareInstance, sol: FairshareSolution) -> dict[str, float]:
    d, r = _derived(inst), _read(inst, sol)
    units = d.units
    shares = _shares(inst, d, r)
    values = list(shares.values())
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
    allocated = int(r.count.sum())
    out["effective_throughput"] = _in_order(r.relative)
    out["gpus_allocated"] = float(allocated)
    out["utilisation"] = allocated / inst.free_gpus if inst.free_gpus else 0.0
    out["preemptions"] = float(int(r.changed.sum()))
    out["extra_hosts_spanned"] = float(int(np.maximum(r.spanned - 1, 0).sum()))
    for unit_id, v in shares.items():
        out[f"share[{unit_id}]"] = v
    return out

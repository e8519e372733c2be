"""The round as the models see it: arrays and integers computed once, in one place.

Both exact back-ends, the Gavel LP and the heuristics read this; the validator does not (it
re-derives everything from the raw instance). Every scaling of reals to integers is here — see
"Integer scaling" in ``formulations/fairshare.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

from schedopt.core.errors import ModelTooLargeError
from schedopt.core.powers_of_two import powers_of_two_up_to
from schedopt.core.stopping import Deadline, Ticker, too_slow_to_build

from .instance import FairnessUnit, FairshareInstance
from .units import UnitData, build_units, tenant_quota

#: CP-SAT's minimum share t is an integer in units of 1/SHARE_SCALE.
SHARE_SCALE = 10_000
#: CP-SAT's normalised throughputs e_jo are integers in units of 1/EFF_SCALE.
EFF_SCALE = 10_000
#: CP-SAT's restart and fragmentation costs are integers in units of 1/COST_SCALE seconds.
COST_SCALE = 1_000
#: Accounts in CP-SAT stay below this many time units (keeps every product within 64 bits).
MAX_TIME_UNITS = 10**10
#: Conservative model-building cost per variable (measured on the 1,024-GPU benchmark:
#: ≈ 8 µs for CP-SAT, ≈ 15 µs for PuLP); an exact method that cannot build its model in the
#: time left returns NO_SOLUTION at once instead of breaking the time limit.
BUILD_S_PER_VARIABLE = 3e-5
#: Refuse to build exact models with more decision variables than this.
MAX_MODEL_VARIABLES = 2_000_000
#: Seconds per job that ``solve()`` keeps back for validating and evaluating an answer
#: (measured on 16,384 GPUs × 20,000 jobs: 30 µs of CPU per job, 65 µs of wall time beside
#: other work; since the validator derives its data once per instance, 19 µs of CPU and
#: 25 µs of wall time at load 3.7: 0.38 s and 0.51 s, issue #17; benchmarks/RESULTS.md).
FINISH_S_PER_JOB = 3.5e-5


def finish_reserve_s(inst: FairshareInstance) -> float:
    return 0.05 + FINISH_S_PER_JOB * len(inst.jobs)


#: Slack when turning a minimum share back into whole GPUs (see "How the order is kept").
GPU_TOL = 1e-9


class Option(NamedTuple):
    """Job runs on ``n`` GPUs of ``gpu_type`` at ``rate`` iterations/s; ``eff`` = e_jo.

    (A named tuple: made for every option of every job, 84,000 at 20,000 jobs, where a
    frozen dataclass's constructor took a fifth of the data build, issue #17.)"""

    gpu_type: str
    n: int
    rate: float
    eff: float
    eff_scaled: int
    extra_hosts: int  # ν_o


@dataclass(frozen=True)
class JobData:
    index: int
    id: str
    tenant: int
    unit: int  # its fairness unit v (F1): the tenant's, or its own in per-job mode
    options: tuple[Option, ...]
    was_running: bool  # j ∈ J^P
    prev_option: int | None  # o^P_j when keepable (j ∈ J^K), else None
    prev_hosts: dict[str, int]
    restart_cost: float  # c_j, seconds
    restart_scaled: int
    used_gpu_s: float

    @property
    def keepable(self) -> bool:
        return self.prev_option is not None


@dataclass(frozen=True)
class TenantData:
    """A tenant's quota, demand and hard guarantee (C5, per tenant in either fairness mode);
    its fairness accounts are a unit's (``ModelData.units``)."""

    index: int
    id: str
    quota: int  # q_u
    demand: int  # δ_u
    deserved: int  # d_u
    guarantee: int  # γ_u (0 without hard guarantees)
    jobs: tuple[int, ...]


@dataclass(frozen=True)
class ModelData:
    instance: FairshareInstance
    round_s: float
    jobs: tuple[JobData, ...]
    tenants: tuple[TenantData, ...]
    units: tuple[UnitData, ...]  # V (F1)
    type_capacity: dict[str, int]  # F_g
    free: dict[str, int]  # f_h
    host_type: dict[str, str | None]
    sigma: dict[str, int]  # σ_g
    multi_host: bool
    time_unit: float
    round_units: int  # L̃
    frag_cost: float
    frag_scaled: int
    levels: dict[str, tuple[int, ...]] = field(default_factory=dict)  # S_g

    @cached_property
    def included(self) -> tuple[UnitData, ...]:
        """V⁺ (F3)."""
        return tuple(v for v in self.units if v.included)

    @cached_property
    def keep_hosts(self) -> dict[str, list[tuple[int, int]]]:
        """Host → (job index, GPUs) of keepable previous allocations."""
        out: dict[str, list[tuple[int, int]]] = {}
        for j in self.jobs:
            if j.keepable:
                for h, n in j.prev_hosts.items():
                    out.setdefault(h, []).append((j.index, n))
        return out

    @cached_property
    def forced_preemptions(self) -> int:
        return sum(1 for j in self.jobs if j.was_running and not j.keepable)

    @cached_property
    def restart_constant(self) -> float:
        return sum(j.restart_cost for j in self.jobs if j.was_running)

    def min_gpus(self, unit: UnitData, share: float) -> int:
        """m_v: the fewest whole GPUs that keep ``unit`` at ``share`` or above."""
        need = (share * unit.deserved_after_s - unit.used_s) / self.round_s
        return max(0, math.ceil(need - GPU_TOL))

    def min_share(self, gpus_by_unit: list[float]) -> float:
        shares = [v.share(gpus_by_unit[v.index], self.round_s) for v in self.included]
        return min(shares) if shares else 0.0

    def share_upper_bound(self) -> float:
        """Every unit given its whole demand: no allocation has a higher minimum."""
        return min((v.share(v.demand, self.round_s) for v in self.included), default=0.0)

    @cached_property
    def num_variables(self) -> int:
        n = sum(len(j.options) + (1 if j.keepable else 0) for j in self.jobs) + 1
        if not self.multi_host:
            n += sum(len(self.levels.get(self.host_type[h] or "", ())) for h in self.keep_hosts)
        return n

    def too_big_for(self, seconds: float) -> str | None:
        """Why building the exact model would not fit in ``seconds`` (None: it fits)."""
        return too_slow_to_build(self.num_variables, BUILD_S_PER_VARIABLE, seconds)


def _time_unit(largest_s: float) -> float:
    unit = 1e-3
    while largest_s / unit > MAX_TIME_UNITS:
        unit *= 10
    return unit


def build_data(
    inst: FairshareInstance, *, check_size: bool = True, deadline: Deadline | None = None
) -> ModelData:
    """The model data; ``deadline`` stops the build (:class:`DeadlineReached`) when it passes."""
    tick = Ticker(deadline, "building the model data")
    L = inst.round_s
    free = dict(inst.free_by_host)
    host_type = dict(inst.host_type)
    capacity: dict[str, int] = {}
    sigma = inst.cluster.max_gpus_per_host()
    max_free: dict[str, int] = {}
    for h, g in host_type.items():
        if g is None:
            continue
        capacity[g] = capacity.get(g, 0) + free[h]
        max_free[g] = max(max_free.get(g, 0), free[h])
    C = sum(capacity.values())
    multi = inst.allow_multi_host
    per_job = inst.fairness_unit is FairnessUnit.JOB

    jobs: list[JobData] = []
    tenant_jobs: dict[int, list[int]] = {i: [] for i in range(len(inst.tenants))}
    # the most GPUs one option of each type may ask for (C1, and one host without multi-host)
    widest = {g: c if multi else min(c, max_free.get(g, 0)) for g, c in capacity.items()}
    for i, job in enumerate(inst.jobs):
        tick()
        usable = sorted(
            (g, n, r)
            for g, table in job.throughput.items()
            if g in widest
            for n, r in table.items()
            if r > 0 and n <= widest[g]
        )
        best = max((r for _, _, r in usable), default=1.0)
        options = tuple(
            [
                Option(g, n, r, r / best, round(r / best * EFF_SCALE), -(-n // sigma[g]) - 1)
                for g, n, r in usable
            ]
        )
        prev = job.previous
        prev_option = None
        if prev is not None:
            index = {(o.gpu_type, o.n): k for k, o in enumerate(options)}
            k = index.get((prev.gpu_type, prev.count))
            fits = all(free[h] >= n for h, n in prev.hosts.items())
            if k is not None and fits and (multi or len(prev.hosts) == 1):
                prev_option = k
        t = inst.tenant_index[job.tenant]
        tenant_jobs[t].append(i)
        jobs.append(
            JobData(
                index=i,
                id=job.id,
                tenant=t,
                unit=i if per_job else t,
                options=options,
                was_running=prev is not None,
                prev_option=prev_option,
                prev_hosts=dict(prev.hosts) if prev is not None else {},
                restart_cost=job.restart_cost_s,
                restart_scaled=round(job.restart_cost_s * COST_SCALE),
                used_gpu_s=job.used_gpu_s,
            )
        )

    job_demand = [max((o.n for o in j.options), default=0) for j in jobs]
    members = [tuple(tenant_jobs[u]) for u in range(len(inst.tenants))]
    raw_units = build_units(inst, C, job_demand, members)
    # With fairness_unit 'job' and no jobs there are no units (a valid empty round, as in
    # every problem: nothing to allocate, #16); the time unit is then the round's.
    largest = max(
        [L * C + v.used_s for v in raw_units] + [v.deserved_after_s for v in raw_units],
        default=L,
    )
    seconds = _time_unit(max(largest, L))  # one CP-SAT time unit, GPU-seconds
    units = tuple(
        replace(
            v,
            used_units=round(v.used_s / seconds),
            deserved_units=max(1, round(v.deserved_after_s / seconds)),
        )
        for v in raw_units
    )
    total_w = sum(t.weight for t in inst.tenants)
    tenants = []
    for u, tenant in enumerate(inst.tenants):
        quota = tenant_quota(C, tenant.weight, total_w)
        demand = sum(job_demand[j] for j in members[u])
        guarantee = 0
        if inst.guarantees_hard and demand > 0:  # C5, per tenant in either fairness mode
            wanted = quota if tenant.guaranteed_gpus is None else tenant.guaranteed_gpus
            guarantee = min(wanted, demand)
        tenants.append(
            TenantData(u, tenant.id, quota, demand, min(demand, quota), guarantee, members[u])
        )
    data = ModelData(
        instance=inst,
        round_s=L,
        jobs=tuple(jobs),
        tenants=tuple(tenants),
        units=units,
        type_capacity=capacity,
        free=free,
        host_type=host_type,
        sigma=sigma,
        multi_host=multi,
        time_unit=seconds,
        round_units=max(1, round(L / seconds)),
        frag_cost=inst.fragmentation_cost_s,
        frag_scaled=round(inst.fragmentation_cost_s * COST_SCALE),
        levels={g: powers_of_two_up_to(s) for g, s in sigma.items()},
    )
    if check_size and data.num_variables > MAX_MODEL_VARIABLES:
        raise ModelTooLargeError(
            "jobs",
            f"the exact model would have about {data.num_variables:,} variables "
            f"(limit {MAX_MODEL_VARIABLES:,}); use method='heuristic:astraea'",
        )
    return data

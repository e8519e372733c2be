"""The instance as the model sees it: integer data, computed once (formulations/cosched.md).

Every rounding of reals to integers lives here: times are whole ms in the instance already;
prices become cents, memory whole MiB (state rounded up, host memory down), the sync time
``Y_j`` whole ms and its bytes ``Z_j`` whole GB (both rounded up; ``simulate.py`` applies the
same formulas on the validator's side).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from .instance import CoschedInstance

#: Seconds per nonzero to build the model and hand it to a solver (measured ≈ 2 µs on the
#: 2-core CI machine; doubled).
BUILD_S_PER_NONZERO = 4e-6
#: Above this many nonzeros the exact model is refused whatever the time limit: the periodic
#: disjunction (C11) then has too many pairs for a proof in any reasonable time.
MAX_NONZEROS = 2_000_000
MIB = 1024


def mib_up(gib: float) -> int:
    return math.ceil(gib * MIB - 1e-9)


def mib_down(gib: float) -> int:
    return math.floor(gib * MIB + 1e-9)


@dataclass(frozen=True)
class OptionData:
    index: int  # in the instance's phase.options
    pool: int
    gpus: int
    duration: int  # ms
    resident_mib: int
    move_gb: int  # L3: state moved off the current pool, whole GB (0 if on it or no current)
    scenario: tuple[int, ...] = ()  # C13: ms in each scenario (empty without ``chance``)


@dataclass(frozen=True)
class JobData:
    index: int
    id: str
    phases: tuple[tuple[OptionData, ...], ...]  # options offered per phase (C5b, C5c applied)
    sigma: int
    slo: int
    switch: int
    weight: int
    sync_ms: int
    sync_gb: int

    @property
    def last(self) -> int:
        return len(self.phases) - 1


@dataclass(frozen=True)
class Pair:
    """Two phases that may share pool ``pool`` (C11), ``a`` = (job, phase) with a's job ≤ b's."""

    a: tuple[int, int]
    b: tuple[int, int]
    pool: int
    shifts: tuple[int, ...]


@dataclass(frozen=True)
class ModelData:
    pools: tuple[str, ...]
    hosts: tuple[int, ...]
    per_host: tuple[int, ...]
    memory_mib: tuple[int, ...]
    cost: tuple[float, ...]  # $/h of one host: cents × devices / 100
    jobs: tuple[JobData, ...]
    #: C13: scenarios, and in how many of them every job's timetable must hold (0: no C13).
    scenarios: int = 0
    need: int = 0

    @cached_property
    def big_m(self) -> int:
        d = max(
            (max((o.duration, *o.scenario)) for j in self.jobs for ph in j.phases for o in ph),
            default=0,
        )
        return 8 * max(j.slo for j in self.jobs) + d + max(j.switch for j in self.jobs)

    @property
    def max_slo(self) -> int:
        return max(j.slo for j in self.jobs)

    def pairs(self, jobs: tuple[JobData, ...]) -> list[Pair]:
        """Pairs of distinct phases with a pool in common, among ``jobs``."""
        phases = [(j, k, {o.pool for o in opts}) for j in jobs for k, opts in enumerate(j.phases)]
        out = []
        for i, (ja, ka, pa) in enumerate(phases):
            for jb, kb, pb in phases[i + 1 :]:
                A = 2 + max(ja.sigma, jb.sigma)
                for p in sorted(pa & pb):
                    out.append(Pair((ja.index, ka), (jb.index, kb), p, tuple(range(1 - A, A + 1))))
        return out

    @cached_property
    def nonzeros(self) -> int:
        """An estimate of the model's nonzeros (C2–C6 and C11 dominate), counted without
        forming the pairs: the refusal of an oversize model must itself be cheap (forming them
        took 23 s at 1,000 jobs). A pair of :meth:`pairs` adds ``12·(1 + 2S)`` per shift
        (4 shifts, 6 if either job has σ = 1) and ``8·(a's job + 1)``."""
        n = 0
        for j in self.jobs:
            opts = sum(len(ph) for ph in j.phases)
            n += opts * (j.index + 1) * 4
        per_shift = 12 * (1 + 2 * self.scenarios)
        later: dict[int, list[int]] = {}  # pool → [later phases with σ = 0, with σ = 1]
        for j in reversed(self.jobs):
            for phase in reversed(j.phases):
                for p in {o.pool for o in phase}:
                    zero, one = later.setdefault(p, [0, 0])
                    shifts = 6 * (zero + one) if j.sigma else 4 * zero + 6 * one
                    n += per_shift * shifts + (j.index + 1) * 8 * (zero + one)
                    later[p][j.sigma] += 1
        return n

    def too_big_for(self, seconds: float) -> str | None:
        """Why building the exact model would not fit in ``seconds`` (None: it fits)."""
        estimate = self.nonzeros * BUILD_S_PER_NONZERO
        if self.nonzeros <= MAX_NONZEROS and estimate < 0.5 * seconds:
            return None
        if self.nonzeros > MAX_NONZEROS:
            return (
                f"the exact model is too large ({self.nonzeros:,} nonzeros, more than the "
                f"{MAX_NONZEROS:,} any back-end is given)"
            )
        # the build may take at most half the time left: the search needs the other half
        return (
            f"the exact model is too large for the time left ({self.nonzeros:,} nonzeros, "
            f"about {estimate:.1f} s to build, more than half the {seconds:.1f} s left)"
        )


def build_data(inst: CoschedInstance) -> ModelData:
    pool_index = {p.name: i for i, p in enumerate(inst.pools)}
    jobs = []
    for j, job in enumerate(inst.jobs):
        phases = []
        for phase in job.phases:
            opts = []
            for o, opt in enumerate(phase.options):
                pool = inst.pools[pool_index[opt.pool]]
                if opt.tp > pool.gpus_per_host:  # C5b: a TP group never crosses a host
                    continue
                # C5c: a phase longer than the SLO never fits a cycle (C12); offered, it would
                # put n·d/S (up to 10¹⁸) into C14b, which HiGHS refuses and CBC crashes on.
                if opt.duration_ms > job.slo_ms:
                    continue
                moved = phase.current_pool is not None and opt.pool != phase.current_pool
                scenario: tuple[int, ...] = ()
                if inst.chance is not None:
                    S = inst.chance.scenarios
                    scenario = tuple(opt.samples_ms[:S]) or (opt.duration_ms,) * S
                opts.append(
                    OptionData(
                        o,
                        pool_index[opt.pool],
                        opt.gpus,
                        opt.duration_ms,
                        mib_up(opt.resident_gib),
                        math.ceil(opt.resident_gib - 1e-9) if moved else 0,
                        scenario,
                    )
                )
            phases.append(tuple(opts))
        jobs.append(
            JobData(
                j,
                job.id,
                tuple(phases),
                job.staleness,
                job.slo_ms,
                job.switch_ms,
                job.weight,
                math.ceil(job.params_b * 16000.0 / inst.sync_bandwidth_gbps - 1e-9),
                math.ceil(2.0 * job.params_b - 1e-9),
            )
        )
    return ModelData(
        tuple(p.name for p in inst.pools),
        tuple(p.hosts for p in inst.pools),
        tuple(p.gpus_per_host for p in inst.pools),
        tuple(mib_down(p.host_memory_gib) for p in inst.pools),
        tuple(round(p.price_per_gpu_hour * 100) * p.gpus_per_host / 100 for p in inst.pools),
        tuple(jobs),
        0 if inst.chance is None else inst.chance.scenarios,
        0 if inst.chance is None else need_of(inst.chance.epsilon, inst.chance.scenarios),
    )


def need_of(epsilon: float, scenarios: int) -> int:
    """C13: scenarios of ``scenarios`` in which a job's timetable must hold, ⌈(1−ε)·S⌉."""
    return math.ceil((1.0 - epsilon) * scenarios - 1e-9)


def robust(opt: OptionData) -> int:
    """The duration a heuristic plans with under C13: the longest of the planning duration and
    every scenario's, so its timetable holds in every scenario."""
    return max((opt.duration, *opt.scenario))


def estimate_columns(inst: CoschedInstance) -> int:
    """Columns of the model, from the raw instance (cheap: no pairs are formed)."""
    n = len(inst.jobs)
    opts = sum(len(ph.options) for j in inst.jobs for ph in j.phases)
    phases = sum(len(j.phases) for j in inst.jobs)
    return opts * n + phases * phases * 3 + n * (n + 4)


def aggregate_shares(data: ModelData) -> list[float] | None:
    """Each job's term of :func:`aggregate_bound` (None if a phase has no option)."""
    out = []
    for j in data.jobs:
        if any(not opts for opts in j.phases):
            return None
        out.append(
            sum(
                min(
                    data.cost[o.pool] / data.per_host[o.pool] * o.gpus * o.duration / j.slo
                    for o in opts
                )
                for opts in j.phases
            )
        )
    return out


def aggregate_bound(data: ModelData) -> float | None:
    """A lower bound on L1 without the model (formulation, "Aggregate lower bound"): a group's
    pool serves its members' phases one at a time within a cycle ``T ≤ S_j`` on at least
    ``n_o`` devices, so it holds at least ``Σ n_o d_o / S_j`` devices. None if a phase has no
    option (the instance is infeasible)."""
    shares = aggregate_shares(data)
    return None if shares is None else sum(shares)

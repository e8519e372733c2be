"""The explicit periodic schedule of a solution, unrolled on a timeline (validator side).

Independent of the model: it reads the raw instance and solution only. ``validate.py`` checks
the unrolled plan (V6, V7); :func:`replay` re-runs the plan with held-out durations for the
``slo_attainment_holdout`` metric (formulations/cosched.md, "Uncertainty").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .instance import CoschedInstance, Job, PhaseOption
from .solution import CoschedSolution, Group, JobPlan


def sync_ms(inst: CoschedInstance, job: Job) -> int:
    """Y_j: 2 bytes per parameter over the sync bandwidth, whole ms rounded up."""
    return math.ceil(job.params_b * 16000.0 / inst.sync_bandwidth_gbps - 1e-9)


def sync_gb(job: Job) -> int:
    """Z_j: the sync's bytes in whole GB, rounded up."""
    return math.ceil(2.0 * job.params_b - 1e-9)


def chosen(job: Job, plan: JobPlan) -> list[PhaseOption]:
    return [ph.options[pp.option] for ph, pp in zip(job.phases, plan.phases, strict=True)]


def crosses(job: Job, plan: JobPlan) -> bool:
    opts = chosen(job, plan)
    return opts[0].pool != opts[-1].pool


@dataclass(frozen=True)
class Occurrence:
    """Phase ``phase`` of ``job`` in step ``step``: on ``pool`` during [start, end)."""

    start: int
    end: int
    job: str
    phase: int
    step: int
    pool: str
    switch_in: int  # the job's warm switch time, paid when the pool comes from another job


@dataclass(frozen=True)
class Lookup:
    """The instance's jobs and the solution's plans by id, built once per validation (built
    once per group, they made validating one group per job quadratic: 3 s at 1,000 jobs)."""

    inst: CoschedInstance
    jobs: dict[str, Job]
    plans: dict[str, JobPlan]


def lookup(inst: CoschedInstance, sol: CoschedSolution) -> Lookup:
    return Lookup(inst, {j.id: j for j in inst.jobs}, {p.job_id: p for p in sol.plans})


def duration(opt: PhaseOption, scenario: int | None = None) -> int:
    """The option's duration: planned, or in scenario ``scenario`` of the chance constraint."""
    if scenario is None or not opt.samples_ms:
        return opt.duration_ms
    return opt.samples_ms[scenario]


def unroll(lk: Lookup, group: Group, steps: int, scenario: int | None = None) -> list[Occurrence]:
    """Every phase occurrence of the group's members in steps ``0..steps-1``, by start."""
    jobs, plans = lk.jobs, lk.plans
    out = []
    T = group.cycle_ms
    for jid in group.members:
        job, plan = jobs[jid], plans[jid]
        for k, (opt, pp) in enumerate(zip(chosen(job, plan), plan.phases, strict=True)):
            d = duration(opt, scenario)
            for i in range(steps):
                s = pp.start_ms + i * T
                out.append(Occurrence(s, s + d, jid, k, i, opt.pool, job.switch_ms))
    out.sort(key=lambda o: (o.start, o.job, o.phase))
    return out


def window(lk: Lookup, group: Group, scenario: int | None = None) -> list[Occurrence]:
    """The occurrences (steps may be negative: the schedule is periodic both ways) that meet
    ``[X - T, X + 2T]``, ``X`` the latest step-0 start of a member: a span of the timeline where
    every phase recurs, so any overlap of the periodic schedule shows there, by start."""
    jobs, plans = lk.jobs, lk.plans
    T = group.cycle_ms
    X = max(pp.start_ms for m in group.members for pp in plans[m].phases)
    out = []
    for jid in group.members:
        job, plan = jobs[jid], plans[jid]
        for k, (opt, pp) in enumerate(zip(chosen(job, plan), plan.phases, strict=True)):
            d = duration(opt, scenario)
            # A phase longer than the cycle overlaps its own next occurrence and covers the
            # whole pool, so two of its occurrences before the window show every break: the
            # window's size stays bounded (a scenario may last 10⁹ ms in a cycle of 10).
            reach = min(d, T + 1)
            first = -((pp.start_ms + reach - (X - T)) // T)  # ceil((lo - a - reach) / T)
            for i in range(first, (X + 2 * T - pp.start_ms) // T + 1):
                s = pp.start_ms + i * T
                out.append(Occurrence(s, s + d, jid, k, i, opt.pool, job.switch_ms))
    out.sort(key=lambda o: (o.start, o.job, o.phase))
    return out


def replay(lk: Lookup, group: Group, sample: int, steps: int) -> dict[str, float]:
    """Each member's steady cycle (ms) when the plan runs with held-out sample ``sample``:
    every occurrence keeps its pool's planned order, starts no earlier than planned, and waits
    for its step predecessor (a first phase: the sync of step ``i-1-σ``) and for its pool."""
    jobs, plans = lk.jobs, lk.plans
    end: dict[tuple[str, int, int], int] = {}
    first: dict[tuple[str, int], int] = {}
    pool_free: dict[str, tuple[int, str]] = {}
    for occ in unroll(lk, group, steps):
        job = jobs[occ.job]
        plan = plans[occ.job]
        opt = chosen(job, plan)[occ.phase]
        dur = opt.holdout_ms[sample % len(opt.holdout_ms)] if opt.holdout_ms else opt.duration_ms
        ready = occ.start
        if occ.phase:
            ready = max(ready, end[occ.job, occ.phase - 1, occ.step])
        else:
            back = occ.step - 1 - job.staleness
            if back >= 0:
                cross = sync_ms(lk.inst, job) if crosses(job, plan) else 0
                ready = max(ready, end[occ.job, len(job.phases) - 1, back] + cross)
        if occ.pool in pool_free:
            free, who = pool_free[occ.pool]
            ready = max(ready, free + (occ.switch_in if who != occ.job else 0))
        end[occ.job, occ.phase, occ.step] = ready + dur
        pool_free[occ.pool] = (ready + dur, occ.job)
        if occ.phase == 0:
            first[occ.job, occ.step] = ready
    half = steps // 2
    return {
        jid: (first[jid, steps - 1] - first[jid, steps - 1 - half]) / half for jid in group.members
    }

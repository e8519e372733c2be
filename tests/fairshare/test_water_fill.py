"""The water-fill's faster form (``heuristics.water_fill``: the queues built in one pass, each
job's option order scored once) gives the plan the earlier form gave, job by job and host by
host: the earlier form is kept here as the reference (as of 070e40f)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.problems.fairshare.data import JobData, Option, build_data
from schedopt.problems.fairshare.gavel import solve_data
from schedopt.problems.fairshare.heuristics import (
    AstraeaParams,
    GavelRoundParams,
    _unit_key,
    run_gavel_round,
    water_fill,
)
from schedopt.problems.fairshare.plan import Plan
from schedopt.problems.fairshare.strategies import instances
from schedopt.problems.fairshare.units import UnitData


def _score(job: JobData, opt: Option, size_penalty: float) -> tuple[float, int]:
    top = max(o.n for o in job.options)
    return (opt.eff - size_penalty * opt.n / top, -opt.n)


def _give(state: Plan, job: JobData, p: AstraeaParams) -> bool:
    if p.keep_running and state.keep(job):
        return True
    order = sorted(
        range(len(job.options)),
        key=lambda o: _score(job, job.options[o], p.size_penalty),
        reverse=True,
    )
    return any(state.place(job, o) for o in order)


def reference_water_fill(
    state: Plan,
    p: AstraeaParams,
    *,
    units: Sequence[UnitData] | None = None,
    wants: Callable[[UnitData], bool] | None = None,
) -> None:
    data = state.data

    def job_order(j: JobData) -> tuple:
        return (bool(p.starving_first) and j.was_running, j.used_gpu_s, j.index)

    queues: dict[int, list[JobData]] = {}
    for unit in units if units is not None else data.units:
        jobs = [data.jobs[j] for j in unit.jobs if data.jobs[j].options]
        jobs = [j for j in jobs if not state.done(j)]
        jobs.sort(key=job_order)
        jobs.reverse()
        if jobs and (wants is None or wants(unit)):
            queues[unit.index] = jobs
    gpus = state.unit_gpus
    heap = [(_unit_key(data, data.units[v], gpus[v], p), v) for v in queues]
    heapq.heapify(heap)
    while heap:
        _, v = heapq.heappop(heap)
        queue = queues[v]
        while queue:
            job = queue.pop()
            if not state.done(job) and _give(state, job, p):
                break
        if queue and (wants is None or wants(data.units[v])):
            heapq.heappush(heap, (_unit_key(data, data.units[v], gpus[v], p), v))


def _plan(state: Plan) -> list[tuple[int | None, bool, dict[str, int]]]:
    return [(r.option, r.keep, dict(h)) for r, h in zip(state.raw, state.hosts, strict=True)]


params = st.builds(
    AstraeaParams,
    quota_weight=st.sampled_from([0.0, 0.5]),
    starving_first=st.integers(0, 1),
    keep_running=st.integers(0, 1),
    size_penalty=st.sampled_from([0.0, 0.3, 1.0]),
)


@settings(max_examples=80, derandomize=True, deadline=None)
@given(inst=instances(max_jobs=8, max_tenants=3, max_hosts=4), p=params, half=st.booleans())
def test_the_water_fill_gives_the_reference_plan(inst, p: AstraeaParams, half: bool) -> None:
    data = build_data(inst, check_size=False)
    new, old = Plan(data), Plan(data)
    # from an empty board, or after the gavel-round's rounding (its keeps and placements)
    if half:
        lp = solve_data(data, 10.0)
        new, _ = run_gavel_round(data, GavelRoundParams(), lp)
        old, _ = run_gavel_round(data, GavelRoundParams(), lp)
        for s in (new, old):  # free the GPUs of every other job, so that the fill has work
            for job in data.jobs[::2]:
                s.unset(job)
    units = data.units[::2] if half else None
    water_fill(new, p, units=units)
    reference_water_fill(old, p, units=units)
    assert _plan(new) == _plan(old)
    assert new.unit_gpus == old.unit_gpus and new.tenant_gpus == old.tenant_gpus

"""Heuristic fallbacks for the fair-share round.

- ``astraea``: Astraea-style water-filling (TPDS'22). Free GPUs go job by job to the fairness
  unit (tenant, or job in per-job mode) with the lowest LTGF after the round (optionally blended
  with its used/quota ratio this round), ties to the lowest U/w; inside a tenant, starving jobs
  (not running) first, then the job with the least attained service. Each job takes its
  best-throughput option that fits.
- ``gavel-round``: Gavel's continuous max-min LP over time fractions (``gavel.py``, HiGHS),
  rounded to whole GPUs (worst-off unit first, up to the LP's expected GPUs of each unit,
  jobs by their largest fraction, each on its largest-fraction option), then repaired: hard
  guarantees topped up and the GPUs left over water-filled as above. Its bound is the LP's
  minimum share (a relaxation, so a valid upper bound on L1).

Both first keep enough running jobs in place for the preemption cap (C6), highest restart cost
first, then give hard guarantees (C5) before anything else. Parameters are frozen dataclasses
with a ``SPACE`` for :mod:`schedopt.tuning`.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from schedopt.backends.first_import import HIGHS, PULP, solver_in_time
from schedopt.core.options import SolveOptions, method_params
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import JobData, ModelData, build_data
from .explain import with_fairness_note
from .gavel import STAGE1_TOL, GavelAllocation, solve_data
from .instance import FairshareInstance
from .placement import Raw
from .plan import Plan
from .units import UnitData

#: The Gavel LP (PuLP build + HiGHS set-up and solve) takes about this long per variable
#: (measured 0.6–0.9 s at 17.8k variables); with less time left gavel-round skips it.
LP_S_PER_VARIABLE = 4e-5
#: Rounding the LP (two water-fills) costs about this many times building the data (both one
#: pass over the jobs; 0.6 s each at 20,000 jobs quiet): the LP stops that long before the
#: deadline, a share that follows the machine's load as the build did. With 0.2 of the time
#: left, as before, gavel-round at 16,384 GPUs × 20,000 jobs ran 13.0 s on 10 s at load 8
#: (#16).
ROUND_PER_BUILD = 3.0


@dataclass(frozen=True)
class AstraeaParams:
    """``quota_weight`` blends the used/quota ratio of this round into the tenant order (0: LTGF
    only); ``starving_first`` (0/1) serves a tenant's idle jobs before its running ones;
    ``keep_running`` (0/1) keeps a running job where it is when that still fits;
    ``size_penalty`` trades throughput for fewer GPUs when choosing a job's option."""

    quota_weight: float = 0.0
    starving_first: int = 1
    keep_running: int = 1
    size_penalty: float = 0.0

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "quota_weight": (0.0, 2.0),
        "starving_first": (0, 1),
        "keep_running": (0, 1),
        "size_penalty": (0.0, 1.0),
    }


@dataclass(frozen=True)
class GavelRoundParams:
    """``threshold``: options with an LP time fraction below it are not used by the rounding
    (their jobs are left to the repair); ``keep_running`` (0/1) keeps a running job in place
    when the LP's favourite option is its previous one."""

    threshold: float = 0.01
    keep_running: int = 1

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "threshold": (0.0, 0.9),
        "keep_running": (0, 1),
    }


def _keep_for_cap(state: Plan) -> str | None:
    """C6: keep the |J^P| − π running jobs with the highest restart cost where they are."""
    data = state.data
    cap = data.instance.max_preemptions
    if cap is None:
        return None
    running = [j for j in data.jobs if j.was_running]
    need = len(running) - cap
    kept = 0
    for job in sorted(running, key=lambda j: (-j.restart_cost, j.index)):
        if kept >= need:
            break
        if state.keep(job):
            kept += 1
    if kept < need:
        return (
            f"the heuristic could keep only {kept} of the {need} running jobs that "
            f"max_preemptions={cap} requires (not a proof of infeasibility)"
        )
    return None


def _option_order(job: JobData, size_penalty: float) -> list[int]:
    """``job``'s options, best first: throughput less ``size_penalty`` times GPUs over its
    widest option's, then fewer GPUs (ties in option order)."""
    top = max((o.n for o in job.options), default=1)
    scores = [(o.eff - size_penalty * o.n / top, -o.n) for o in job.options]
    return sorted(range(len(scores)), key=scores.__getitem__, reverse=True)


def _give(state: Plan, job: JobData, p: AstraeaParams) -> bool:
    """Give ``job`` GPUs: its previous allocation if kept, else its best option that fits."""
    if p.keep_running and state.keep(job):
        return True
    return any(state.place(job, o) for o in _option_order(job, p.size_penalty))


def _unit_key(data: ModelData, v: UnitData, gpus: int, p: AstraeaParams) -> tuple:
    w = v.used_s / v.weight
    if not v.included:
        return (1, 0.0, w, v.index)
    ltgf = v.share(gpus, data.round_s)
    return (0, ltgf + p.quota_weight * gpus / max(1.0, v.entitlement), w, v.index)


def water_fill(
    state: Plan,
    p: AstraeaParams,
    *,
    units: Sequence[UnitData] | None = None,
    wants: Callable[[UnitData], bool] | None = None,
    job_order: Callable[[JobData], tuple] | None = None,
    give: Callable[[Plan, JobData], bool] | None = None,
) -> None:
    """Give GPUs job by job to the worst-off fairness unit until no job fits (or ``wants`` is
    false for every unit left). ``job_order`` and ``give`` replace the order of a unit's jobs
    (default: starving first, then least attained service) and how a job gets GPUs."""
    data = state.data
    if job_order is None:

        def job_order(j: JobData) -> tuple:
            return (bool(p.starving_first) and j.was_running, j.used_gpu_s, j.index)

    if give is None:

        def give(state: Plan, job: JobData) -> bool:
            return _give(state, job, p)

    queues: dict[int, list[JobData]] = {}
    every, raw = data.jobs, state.raw
    for unit in units if units is not None else data.units:
        jobs = [every[j] for j in unit.jobs if raw[j].option is None and every[j].options]
        if jobs and (wants is None or wants(unit)):
            jobs.sort(key=job_order)
            jobs.reverse()  # pop() from the end takes the first in order
            queues[unit.index] = jobs
    gpus = state.unit_gpus
    heap = [(_unit_key(data, data.units[v], gpus[v], p), v) for v in queues]
    heapq.heapify(heap)
    while heap:
        _, v = heapq.heappop(heap)
        queue = queues[v]
        while queue:
            job = queue.pop()
            if not state.done(job) and give(state, job):
                break
        if queue and (wants is None or wants(data.units[v])):
            heapq.heappush(heap, (_unit_key(data, data.units[v], gpus[v], p), v))


def _guarantees(state: Plan, p: AstraeaParams) -> str | None:
    """C5: the units of each tenant with a hard guarantee, lowest first, until it holds."""
    data = state.data
    need = {u.index: u.guarantee for u in data.tenants if u.guarantee}
    if not need:
        return None

    def tenant_of(unit: UnitData) -> int:
        return data.jobs[unit.jobs[0]].tenant  # a unit's jobs are of one tenant (F1)

    def wants(unit: UnitData) -> bool:
        u = tenant_of(unit)
        return state.tenant_gpus[u] < need[u]

    units = [v for v in data.units if v.jobs and tenant_of(v) in need]
    water_fill(state, p, units=units, wants=wants)
    short = [data.tenants[u].id for u, g in need.items() if state.tenant_gpus[u] < g]
    if short:
        return (
            f"the heuristic could not meet the hard guarantees of {short} "
            "(not a proof of infeasibility; try an exact method)"
        )
    return None


def run_astraea(data: ModelData, p: AstraeaParams) -> tuple[Plan, str | None]:
    state = Plan(data)
    problem = _keep_for_cap(state) or _guarantees(state, p)
    if problem:
        return state, problem
    water_fill(state, p)
    return state, None


def run_gavel_round(
    data: ModelData, p: GavelRoundParams, lp: GavelAllocation, keep_first: Sequence[int] = ()
) -> tuple[Plan, str | None]:
    """gavel-round on ``data``; ``keep_first``: running jobs (indices) kept where they are
    before anything is placed, so that no job placed before them takes their hosts (the
    decomposition passes those its LP keeps)."""
    state = Plan(data)
    problem = _keep_for_cap(state)
    if problem:
        return state, problem
    for j in keep_first:
        job = data.jobs[j]
        if not state.done(job):
            state.keep(job)
    fill = AstraeaParams(keep_running=p.keep_running)
    if lp.status.has_solution:
        # Round: every unit, worst LP share first, takes whole GPUs up to the LP's expected
        # GPUs (floored), its jobs by largest time fraction, each on its largest-fraction option.
        ranked: dict[int, list[int]] = {}
        top: dict[int, float] = {}
        for job, fr in zip(data.jobs, lp.jobs, strict=True):
            by_option = {(o.gpu_type, o.n): k for k, o in enumerate(job.options)}
            order = sorted(fr.fractions, key=lambda f: (-f[2], -f[1]))
            ranked[job.index] = [by_option[(g, n)] for g, n, x in order if x >= p.threshold]
            top[job.index] = order[0][2] if order else 0.0

        def lp_order(j: JobData) -> tuple:
            return (-top[j.index], j.index)

        def lp_give(state: Plan, job: JobData) -> bool:
            options = ranked[job.index]
            if not options:
                return False
            if p.keep_running and options[0] == job.prev_option and state.keep(job):
                return True
            return any(state.place(job, o) for o in options)

        expected = [fr.expected_gpus for fr in lp.jobs]
        target = [int(sum(expected[j] for j in v.jobs) + 1e-6) for v in data.units]

        def wants(unit: UnitData) -> bool:
            return state.unit_gpus[unit.index] < target[unit.index]

        water_fill(state, fill, wants=wants, job_order=lp_order, give=lp_give)
    problem = _guarantees(state, fill)
    if problem:
        return state, problem
    water_fill(state, fill)
    return state, None


def solve_astraea(inst: FairshareInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    t0 = time.perf_counter()
    data = build_data(inst, check_size=False, deadline=deadline)
    build_s = time.perf_counter() - t0
    state, problem = run_astraea(data, method_params(AstraeaParams, options.params))
    solve_s = time.perf_counter() - t0 - build_s
    if problem:
        return Outcome(Status.NO_SOLUTION, build_s=build_s, solve_s=solve_s, explanation=problem)
    found = Outcome(Status.FEASIBLE, solution=state.solution(), build_s=build_s, solve_s=solve_s)
    return with_fairness_note(data, found)


def solve_gavel_round(
    inst: FairshareInstance, options: SolveOptions, deadline: Deadline
) -> Outcome:
    t0 = time.perf_counter()
    params = method_params(GavelRoundParams, options.params)
    data = build_data(inst, check_size=False, deadline=deadline)
    build_s = time.perf_counter() - t0
    lp_s = min(deadline.share(0.8), deadline.remaining() - ROUND_PER_BUILD * build_s)
    lp_by = Deadline.after(lp_s)
    if (
        lp_s > LP_S_PER_VARIABLE * data.num_variables
        # the LP's first imports (HiGHS, then PuLP over it) within the LP's share
        and solver_in_time(HIGHS, lp_by)
        and solver_in_time(PULP, lp_by)
    ):
        lp = solve_data(data, time_limit_s=lp_s)
        lp_status = lp.status.value
    else:  # HiGHS would overrun the limit setting the LP up (or importing): water-fill alone
        lp = GavelAllocation(Status.NO_SOLUTION, 0.0, 0.0, (), {}, {})
        lp_status = "skipped: not enough time for the LP"
    state, problem = run_gavel_round(data, params, lp)
    solve_s = time.perf_counter() - t0 - build_s
    stats: dict[str, float | str] = {"lp_status": lp_status}
    bound = None
    lp_metrics: dict[str, float] = {}
    if lp.bound is not None:
        lp_metrics["gavel_lp_min_share"] = lp.bound
        bound = lp.bound + STAGE1_TOL * max(1.0, lp.bound)
    if problem:
        return Outcome(
            Status.NO_SOLUTION,
            bound=bound,
            build_s=build_s,
            solve_s=solve_s,
            explanation=problem,
            stats=stats,
        )
    found = Outcome(
        Status.FEASIBLE,
        solution=state.solution(),
        bound=bound,
        build_s=build_s,
        solve_s=solve_s,
        stats=stats,
        metrics=lp_metrics,
    )
    return with_fairness_note(data, found)


HEURISTICS: Sequence[str] = ("heuristic:astraea", "heuristic:gavel-round")


def complete(data: ModelData, raw: list[Raw]) -> list[Raw]:
    """``raw`` plus GPUs left idle, water-filled onto idle jobs: never lowers any tenant's GPUs
    nor adds a preemption, so it keeps every constraint and the exact models' L1 fix. The exact
    models use it to warm-start L2 from the L1 solution."""
    state = Plan(data)
    for job, r in zip(data.jobs, raw, strict=True):
        if r.option is not None and r.keep and not state.keep(job):
            return raw
    pending = [
        (job, r.option)
        for job, r in zip(data.jobs, raw, strict=True)
        if r.option is not None and not r.keep
    ]
    for job, o in sorted(pending, key=lambda p: (-p[0].options[p[1]].n, p[0].index)):
        if not state.place(job, o):
            return raw
    water_fill(state, AstraeaParams())
    return state.raw

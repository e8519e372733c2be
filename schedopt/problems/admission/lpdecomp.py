"""``decomp:lp``: the LP bound B1 (with the whole-slot rows B1c), its solution rounded into a
plan (``lp_round.py``), then CP-SAT over groups of jobs on the capacity the others leave
(``repair.py``): first one pass of disjoint groups as parts (each with its own capacity share,
so they can run in parallel workers), then, in the join, group after group in this process
until the time is up, every third pass on the LP's neighbourhoods (``neighbourhood.py``)
(formulations/admission.md, "LP rounding and repair").

Without a hint (called by name; ``auto`` hands it its heuristics' best plan) it makes the
tuned greedy heuristics' plans itself (about 0.1 s at 3,200 jobs), as a floor of its start
and as a second rounding order, so it never answers below them, however short the limit.

Every step keeps C3 (the ledger or a group's own capacity) and C5 (the earlier guarantees are
placed first, and a group's model keeps them): the joined plan is a plan of the instance, and
``solve`` validates it as every answer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from schedopt.core.options import SolveOptions
from schedopt.core.registry import MethodKind, MethodSpec
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.executor import Task
from schedopt.model import decompose

from .assemble import RawPlan, assemble, guaranteed_value, raw_from_solution
from .backfill import backfill
from .bound import L1Bound, integral_floor
from .data import ModelData, build_data, finish_reserve_s
from .guide import guide
from .heuristics import (
    ASSEMBLE_PER_BUILD,
    EdfParams,
    SlackParams,
    refill_best_effort,
    run_edf,
    run_slack,
    tuned_or_shipped,
)
from .instance import AdmissionInstance
from .lagrange import Prices
from .lp_round import lp_round
from .priced import priced_plans
from .repair import GROUP_JOBS, STEP_S, improve_group, repair, used_by
from .tier_bound import cheap_bound, fallback_bound

#: Share of the time after the bound that the parallel pass of groups gets; the rest is the
#: join's sequential repair (which sees every group's gains at once).
PARTS_SHARE = 0.5
#: Seconds per job-slot the join keeps back after its repair for the best-effort refill and
#: assembling the answer (measured 4.1 µs at 1,024 GPUs × 3,200 jobs, load 2.6: 0.16 s; was
#: 20 µs, which left 0.6-0.8 s of 10 idle there); it stretches with the measured slowdown.
JOIN_S_PER_JOB_SLOT = 1e-5
#: The start's candidates backfilled (the best ones before it; 0.05 s each at 3,200 jobs).
BACKFILLED = 3
#: Deterministic mode (SolveOptions.deterministic): the join's repair runs this share of the
#: limit in steps of ``repair.STEP_S`` of CP-SAT's deterministic time (at least one step), in
#: place of the time the parts and the bound leave it on the clock.
REPAIR_WORK_SHARE = 0.4


def repair_steps(time_limit_s: float) -> int:
    """The repair's CP-SAT steps in deterministic mode (REPAIR_WORK_SHARE)."""
    return max(1, math.floor(REPAIR_WORK_SHARE * time_limit_s / STEP_S))


def solve_group(
    sub: ModelData,
    start: list[RawPlan],
    budget: decompose.Budget,
    seed: int,
    work_s: float | None = None,
):
    """A part: its group improved by CP-SAT within ``budget``, else its start (module-level,
    picklable: a process pool's task). ``work_s`` (deterministic mode): CP-SAT's
    deterministic time, ``budget`` then only the runaway cap."""
    seconds = budget.deadline().remaining()
    if seconds < 0.05:
        return start
    try:
        if work_s is not None:
            return improve_group(sub, start, work_s, seed, deterministic=True) or start
        return improve_group(sub, start, seconds, seed) or start
    except DeadlineReached:
        return start


def greedy_plans(
    data: ModelData, stop: Deadline, tuned: Mapping[str, Mapping[str, Any]] | None = None
) -> list[list[RawPlan]]:
    """The plans of ``auto``'s greedy heuristics (EDF and slack with their tuned parameters:
    ``tuned``, what ``solve`` was given, else the shipped ones) that keep every earlier
    guarantee: ``decomp:lp``'s floor and second rounding order when no hint is given. Their
    SLO plans alone: the repair re-plans the best-effort jobs at the end, so they get no GPUs
    here (0.08 s → 0.03 s each at 1,024 GPUs × 3,200 jobs)."""
    from schedopt.core.options import method_params

    tuned = tuned_or_shipped(tuned)
    edf_p = method_params(EdfParams, tuned.get("heuristic:edf", {}))
    slack_p = method_params(SlackParams, tuned.get("heuristic:slack", {}))
    edf = run_edf(data, edf_p, stop, best_effort=False)
    slack = run_slack(data, slack_p, stop, best_effort=False)
    return [raw for raw, broken in (edf, slack) if not broken]


def start_plan(
    data: ModelData,
    lp: L1Bound,
    hint: Any,
    stop: Deadline,
    greedy: list[list[RawPlan]] | None = None,
    prices: Prices | None = None,
) -> list[RawPlan] | None:
    """The best plan that keeps every earlier guarantee among the LP's rounding (jobs without
    an LP value by value per GPU-slot, and also after the best given plan's admitted ones),
    the given plans (the caller's hint: ``auto``'s best heuristic; else ``greedy``, the greedy
    heuristics' plans), the greedy plans priced by the LP's duals (``priced.py``) and, when
    none keeps them, the greedy heuristics' default plans; the best of them backfilled
    (``backfill.py``). ``prices``: the guide's B1L, whose plans at the LP's prices the priced
    plans reuse. The plans it makes have no best-effort GPUs
    (the repair drops them and refills at the end). Past ``stop`` the best of the given
    plans; the greedy heuristics' default plans
    run until ``stop`` and keep every earlier guarantee past it (cut short: those alone)."""
    found: list[list[RawPlan]] = []
    given: list[RawPlan] | None = None
    if hint is not None:
        raw = raw_from_solution(data, hint)
        if all(raw[j.index].admitted for j in data.jobs if j.admitted_before):
            found.append(raw)
            given = raw
    elif greedy:
        found.extend(greedy)
        given = max(greedy, key=lambda r: guaranteed_value(data, r))
    if given is not None and stop.expired():
        # past the deadline (a starved machine): the best given plan; no rounding, no priced
        # plans (they place no job past ``stop``) and no backfill, which each set up over
        # every job before their first check of ``stop`` (with the first and the last
        # 0.18-0.25 CPU s after the deadline at 3,200 jobs, 0.12-0.14 without)
        return max(found, key=lambda r: guaranteed_value(data, r))
    # Without an LP value (none, or its parts ran out of time) a job is rounded by value per
    # GPU-slot, after the given plan's admitted ones when there is one; both orders are tried.
    priors: list[dict[int, float]] = [{}]
    if given is not None and len(lp.admit) < sum(j.is_slo for j in data.jobs):
        priors.append({i: 0.5 * bool(r.admitted) for i, r in enumerate(given)})
    for prior in priors:
        rounded = lp_round(data, lp, stop, prior=prior, best_effort=False)
        if rounded is not None:
            found.append(rounded)
    # the greedy plans priced by the LP's capacity duals (+240 to +525 above the rounding at
    # 1,024 GPUs × 3,200 jobs, lower at 256 × 800: candidates; RESULTS.md)
    found.extend(priced_plans(data, lp, stop, prices))
    if not found:  # the rounding could not keep an earlier guarantee: the greedy heuristics'
        # defaults, until ``stop`` (0.03-0.08 s each at 3,200 jobs): the earlier guarantees
        # are placed in full past it, so a plan cut short is theirs alone (the cheapest that
        # keeps them), never one that drops one; past ``stop`` the second is not run
        defaults = (
            lambda: run_edf(data, EdfParams(), stop, False, guarantees_past_stop=True),
            lambda: run_slack(data, SlackParams(), stop, False, guarantees_past_stop=True),
        )
        for run in defaults:
            if found and stop.expired():
                break
            raw, broken = run()
            if not broken:
                found.append(raw)
    if not found:
        return None
    if stop.expired():  # no backfill past the deadline (its set-up is over every job)
        return max(found, key=lambda r: guaranteed_value(data, r))
    # the BACKFILLED best of them backfilled (late jobs moved late, tiers raised, rejected
    # jobs offered the room; never lower, 0.05 s each at 1,024 GPUs × 3,200 jobs), the best
    # of those: the backfill can reorder the candidates (RESULTS.md)
    found.sort(key=lambda r: -guaranteed_value(data, r))
    filled = [backfill(data, raw, stop) for raw in found[:BACKFILLED]]
    return max(filled, key=lambda r: guaranteed_value(data, r))


def decomposition(
    inst: AdmissionInstance, options: SolveOptions, deadline: Deadline, random: bool
) -> decompose.Decomposition:
    started = time.perf_counter()
    data = build_data(inst, check_size=False, deadline=deadline)
    data_s = time.perf_counter() - started
    slo = sorted((j for j in data.jobs if j.is_slo), key=lambda j: (j.tiers[0].slots_before, j.id))
    # One process (the inline executor): no parallel pass, the join's repair gets the time
    # (it sees every group's gain at once); with workers, a pass of disjoint groups first.
    parallel = decompose.executor_choice(options)[0] != "inline"
    k = decompose.whole_param(
        options,
        "parts",
        math.ceil(len(slo) / GROUP_JOBS) if parallel else 0,
        0,
        decompose.MAX_PARTS,
    )
    size = max(1, math.ceil(len(slo) / max(1, k)))
    groups = [[j.index for j in slo[a : a + size]] for a in range(0, len(slo), size)] if k else []
    k = len(groups)
    parts_share = PARTS_SHARE if k else 0.0
    state: dict[str, Any] = {}
    # Deterministic mode (SolveOptions.deterministic): every step runs its fixed work (the
    # greedy plans, the LPs to their end, B1L's steps, the rounding and backfill), a part a
    # repair step's CP-SAT deterministic time (a group of GROUP_JOBS jobs), the join's repair
    # ``repair_steps`` such steps; ``deadline`` is the runaway cap.
    det = options.deterministic
    part_work_s = STEP_S if det else None

    def bound(seconds: float) -> decompose.Bound:
        began = time.perf_counter()
        # without a hint, the greedy plans first: a floor however little time the LP gets
        greedy = greedy_plans(data, deadline, options.tuned) if options.hint is None else None
        guided = time.perf_counter()
        g = guide(data, max(0.05, seconds - (guided - began)), deadline, det)
        value = g.bound
        stats: dict[str, float | str] = {"bound": g.label}
        stats["guide_s"] = round(time.perf_counter() - guided, 3)
        if g.lagrangian is not None:
            stats["b1l"] = round(g.lagrangian, 3)
        if value is None:  # neither the LP nor B1L in time (a busy machine): B0, B0w or B0k
            value, stats["bound"] = fallback_bound(data, deadline, max(0.05, deadline.share(0.05)))
        else:  # an LP stopped early, or B1L at a scout's prices, can be weaker than B0w / B0k
            cheap, label = cheap_bound(data, deadline)  # (1,024 × 1,000 at 5 s: 8,019 > 6,540)
            if cheap < value:
                value, stats["bound"] = cheap, label
        value = integral_floor(data, value)  # L1 is an integer when every tier value is
        state["lp"] = g.lp  # its point guides the repair's LP neighbourhoods
        started = time.perf_counter()
        state["start"] = start_plan(data, g.lp, options.hint, deadline, greedy, g.prices)
        stats["start_s"] = round(time.perf_counter() - started, 3)
        state["left"] = _shares(data, state["start"], groups)
        return decompose.Bound(value, stats)

    def task(p: int, budget: decompose.Budget) -> Task:
        start = state["start"]
        indices = groups[p]
        sub = data.subset(indices, slot_capacity=state["left"][p])
        own = [] if start is None else [start[i] for i in indices]
        return Task(f"part{p}", solve_group, (sub, own, budget, options.seed + p, part_work_s))

    def join(answers: Mapping[str, Any], dl: Deadline) -> tuple[Any, dict[str, float | str]]:
        start = state["start"]
        if start is None:
            return None, {"join": "no plan keeps the earlier guarantees"}
        raw = list(start)
        for p, indices in enumerate(groups):
            got = answers.get(f"part{p}")
            if got:  # a missing part keeps its start: within its share by construction
                for i, r in zip(indices, got, strict=True):
                    raw[i] = r
        before = guaranteed_value(data, raw)
        stop = dl.reserving(reserve)
        steps = repair_steps(options.time_limit_s) if det else None
        raw, stats = repair(
            data, raw, stop, options.seed, lp=state.get("lp"), max_steps=steps, deterministic=det
        )
        stats_out: dict[str, float | str] = {**stats, "start_value": before / 1000}
        raw = refill_best_effort(data, raw, dl.earlier(finish))
        return assemble(data, raw, optimal_admission=False), stats_out

    finish = finish_reserve_s(inst)
    per_slot = JOIN_S_PER_JOB_SLOT * len(data.jobs) * data.T
    reserve = max(0.05 + per_slot, ASSEMBLE_PER_BUILD * data_s) + finish
    return decompose.Decomposition(
        part=task,
        count=k,
        join=join,
        bound=bound,
        # the join's sequential repair gets the share of the time the parts leave
        join_reserve_s=reserve + (1 - parts_share) * 0.6 * deadline.remaining(),
        # the LP is both the bound and the guide of the rounding: most of the time goes there
        bound_share=0.6,
    )


def _shares(
    data: ModelData, start: list[RawPlan] | None, groups: list[list[int]]
) -> list[dict[tuple[int, str, int], int]]:
    """Each group's capacity per (slot, type, level): what its jobs take in ``start`` and an
    equal share of what no SLO job takes. The shares add up to at most κ_gs (C3 holds for any
    join of the groups' plans)."""
    if start is None:
        return [{} for _ in groups]
    slo = [j for j in data.jobs if j.is_slo]
    free = used_by(data, start, slo)
    k = len(groups)
    out = []
    for p, indices in enumerate(groups):
        own = used_by(data, start, [data.jobs[i] for i in indices])
        share = {}
        for t in range(data.T):
            for (g, s), cap in data.chunk_capacity.items():
                left = cap - free.get((t, g, s), 0)
                extra = left // k + (1 if p < left % k else 0)
                share[t, g, s] = own.get((t, g, s), 0) + extra
        out.append(share)
    return out


METHOD = MethodSpec(
    "decomp:lp",
    MethodKind.HEURISTIC,
    decompose.runner(decomposition, False),
    "LP bound with whole-slot rows, LP rounding, CP-SAT repair by groups of jobs",
    # auto runs it first, with the whole limit (its own greedy floor, greedy_plans): the
    # heuristics' LNS took 2 s of 10 at 256 GPUs × 800 jobs for a hint no better than that
    decomposition=True,
)

__all__ = [
    "METHOD",
    "PARTS_SHARE",
    "decomposition",
    "greedy_plans",
    "solve_group",
]

"""Fair share by decomposition: POP on Gavel's LP (Narayanan et al., NSDI'21), split by pool,
joined and water-filled on the whole cluster, with the bounds B1–B3 of the whole round
(formulations/fairshare.md, "Decomposition").

Every part holds an equal slice of every GPU pool (hosts of each type, in topology order, or at
random for ``decomp:pop``) and a slice of the jobs: a running job goes with the hosts it runs
on (so that it can be kept), the others are dealt tenant by tenant so that every part sees
every tenant. A unit's accounts are split in proportion to its demand in each part
(``α_vp = δ_vp / Σ_p δ_vp``): a share of ``t`` in every part is a share of at least ``t`` on
the whole (the formulation proves it), so the join keeps the parts' minimum. Each part runs
gavel-round (the Gavel LP, rounded and water-filled) on its own hosts; the join keeps every
part's placement (the host groups are disjoint) and water-fills the GPUs the parts left idle,
puts running jobs back where they ran (``restore.py``) and wins back the L2 the rounding lost
by neighbourhood MILPs with L1 held, then L3 at the plan's L2: running jobs returned to
their previous allocations as a set (``l3_return.py``), then neighbourhoods (``l2_repair.py``).

Hard guarantees (C5) and a preemption cap (C6) are not split: with either, the method answers
NO_SOLUTION at once and ``auto`` keeps the monolithic model.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.executor import Task
from schedopt.model import decompose

from .bound import Bounds, bounds
from .data import ModelData, TenantData, build_data, finish_reserve_s
from .explain import with_fairness_note
from .gavel import GavelAllocation
from .heuristics import (
    AstraeaParams,
    GavelRoundParams,
    _State,
    run_gavel_round,
    water_fill,
)
from .instance import FairshareInstance
from .l1_fix import l1_settled, need_gpus
from .l2_bound import l2_prices
from .l2_repair import L2_PHASE, RepairStats, repair_l2, repair_l3
from .l3_bound import joint_search_runs, l3_dual
from .l3_exchange import exchange
from .l3_return import return_running
from .l3_swap import SWAP_S, swap_returns
from .l3_units import search_reserve_s, unit_search
from .lp_guide import lp_guide
from .option_arrays import arrays
from .restore import restore_running
from .subround import part_data
from .units import NotCounted

#: About this many jobs per part (the Gavel LP of 2,500 jobs solves in well under a second).
JOBS_PER_PART = 2500
#: ``auto`` runs ``decomp`` from this many jobs on (the monolithic model took 58.7 s on a
#: 10 s limit at 20,000 jobs, issue #16).
AUTO_DECOMP_JOBS = 5000

#: Seconds B2L and B3L may take at most after the join (B3L's whole search: 0.2 s at 4,096
#: GPUs, about 1 s at 16,384 behind the repaired plan's L2, load 5), out of what the join's
#: reserve leaves beyond the finish (not kept back from the parts: at load 5 that starved
#: them, L2 75% under B2 at 16,384 GPUs), and the relative slack on the plan's L2 in its
#: floor (the validator sums the same e_jo in another order).
B3L_MAX_S = 1.25
#: Share of that time B2L (the L2 bound behind the plan's L1) counts as taking (0.225 s), and
#: the most it may take: its steps are counted, not timed (25 take 0.19 CPU s at 16,384 GPUs;
#: 0.225 s of wall cut them on half a core: RESULTS.md, "Fair share: the two regimes").
B2L_SHARE = 0.18
B2L_MAX_S = 0.75
#: Seconds more for B3L on rounds where its joint search runs (at most JOINT_MAX_UNITS
#: counted units): out of what the join leaves, not out of the parts' or the repair's time.
JOINT_EXTRA_S = 1.0
L2_FLOOR_TOL = 1e-9
#: Seconds the L2 repair (``l2_repair.py``) may take after B2L, out of what is left before
#: B3L and the finish (one 600-job neighbourhood, 0.2-0.9 s at load 5, gains 0.12% of L2 on
#: 4,096 GPUs and 0.24% on 16,384; with 2 s instead of 1.2 the L3 neighbourhoods after it
#: gained little, the L3 gap stayed 4.5-4.7% and 5-11%, and the run took 0.8 s longer).
REPAIR_MAX_S = 1.2

#: Seconds per job the join keeps for turning the joined state into a solution (measured:
#: 0.3 s for 20,000 jobs at load 10), and the join's whole reserve per job (state, water-fill
#: and solution: 1.5 s for 20,000 jobs at load 10).
SOLUTION_S_PER_JOB = 3e-5
JOIN_S_PER_JOB = 5e-5
#: ... and at least this many data builds (build 1.1 s at 20,000 jobs, load 10), so that it
#: follows the machine's load: at load 14.5 the per-job reserve alone overran 10 s by 1.4 s.
JOIN_PER_BUILD = 1.5
#: Seconds per job a water-fill of missing parts' jobs needs before its first stop check.
SORT_S_PER_JOB = 5e-5

#: One job's answer from a part: (GPU type, count, kept, hosts), or None (idle).
Answer = tuple[str, int, bool, dict[str, int]] | None


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


def solve_part(part: ModelData, budget: decompose.Budget) -> list[Answer]:
    """gavel-round on one part within ``budget`` (module-level: a process pool's task)."""
    time_limit_s = budget.deadline().remaining()
    try:
        lp, keep = lp_guide(part, 0.7 * time_limit_s)
    except DeadlineReached:
        lp, keep = GavelAllocation(Status.NO_SOLUTION, 0.0, 0.0, (), {}, {}), []
    state, problem = run_gavel_round(part, GavelRoundParams(), lp, keep_first=keep)
    if problem:
        raise RuntimeError(problem)
    out: list[Answer] = []
    for job, r in zip(part.jobs, state.raw, strict=True):
        if r.option is None:
            out.append(None)
        else:
            o = job.options[r.option]
            out.append((o.gpu_type, o.n, r.keep, dict(state.hosts[job.index])))
    return out


def join(
    data: ModelData,
    parts: list[list[int]],
    answers: Mapping[str, Any],
    deadline: Deadline,
    whole: Bounds | None = None,
) -> tuple[Any, dict[str, float | str]]:
    """The parts' placements on the whole cluster, then the idle GPUs water-filled; with the
    whole round's bounds ``whole``, B3L behind the joined plan (:func:`l3_stats`)."""
    if not answers:  # nothing of its own: the caller's heuristics answer (auto)
        return None, {"parts_missing_jobs": float(len(data.jobs))}
    started = time.perf_counter()
    state = _State(data)
    missing = 0
    for p, indices in enumerate(parts):
        got = answers.get(f"part{p}")
        if got is None:
            missing += len(indices)
            continue
        for i, answer in zip(indices, got, strict=True):
            if answer is None:
                continue
            job = data.jobs[i]
            g, n, keep, hosts = answer
            o = next(k for k, opt in enumerate(job.options) if (opt.gpu_type, opt.n) == (g, n))
            state.board.keep(hosts)
            state._set(job, o, hosts, keep=keep)
    before = sum(state.unit_gpus)
    # the parts left GPUs: water-fill them until the time kept for writing the solution
    stop = deadline.earlier(SOLUTION_S_PER_JOB * len(data.jobs))
    # (water_fill first sorts every unit's jobs: not started without time for that)
    if any(state.board.type_free.values()) and stop.remaining() > SORT_S_PER_JOB * missing:
        water_fill(state, AstraeaParams(), wants=lambda unit: not stop.expired())
    # running jobs back on their hosts where L1 and L2 do not fall (restore.py), then the
    # GPUs that freed water-filled onto the jobs of the units involved
    restore_started = time.perf_counter()
    kept = sum(1 for r in state.raw if r.keep)
    touched = restore_running(state, stop)
    restored = sum(1 for r in state.raw if r.keep) - kept
    if touched:  # (their units only: water_fill sorts every job of the units it is given)
        units = [data.units[v] for v in sorted(touched)]
        water_fill(state, AstraeaParams(), units=units, wants=lambda unit: not stop.expired())
    restore_s = time.perf_counter() - restore_started
    stats: dict[str, float | str] = {
        "repair_added_gpus": float(sum(state.unit_gpus) - before),
        "parts_missing_jobs": float(missing),
        "restored_jobs": float(restored),
        "restore_s": round(restore_s, 3),
    }
    if whole is not None:
        stats.update(l3_stats(state, whole, stop, REPAIR_MAX_S))
    solution = state.solution()
    # the join's own time (B3L's included), against the reserve kept for it
    stats["join_s"] = round(time.perf_counter() - started, 3)
    return solution, stats


def l3_stats(
    state: _State, whole: Bounds, stop: Deadline, repair_s: float = 0.0
) -> dict[str, float | str]:
    """B2L (``l2_bound.py``) behind the joined plan's L1, then the L2 neighbourhoods guided by
    its multipliers (``l2_repair.py``), then B3L behind that plan, within B3L_MAX_S and
    ``stop``, then the return step (``l3_return.py``), the swap step, or where it did not run
    the L3 neighbourhoods, together in the L3 part of the repair's share ``repair_s``, with the
    exchange neighbourhood (``l3_exchange.py``) between them in time of its own.
    Both bounds are over the allocations at least as fair as the plan (``m_v(t̂)``) and, for
    B3L when t̂ is L1 of the optimum (``l1_settled``), at least its effective throughput."""
    data = state.data
    started = time.perf_counter()
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    # (not out of the finish kept back once more for solve(): under load it needs it, #16)
    finish = finish_reserve_s(data.instance)
    left = stop.remaining() - finish
    bounds_s = max(0.0, min(B3L_MAX_S, left))
    need, prices = need_gpus(data, t_hat), np.asarray(whole.prices)
    a = arrays(data)  # (once for B2L, the repair and B3L: 0.1 s at 20,000 jobs)
    b2l_started = time.perf_counter()
    l2_bound, mu, rho = l2_prices(data, need, prices, Deadline.after(min(B2L_MAX_S, left)), a)
    # (B3L's time as when B2L fits its share: what B2L takes past it is not B3L's)
    over = max(0.0, time.perf_counter() - b2l_started - B2L_SHARE * bounds_s)
    b3l_s = bounds_s - (time.perf_counter() - started) + over
    stats: dict[str, float | str] = {}
    out = RepairStats()
    l3_s = (1.0 - L2_PHASE) * repair_s
    if repair_s > 0.0:
        # the L2 neighbourhoods first (their own time, not B3L's: B3L's floor is the
        # repaired plan's L2), the L3 ones after B3L, filled by its margins
        repair_stop = stop.earlier(finish + max(0.0, b3l_s) + l3_s)
        out = repair_l2(state, mu, rho, repair_stop, repair_s, a, l2_bound, l3=False)
    left = stop.remaining() - finish - (l3_s if repair_s > 0 else 0.0)
    if joint_search_runs(need, len(data.jobs)):
        # B3L's joint search runs on these rounds only, and needs about 200 steps: under
        # load it was cut (4,096 GPUs at load 4: 76,917, with B3U 77,309, where it reaches
        # 77,517 and B3U 78,174 given the time)
        b3l_s += JOINT_EXTRA_S
    budget = Deadline.after(max(0.0, min(b3l_s, left) - search_reserve_s(len(a.unit))))
    l2 = sum(
        job.options[r.option].eff
        for job, r in zip(data.jobs, state.raw, strict=True)
        if r.option is not None
    )
    settled = l1_settled(data, t_hat, whole.l1)
    floor = l2 - L2_FLOOR_TOL * max(1.0, abs(l2)) if settled else None
    # (a valid bound for the plan the L3 neighbourhoods make too: it bounds L3*, and its
    # floor is a feasible plan's L2 at t̂ = L1*, formulations/fairshare.md, B3L Claim 1)
    dual = l3_dual(data, need, floor, prices, budget, a)
    # B3U at B3L's (λ, μ) and along their ray, after B3L's search (not out of its time)
    value = max(dual.value, unit_search(a, need, floor, dual.lam, dual.mu, stop.earlier(finish)))
    if repair_s > 0.0:
        # running jobs returned as a set first (l3_return.py), then the L3 neighbourhoods in
        # what is left of their share
        l3_stop = stop.earlier(finish)
        back = return_running(state, max(0.0, min(l3_s, l3_stop.remaining())), RepairStats())
        # restarting jobs returned by swaps with one other job each (l3_swap.py), in what
        # the return step left of the share and at least SWAP_S of CPU, within the time
        # left (the L3 neighbourhoods only where it did not run: after it never kept)
        swap_s = min(max(l3_s - back.seconds, SWAP_S), l3_stop.remaining())
        swap = swap_returns(state, max(0.0, swap_s), RepairStats(), a, l3_stop.remaining())
        # other jobs' moves beside the returns (l3_exchange.py), on rounds small enough for
        # its LP, in time of its own (at 16,384 GPUs its LP alone took 1.8-2.3 s: not run)
        moved = exchange(state, l3_stop.remaining(), RepairStats())  # (it checks it fits)
        repair_l3(state, dual, l3_stop, 0.0 if swap.seconds else l3_s - back.seconds, out, a)
        stats.update(out.as_stats())
        stats["l3_return_saved"] = round(back.saved_l3, 3)
        stats["l3_return_s"] = round(back.seconds, 3)
        stats["l3_swap_saved"] = round(swap.saved_l3, 3)
        stats["l3_swap_s"] = round(swap.seconds, 3)
        stats["l3_exchange_saved"] = round(moved.saved_l3, 3)
        stats["l3_exchange_s"] = round(moved.seconds, 3)
    return {
        **stats,
        "L2_bound": min(whole.l2, l2_bound),
        "L3_bound": max(whole.l3, value),
        "L3_bound_s": round(time.perf_counter() - started, 3),
        "L3_bound_rows": "L1 fix, L2 floor" if settled else "L1 fix",
    }


def decomposition(
    inst: FairshareInstance, options: SolveOptions, deadline: Deadline, random: bool
) -> decompose.Decomposition | Outcome:
    if inst.guarantees_hard or inst.max_preemptions is not None:
        return Outcome(
            Status.NO_SOLUTION,
            explanation="the decomposition does not split hard guarantees (C5) or a "
            "preemption cap (C6); use milp:highs or auto",
        )
    t0 = time.perf_counter()
    data = build_data(inst, check_size=False, deadline=deadline)
    data_s = time.perf_counter() - t0
    split_started = time.perf_counter()
    k = decompose.whole_param(
        options, "parts", max(1, round(len(data.jobs) / JOBS_PER_PART)), 1, decompose.MAX_PARTS
    )
    groups = _host_groups(data, k, random, options.seed)
    job_parts = split(data, k, random, options.seed)
    pieces = scale_units(data, [part_data(data, ix, p, groups) for p, ix in enumerate(job_parts)])
    deadline.check("splitting the round into parts")

    found: dict[str, Bounds] = {}

    timings = {"data_s": round(data_s, 3), "split_s": round(time.perf_counter() - split_started, 3)}

    def bound(seconds: float) -> decompose.Bound:
        b = found["whole"] = bounds(data, Deadline.after(seconds))
        return decompose.Bound(b.l1, {"L2_bound": b.l2, "L3_bound": b.l3, **timings})

    return decompose.Decomposition(
        part=lambda p, budget: Task(f"part{p}", solve_part, (pieces[p], budget)),
        count=k,
        join=lambda answers, dl: join(data, job_parts, answers, dl, found.get("whole")),
        bound=bound,
        # the join costs about 1.5 data builds, which follow the machine's load; and the
        # finish once more: solve()'s reserve for it (65 us a job) was 1.5-3 s short at
        # 20,000 jobs and load 8-15, and a decomposition uses its time to the end
        join_reserve_s=max(0.05 + JOIN_S_PER_JOB * len(data.jobs), JOIN_PER_BUILD * data_s)
        + finish_reserve_s(inst),
        bound_share=0.1,
        finish=lambda outcome: with_fairness_note(data, outcome),
    )


def auto_route(inst: FairshareInstance) -> str:
    """``auto``'s exact method: ``decomp`` from AUTO_DECOMP_JOBS jobs on, when nothing it does
    not split (C5, C6) is asked for; else the monolithic MILP."""
    plain = not inst.guarantees_hard and inst.max_preemptions is None
    return "decomp" if plain and len(inst.jobs) >= AUTO_DECOMP_JOBS else "milp:highs"


METHODS = decompose.methods(
    decomposition,
    "decomposition by pool slices (gavel-round per part, water-filled join), "
    "bounds of the whole round on every level",
    "POP's random split of hosts and jobs (gavel-round per part), bounds of the whole",
    # auto runs it first: the heuristics before it took 3-4 s of a 10 s limit at 16,384
    # GPUs and left its parts too little (issue #17)
    first=True,
)

__all__ = ["METHODS", "auto_route", "join", "solve_part", "split"]

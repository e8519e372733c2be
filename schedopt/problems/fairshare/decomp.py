"""Fair share by decomposition: POP on Gavel's LP (Narayanan et al., NSDI'21), split by pool,
joined and water-filled on the whole cluster, with the bounds B1–B3 of the whole round
(formulations/fairshare.md, "Decomposition").

The round is cut into parts, each a slice of every GPU pool and of every tenant's jobs, with
every unit's accounts split by its demand (``pool_split.py``): a share of ``t`` in every part is
a share of at least ``t`` on the whole (the formulation proves it), so the join keeps the
parts' minimum. Each part runs gavel-round (the Gavel LP, rounded and water-filled) on its own
hosts, or, where its LP did not reach its L2 stage in time, the rounding on the whole round's
GPU prices (``price_round.py``); the join keeps every part's placement (the host groups are
disjoint) and water-fills the GPUs the parts left idle, puts running jobs back where they ran
(``restore.py``), then wins back the L2 the rounding lost with L1 held, and L3 at the plan's
L2, with the bounds behind the joined plan (``join_levels.py``).

Hard guarantees (C5) and a preemption cap (C6) are not split: with either, the method answers
NO_SOLUTION at once and ``auto`` keeps the monolithic model.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.executor import Task
from schedopt.model import decompose

from .bound import Bounds, bounds
from .data import ModelData, build_data, finish_reserve_s
from .explain import with_fairness_note
from .gavel import GavelAllocation
from .heuristics import AstraeaParams, GavelRoundParams, run_gavel_round, water_fill
from .instance import FairshareInstance
from .join_levels import l3_stats
from .l2_repair import deterministic_neighbourhoods
from .lp_guide import lp_guide
from .plan import Plan
from .pool_split import _host_groups, scale_units, split
from .price_round import priced_round
from .restore import restore_running
from .subround import part_data

#: About this many jobs per part (the Gavel LP of 2,500 jobs solves in well under a second).
JOBS_PER_PART = 2500
#: ``auto`` runs ``decomp`` from this many jobs on (the monolithic model took 58.7 s on a
#: 10 s limit at 20,000 jobs, issue #16).
AUTO_DECOMP_JOBS = 5000

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

#: The whole round's B2 prices by GPU type and B1, for a part's priced rounding.
PartPrices = tuple[dict[str, float], float]

#: One job's answer from a part: (GPU type, count, kept, hosts), or None (idle).
Answer = tuple[str, int, bool, dict[str, int]] | None


def solve_part(
    part: ModelData, budget: decompose.Budget, prices: PartPrices | None = None
) -> list[Answer]:
    """gavel-round on one part within ``budget`` (module-level: a process pool's task), or,
    with the whole round's ``prices`` where the part's LP did not reach its L2 stage in time,
    the priced rounding (``price_round.py``: L2 17-57% under its bound on 16,384 GPUs beside
    two CPU burners, where the LP's L1 point or no guide was rounded, #17). In deterministic
    mode the budget is the runaway cap (core/solve.py): the part's LP stages are solved to
    the end and the rounding is a bounded loop, fixed work."""
    time_limit_s = budget.deadline().remaining()
    try:
        lp, keep = lp_guide(part, 0.7 * time_limit_s, need_l2=prices is not None)
    except DeadlineReached:
        lp, keep = GavelAllocation(Status.NO_SOLUTION, 0.0, 0.0, (), {}, {}), []
    if prices is not None and not lp.status.has_solution:
        state = priced_round(part, prices[0], prices[1])
    else:
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
    neighbourhoods: int | None = None,
) -> tuple[Any, dict[str, float | str]]:
    """The parts' placements on the whole cluster, then the idle GPUs water-filled; with the
    whole round's bounds ``whole``, B3L behind the joined plan (:func:`l3_stats`).
    ``neighbourhoods`` given (deterministic mode): the parts in their order (as always), the
    water-fills and the restore run to their end (bounded loops; ``deadline`` is then the
    runaway cap), the bounds behind the plan to their step limits, and the repair solves that
    many neighbourhoods a phase on a budget of nodes (:func:`l3_stats`)."""
    if not answers:  # nothing of its own: the caller's heuristics answer (auto)
        return None, {"parts_missing_jobs": float(len(data.jobs))}
    started = time.perf_counter()
    state = Plan(data)
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
            state.assign(job, o, hosts, keep=keep)
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
        stats.update(l3_stats(state, whole, stop, REPAIR_MAX_S, neighbourhoods))
    solution = state.solution()
    # the join's own time (B3L's included), against the reserve kept for it
    stats["join_s"] = round(time.perf_counter() - started, 3)
    return solution, stats


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

    # deterministic mode: B2's subgradient steps all run (B2_STEPS), whatever the clock says,
    # and the join's repair has a budget of neighbourhoods from the limit
    det = options.deterministic
    budget = deterministic_neighbourhoods(options.time_limit_s) if det else None

    def prices() -> PartPrices | None:
        """B2's prices and B1 for the parts' priced rounding (computed before the parts)."""
        whole = found.get("whole")
        if whole is None or not whole.prices:
            return None
        return dict(zip(sorted(data.type_capacity), whole.prices, strict=True)), whole.l1

    def bound(seconds: float) -> decompose.Bound:
        b = found["whole"] = bounds(data, None if det else Deadline.after(seconds))
        return decompose.Bound(b.l1, {"L2_bound": b.l2, "L3_bound": b.l3, **timings})

    return decompose.Decomposition(
        part=lambda p, budget: Task(f"part{p}", solve_part, (pieces[p], budget, prices())),
        count=k,
        join=lambda answers, dl: join(data, job_parts, answers, dl, found.get("whole"), budget),
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

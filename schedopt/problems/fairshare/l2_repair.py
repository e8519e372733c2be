"""The join's L2 repair (formulations/fairshare.md, "Decomposition", the L2 repair): the
throughput the parts' rounding lost, won back by small MILPs over neighbourhoods of the joined
plan with L1 held, then L3 lowered at the plan's L2 the same way.

The L2 neighbourhoods follow B2L's multipliers (``μ_g`` per GPU of each type, ``ρ_v`` per
counted unit): a job's reduced profit on option ``o`` is ``π_jo = e_jo − (μ_g − ρ_v) n_o``, and
the jobs whose choice is furthest below their best (the shortfall ``max(0, max_o π_jo) −
π_j,now``: idle jobs that should run, jobs on the wrong option, jobs that cost more GPUs than
they are worth) are where the relaxation says the rounding lost L2; the jobs with the least
``|π|`` (those the relaxation is nearly indifferent about) fill the neighbourhood up. The L3
neighbourhoods are the running jobs that restart though they could be kept, with the jobs on
their previous hosts; after B3L (``repair_l3``) filled up by the least margin at B3L's
multipliers, else at B2L's. Each neighbourhood is solved as a round of its own
(``neighbourhood.py``) and its answer replaces the plan's only if the whole plan's L1 does not
fall and (L2, −L3) rises (L2 within ``L2_HOLD`` of the neighbourhood's, as the exact models
hold L2 within 10⁻⁶): the plan gets lexicographically better or stays.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from schedopt.core.stopping import Deadline

from .l3_lagrangian import L3Dual
from .neighbourhood import L2_HOLD, Decision, residual, solve
from .option_arrays import Arrays, arrays
from .plan import Plan

#: Jobs in one neighbourhood (its MILP on 4,096 GPUs: 600 jobs, 2,500 columns, 0.2-0.9 s at
#: load 4-7), and the seconds such a neighbourhood is given: with less time left, it has
#: proportionally fewer jobs (at least MIN_JOBS), the ones with the largest shortfall (at
#: 16,384 GPUs, load 6, a 600-job neighbourhood given 0.46 s gained nothing).
NEIGHBOURHOOD_JOBS = 600
NEIGHBOURHOOD_S = 1.0
MIN_JOBS = 100
#: Shortfalls below this are noise.
LOSS_TOL = 1e-9
#: L3 must fall by more than this (seconds) for a neighbourhood to count as better.
COST_TOL = 1e-6
#: Share of the repair's time for the L2 neighbourhoods (the L3 ones take the rest).
L2_PHASE = 0.75
#: No neighbourhood is started with less time than this.
MIN_S = 0.05
#: An L2 neighbourhood's MILP stops once what it could still gain is proven below this share
#: of the plan's L2, rather than proving its L3 tie-break too (at 4,096 GPUs, load 3.9: 0.40 s
#: for +3.19 at 0.0013 from its bound, where it used its whole 0.9 s before for the same
#: +3.19). Not 1e-4: at 16,384 GPUs a first neighbourhood stopped at its root's gap of 0.97
#: gained 0.5 less L2 than one given its 0.9 s, and B3L, whose floor is the plan's L2, fell
#: with it (L3 gap 5.0-6.1% -> 6.3-6.8% in four pairs at load 4).
L2_GAP = 1e-6
#: Deterministic mode (SolveOptions.deterministic): one neighbourhood of each phase per this
#: many seconds of the limit, at most DETERMINISTIC_NEIGHBOURHOODS, each of NEIGHBOURHOOD_JOBS
#: jobs, and the branch-and-bound nodes each MILP may explore, in place of the time shares (a
#: budget of work: the same neighbourhoods on any machine; a 1 s limit gets none).
DETERMINISTIC_S_PER_NEIGHBOURHOOD = 5.0
DETERMINISTIC_NEIGHBOURHOODS = 2
DETERMINISTIC_NODES = 200


def deterministic_neighbourhoods(time_limit_s: float) -> int:
    """The neighbourhoods of each phase a deterministic run of ``time_limit_s`` may solve."""
    per = int(time_limit_s // DETERMINISTIC_S_PER_NEIGHBOURHOOD)
    return min(DETERMINISTIC_NEIGHBOURHOODS, per)


@dataclasses.dataclass
class RepairStats:
    neighbourhoods: int = 0
    improved: int = 0
    gained_l2: float = 0.0
    saved_l3: float = 0.0
    seconds: float = 0.0

    def as_stats(self) -> dict[str, float | str]:
        return {
            "l2_repair_neighbourhoods": float(self.neighbourhoods),
            "l2_repair_improved": float(self.improved),
            "l2_repair_gained": round(self.gained_l2, 6),
            "l2_repair_l3_saved": round(self.saved_l3, 3),
            "l2_repair_s": round(self.seconds, 3),
        }


def _job_rows(state: Plan) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The jobs with options (``arrays``'s rows, by job index), and a shortfall of 0 and a
    margin of +inf for every job: what a job without options keeps."""
    data = state.data
    rows = [j.index for j in data.jobs if j.options]
    return rows, np.zeros(len(data.jobs)), np.full(len(data.jobs), np.inf)


def losses(
    state: Plan, a: Arrays, mu: np.ndarray, rho: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every job's shortfall at ``(μ, ρ)`` (module docstring) and its margin (``|π|`` of its
    choice, or of its best option when idle), by job index; ``a``: ``arrays(state.data)``.
    Jobs without options: 0 and +inf."""
    rows, loss, margin = _job_rows(state)
    pi = a.eff - a.gpu_terms(mu, rho)
    pi = np.where(np.isfinite(a.base), pi, -np.inf)
    top = pi.max(axis=1)
    now = np.array([state.raw[j].option for j in rows], dtype=object)
    running = np.array([o is not None for o in now], dtype=bool)
    pick = np.array([0 if o is None else o for o in now], dtype=np.int64)
    current = np.where(running, pi[np.arange(len(rows)), pick], 0.0)
    loss[rows] = np.maximum(top, 0.0) - current
    margin[rows] = np.abs(np.where(running, current, top))
    return loss, margin


def l2_neighbourhood(loss: np.ndarray, margin: np.ndarray, used: set[int], size: int) -> list[int]:
    """Up to ``size`` jobs not in ``used``: those with a shortfall, largest first, then the
    ones with the least margin; none when no job outside ``used`` falls short."""
    free = np.ones(len(loss), dtype=bool)
    if used:
        free[list(used)] = False
    short = np.flatnonzero(free & (loss > LOSS_TOL))
    if not len(short):
        return []
    short = short[np.argsort(-loss[short], kind="stable")][:size]
    free[short] = False
    rest = np.flatnonzero(free & np.isfinite(margin))
    rest = rest[np.argsort(margin[rest], kind="stable")][: size - len(short)]
    return sorted(int(i) for i in np.concatenate([short, rest]))


def l3_neighbourhood(state: Plan, margin: np.ndarray, used: set[int], size: int) -> list[int]:
    """Up to ``size`` jobs not in ``used``: running jobs that restart though they could be
    kept (highest restart cost first) with the jobs on their previous hosts, up to half of
    ``size``; then the jobs with the least margin. None without such a running job."""
    data = state.data
    on_host: dict[str, list[int]] = {}
    for i, hosts in enumerate(state.hosts):
        for h in hosts:
            on_host.setdefault(h, []).append(i)
    restarting = [
        j
        for j in data.jobs
        if j.keepable and j.restart_cost > 0 and not state.raw[j.index].keep and j.index not in used
    ]
    restarting.sort(key=lambda j: (-j.restart_cost, j.index))
    chosen: set[int] = set()
    for j in restarting:
        if len(chosen) >= size // 2:
            break
        chosen.add(j.index)
        chosen.update(i for h in j.prev_hosts for i in on_host.get(h, ()) if i not in used)
    if not chosen:
        return []
    free = np.isfinite(margin)
    free[list(used | chosen)] = False
    rest = np.flatnonzero(free)
    rest = rest[np.argsort(margin[rest], kind="stable")][: max(0, size - len(chosen))]
    return sorted(chosen | {int(i) for i in rest})


def l3_shortfalls(state: Plan, a: Arrays, dual: L3Dual) -> tuple[np.ndarray, np.ndarray]:
    """Every job's L3 shortfall at B3L's multipliers (``a_j,now − min(0, min_o a_jo)``, ``a``
    of Claim 2; a running job on its previous option not kept pays ``c_j`` more) and its
    margin (``|a|`` of its choice, or of its best when idle), by job index. Their sum with
    the relaxed rows' slacks is the plan's L3 less B3L: the jobs where the plan loses L3
    against the bound. Jobs without options: 0 and +inf."""
    data = state.data
    rows, short, margin = _job_rows(state)
    cost = dual.costs(a)
    least = np.minimum(cost.min(axis=1), 0.0)
    now = np.zeros(len(rows))
    running = np.zeros(len(rows), dtype=bool)
    for r, i in enumerate(rows):
        job, raw = data.jobs[i], state.raw[i]
        if raw.option is None:
            continue
        running[r] = True
        now[r] = cost[r, raw.option]
        if raw.option == job.prev_option and job.keepable and not raw.keep:
            now[r] += job.restart_cost
    short[rows] = now - least
    margin[rows] = np.abs(np.where(running, now, least))
    return short, margin


def repair_l3(
    state: Plan,
    dual: L3Dual,
    stop: Deadline,
    max_s: float,
    out: RepairStats,
    a: Arrays,
    budget: int | None = None,
) -> RepairStats:
    """The L3 neighbourhoods after B3L (``l3_neighbourhood``, filled by the least margin at
    B3L's multipliers), each ``min L3`` with L2 held and kept only if better, within
    ``max_s`` and ``stop``, until one is not kept; added to ``out``. (Chosen by the largest
    L3 shortfall instead, they were not kept at 16,384 GPUs: benchmarks/RESULTS.md.)"""
    started = time.perf_counter()
    inst = state.data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None:
        return out
    det = budget is not None
    end = started + max(0.0, stop.remaining() if det else min(max_s, stop.remaining()))

    def pick(used: set[int], size: int) -> list[int]:
        return l3_neighbourhood(state, l3_shortfalls(state, a, dual)[1], used, size)

    _phase(state, pick, end, False, out, budget)
    out.seconds += time.perf_counter() - started
    return out


def _phase(
    state: Plan,
    pick: Callable[[set[int], int], list[int]],
    end: float,
    l2: bool,
    out: RepairStats,
    budget: int | None = None,
) -> None:
    """Neighbourhoods from ``pick(used, size)``, each solved and kept if better (``l2``: the L2
    phase), until ``end``, until ``pick`` has none or one is not kept. ``budget``
    (deterministic mode): at most that many, of NEIGHBOURHOOD_JOBS jobs, each on
    DETERMINISTIC_NODES nodes, ``end`` only a runaway cap."""
    deterministic = budget is not None
    used: set[int] = set()
    done = 0
    while time.perf_counter() < end - MIN_S:
        if budget is not None and done >= budget:
            return
        done += 1
        chosen = pick(used, NEIGHBOURHOOD_JOBS if deterministic else _size(end))
        if not chosen:
            return
        used.update(chosen)
        improved = out.improved
        _improve(state, chosen, end, l2, out, DETERMINISTIC_NODES if deterministic else None)
        if out.improved == improved:
            return


def repair_l2(
    state: Plan,
    mu: np.ndarray,
    rho: np.ndarray,
    stop: Deadline,
    max_s: float,
    a: Arrays | None = None,
    l2_bound: float = np.inf,
    l3: bool = True,
    budget: int | None = None,
) -> RepairStats:
    """Neighbourhood MILPs (module docstring) until ``max_s`` or ``stop``: L2 first, in up to
    L2_PHASE of the time, until one is not kept or the plan's L2 is within L2_GAP of
    ``l2_bound`` (B2L), then L3 at the plan's L2 in the rest of the share until one is not
    kept (``l3`` False: the L2 ones alone, in their share). ``mu``, ``rho``: B2L's
    multipliers (``l2_bound.l2_prices``); ``a``: ``l3_bound.arrays(state.data)``, if made
    already. Not with hard guarantees or a
    preemption cap (the neighbourhood would have to carry them; ``decomp`` refuses both).
    ``budget`` (deterministic mode): neighbourhoods per phase, on a budget of nodes, in place
    of ``max_s`` (``_phase``), ``stop`` only a runaway cap."""
    deterministic = budget is not None
    started = time.perf_counter()
    out = RepairStats()
    inst = state.data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None:
        return out
    end = started + max(0.0, stop.remaining() if deterministic else min(max_s, stop.remaining()))
    l3_s = 0.0 if deterministic else (1.0 - L2_PHASE) * (end - started)
    l2_end = end - l3_s
    a = arrays(state.data) if a is None else a

    def l2_pick(used: set[int], size: int) -> list[int]:
        if _plan_l2(state) >= l2_bound - L2_GAP * abs(l2_bound):
            return []  # within L2_GAP of B2L: nothing measurable left to win
        loss, margin = losses(state, a, mu, rho)
        return l2_neighbourhood(loss, margin, used, size)

    def l3_pick(used: set[int], size: int) -> list[int]:
        return l3_neighbourhood(state, losses(state, a, mu, rho)[1], used, size)

    # each phase stops after a neighbourhood that is not kept: the next has less to win back
    # (they take the largest first): at 16,384 GPUs, load 2.7, the L2 one after a first that
    # gained 23.1 gained nothing; at 4,096 GPUs, load 3.6, the three L3 ones after a first that
    # was not kept gained nothing in 0.53 s
    _phase(state, l2_pick, l2_end, True, out, budget)
    if not l3:
        out.seconds = time.perf_counter() - started
        return out
    # the L3 neighbourhoods have their share of the time from here, not what the L2 ones left
    l3_end = end if deterministic else min(end, time.perf_counter() + l3_s)
    _phase(state, l3_pick, l3_end, False, out, budget)
    out.seconds = time.perf_counter() - started
    return out


def _size(end: float) -> int:
    """Jobs in a neighbourhood started now that must end at ``end`` (NEIGHBOURHOOD_S)."""
    left = end - time.perf_counter()
    return max(MIN_JOBS, min(NEIGHBOURHOOD_JOBS, int(NEIGHBOURHOOD_JOBS * left / NEIGHBOURHOOD_S)))


def _improve(
    state: Plan,
    chosen: list[int],
    end: float,
    l2: bool,
    out: RepairStats,
    nodes: int | None = None,
) -> None:
    """One neighbourhood's MILP, kept only if the plan gets lexicographically better."""
    data = state.data
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    before = _levels(state, chosen)
    sub = residual(state, chosen)
    gap = L2_GAP * abs(_plan_l2(state)) if l2 else 0.0
    decided = solve(sub, state, chosen, t_hat, end - time.perf_counter(), l2, gap, nodes)
    out.neighbourhoods += 1
    if decided is None:
        return
    old = [(state.raw[i], dict(state.hosts[i])) for i in chosen]
    if not _apply(state, chosen, [sub.jobs[n].options for n in range(len(chosen))], decided):
        return
    after = _levels(state, chosen)
    gained = after[0] - before[0]
    tol = L2_HOLD * max(1.0, abs(before[0]))
    fair = data.min_share([float(g) for g in state.unit_gpus]) >= t_hat
    if fair and (gained > tol or (gained >= -tol and after[1] < before[1] - COST_TOL)):
        out.improved += 1
        out.gained_l2 += gained
        out.saved_l3 += before[1] - after[1]
    else:
        _put_back(state, chosen, old)


def _plan_l2(state: Plan) -> float:
    """The whole plan's L2."""
    jobs = state.data.jobs
    return sum(
        jobs[i].options[r.option].eff for i, r in enumerate(state.raw) if r.option is not None
    )


def _levels(state: Plan, chosen: list[int]) -> tuple[float, float]:
    """(L2, L3) of the chosen jobs' part of the plan (L3 less its constant). A running job
    placed as before is not restarted, kept or not (as the validator counts it: a
    neighbourhood that only marks such a job kept saves nothing)."""
    data = state.data
    l2 = l3 = 0.0
    for i in chosen:
        job, r = data.jobs[i], state.raw[i]
        if r.option is None:
            continue
        opt = job.options[r.option]
        l2 += opt.eff
        stays = r.keep or (r.option == job.prev_option and state.hosts[i] == job.prev_hosts)
        l3 += data.frag_cost * opt.extra_hosts - (job.restart_cost if stays else 0.0)
    return l2, l3


def _apply(state: Plan, chosen: list[int], options: list[Any], decided: list[Decision]) -> bool:
    """The neighbourhood's decisions on the board (``options``: each job's options in the
    neighbourhood): kept jobs first, then the others largest first (best fit, as
    ``placement.assemble``); False, and the plan as it was, if a job does not fit."""
    data = state.data
    old = [(state.raw[i], dict(state.hosts[i])) for i in chosen]
    for i in chosen:
        state.unset(data.jobs[i])
    moves = [
        (not keep, -options[n][o].n, n, data.jobs[chosen[n]].options.index(options[n][o]), keep)
        for n, (o, keep) in enumerate(decided)
        if o is not None
    ]
    for _, _, n, o, keep in sorted(moves):
        job = data.jobs[chosen[n]]
        if not (state.keep(job) if keep and o == job.prev_option else state.place(job, o)):
            _put_back(state, chosen, old)
            return False
    return True


def _put_back(state: Plan, chosen: list[int], old: list[tuple[Any, dict[str, int]]]) -> None:
    """The chosen jobs as they were (``old``: their decisions and hosts)."""
    data = state.data
    for i in chosen:
        state.unset(data.jobs[i])
    for i, (r, hosts) in zip(chosen, old, strict=True):
        if r.option is not None:
            state.assign(data.jobs[i], r.option, hosts, keep=r.keep)


__all__ = [
    "NEIGHBOURHOOD_JOBS",
    "RepairStats",
    "l2_neighbourhood",
    "l3_neighbourhood",
    "l3_shortfalls",
    "losses",
    "repair_l2",
    "repair_l3",
]

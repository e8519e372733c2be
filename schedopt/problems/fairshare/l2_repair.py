"""The join's L2 repair (formulations/fairshare.md, "Decomposition", the L2 repair): the
throughput the parts' rounding lost, won back by small MILPs over neighbourhoods of the joined
plan with L1 held, then L3 lowered at the plan's L2 the same way.

The neighbourhoods are chosen at B2L's multipliers, and after B3L at B3L's
(``repair_choice.py``). Each neighbourhood is solved as a round of its own
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
from .repair_choice import l2_neighbourhood, l3_neighbourhood, l3_shortfalls, losses

#: Jobs in one neighbourhood (its MILP on 4,096 GPUs: 600 jobs, 2,500 columns, 0.2-0.9 s at
#: load 4-7), and the seconds such a neighbourhood is given: with less time left, it has
#: proportionally fewer jobs (at least MIN_JOBS), the ones with the largest shortfall (at
#: 16,384 GPUs, load 6, a 600-job neighbourhood given 0.46 s gained nothing).
NEIGHBOURHOOD_JOBS = 600
NEIGHBOURHOOD_S = 1.0
MIN_JOBS = 100
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
        improve_neighbourhood(
            state, chosen, end, l2, out, DETERMINISTIC_NODES if deterministic else None
        )
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
        if state.l2() >= l2_bound - L2_GAP * abs(l2_bound):
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


def improve_neighbourhood(
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
    before = state.levels(chosen)
    sub = residual(state, chosen)
    gap = L2_GAP * abs(state.l2()) if l2 else 0.0
    decided = solve(sub, state, chosen, t_hat, end - time.perf_counter(), l2, gap, nodes)
    out.neighbourhoods += 1
    if decided is None:
        return
    old = state.saved(chosen)
    if not _apply(state, chosen, [sub.jobs[n].options for n in range(len(chosen))], decided):
        return
    after = state.levels(chosen)
    gained = after[0] - before[0]
    tol = L2_HOLD * max(1.0, abs(before[0]))
    fair = data.min_share([float(g) for g in state.unit_gpus]) >= t_hat
    if fair and (gained > tol or (gained >= -tol and after[1] < before[1] - COST_TOL)):
        out.improved += 1
        out.gained_l2 += gained
        out.saved_l3 += before[1] - after[1]
    else:
        state.put_back(chosen, old)


def _apply(state: Plan, chosen: list[int], options: list[Any], decided: list[Decision]) -> bool:
    """The neighbourhood's decisions on the board (``options``: each job's options in the
    neighbourhood): kept jobs first, then the others largest first (best fit, as
    ``placement.assemble``); False, and the plan as it was, if a job does not fit."""
    data = state.data
    old = state.saved(chosen)
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
            state.put_back(chosen, old)
            return False
    return True


__all__ = [
    "NEIGHBOURHOOD_JOBS",
    "RepairStats",
    "improve_neighbourhood",
    "repair_l2",
    "repair_l3",
]

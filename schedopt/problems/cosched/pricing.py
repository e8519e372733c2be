"""Exact pricing of one case of the group space R' (formulations/cosched.md, "R' and exact
pricing"): the most dual value ``Σ π_j`` a group with hosts ``h`` and cycle ``T ≤ ℓ`` can collect
from jobs whose SLO exceeds the level below, under R1, R2, R3' (C11's switches), R4 and R5, as
a small CP-SAT model.

:func:`case_bound` returns CP-SAT's proven upper bound on that value (an upper bound even when
stopped early: the bound, not the incumbent) and the best group found, so the Farley bound can
replace a case's surrogate knapsack value by it, and column generation can try the group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from schedopt.backends.first_import import CPSAT, solver_in_time
from schedopt.core.stopping import Deadline

#: π is scaled by this and rounded up for CP-SAT's integer objective (the bound stays above).
SCALE = 10_000
#: Seconds (deterministic seconds in deterministic mode) of CP-SAT's search alone on a case
#: before its full solver, LP relaxation included, takes the rest.
SEARCH_S = 0.05
#: Groups kept per case model: the best ones of every solution CP-SAT finds on its way (the
#: most Σ π first), so a round adds more than one column per case (#17).
KEEP_GROUPS = 6


@dataclass(frozen=True)
class CaseBound:
    upper: float  # ≥ Σ_{j∈S} π_j for every group S of the case
    found: list[tuple[int, int]]  # the best group found: (job, combination index)
    value: float  # its Σ π
    #: up to :data:`KEEP_GROUPS` groups CP-SAT found (the best first, ``found`` among them),
    #: each with its Σ π: the search's other solutions, columns too
    groups: tuple[tuple[float, tuple[tuple[int, int], ...]], ...] = ()
    #: CP-SAT decided the case: proved its maximum (or none), or stopped at ``enough`` (the
    #: case cannot lower θ); False when its time or deterministic time ran out first
    decided: bool = True
    #: the best group of one member's Σ π (found outside the model; 0: none)
    alone: float = 0.0


def case_bound(
    pi: np.ndarray,
    items: np.ndarray,
    ok: np.ndarray,
    duration: np.ndarray,
    load: np.ndarray,
    mem: np.ndarray,
    chain: np.ndarray,
    slo: np.ndarray,
    factor: np.ndarray,
    switch: np.ndarray,
    level: int,
    room: np.ndarray,
    seconds: float,
    enough: float | None = None,
    hint: Sequence[tuple[int, int]] = (),
    work: float | None = None,
    deadline: Deadline | None = None,
) -> CaseBound:
    """``items``: job indices; per item ``i`` (row ``i`` of the arrays): ``ok[i, c]`` the
    admissible combinations; ``duration[i, c, p]`` ms on pool ``p`` without switch, ``load``
    with the job's switch; ``mem`` MiB; ``chain`` the step (R5). ``room`` MiB per pool.
    ``enough``: CP-SAT stops once its proven bound is at or below it (the caller needs no
    less); ``hint``: a group (job, combination) to start the search from (the case's group of
    the last round); ``work``: CP-SAT's deterministic time limit (reproducible), ``seconds``
    then only a runaway cap. Dominated combinations are left out (:func:`undominated`): the
    maximum is the same. ``deadline``: the caller's (None in deterministic mode), by which
    CP-SAT's first import must end, else it is refused and the case left undecided, bounded
    by the sum of the positive π, with its best group of one member, found outside the model:
    a column, and a true ``alone`` (:func:`with_programme`'s programme bounds only the groups
    of two or more)."""
    total = float(sum(max(0.0, pi[j]) for j in items))  # Σ of the positive π: above every group
    if not solver_in_time(CPSAT, deadline):
        ok = undominated(ok, duration, load, mem, chain)
        single = best_alone(pi, items, ok, duration, mem, chain, slo, factor, level, room)
        if single is None:
            return CaseBound(total, [], 0.0, decided=False)
        value, group = single
        return CaseBound(total, [group], value, ((value, (group,)),), decided=False, alone=value)
    from ortools.sat.python import cp_model  # imported above (gated) or by the caller

    from schedopt.backends.cpsat import new_solver, solve  # SIGINT left to Python

    m, x, alone = case_model(
        pi, items, ok, duration, load, mem, chain, slo, factor, switch, level, room
    )
    hinted = set(hint)
    if hinted:
        for (i, c), v in x.items():
            m.add_hint(v, (int(items[i]), c) in hinted)
    proven = [math.inf]  # the least bound CP-SAT has proven so far (scaled)
    found: list[tuple[int, int]] = []
    value = 0.0
    seen: dict[tuple[tuple[int, int], ...], float] = {}  # every group found, and its Σ π
    pairs = list(x.items())

    class Keep(cp_model.CpSolverSolutionCallback):
        """Keeps every solution the search finds (each a group of the case: a column)."""

        def on_solution_callback(self) -> None:
            got = tuple((int(items[i]), c) for (i, c), v in pairs if self.value(v))
            if got and got not in seen:
                seen[got] = float(sum(pi[j] for j, _ in got))

    # First CP-SAT's search alone, without the LP relaxation, probing or symmetry detection:
    # it proves the small models of 656 GPUs × 40 jobs (about 20 jobs × 5 combinations) in
    # about half the CPU time (238 cases: 5.5 → 2.7 s, #17); a case it does not decide in
    # SEARCH_S gets the full solver for the rest (its LP bound holds when stopped: the
    # search-only one is weak, 2,857 against 2,888 at 4,096 × 200 at the aggregate shares).
    quick = min(SEARCH_S, seconds) if work is None else min(SEARCH_S, work)
    done = False
    for search_only in (True, False):
        left = seconds if search_only else seconds - quick
        solver = new_solver()
        if work is None:
            solver.parameters.max_time_in_seconds = max(0.01, quick if search_only else left)
        else:
            # Deterministic mode: the phases end on deterministic time alone; the wall clock
            # only stops a runaway run (SEARCH_S as wall seconds cut the search phase at a
            # point that depended on the machine's load: the groups found, the hints and the
            # next rounds' duals differed from run to run, #17)
            solver.parameters.max_time_in_seconds = max(0.01, seconds)
            solver.parameters.max_deterministic_time = quick if search_only else work - quick
        solver.parameters.num_workers = 1
        # Probing and presolve cost more than they save on these models (a knapsack over
        # one combination per job, no variable to fix): 4,096 × 200's case models of 110-140
        # jobs prove in a third of the CPU time without them (#17).
        solver.parameters.cp_model_probing_level = 0
        solver.parameters.cp_model_presolve = False
        if search_only:
            solver.parameters.linearization_level = 0
            solver.parameters.symmetry_level = 0
        stopped = [False]

        def on_bound(bound: float, solver: cp_model.CpSolver = solver, stopped=stopped) -> None:
            proven[0] = min(proven[0], bound)
            if enough is not None and bound <= enough * SCALE:
                stopped[0] = True
                solver.stop_search()

        solver.best_bound_callback = on_bound
        status = solve(solver, m, Keep())
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            proven[0] = min(proven[0], solver.best_objective_bound)
            got = [(int(items[i]), c) for (i, c), v in x.items() if solver.value(v)]
            if float(sum(pi[j] for j, _ in got)) >= value:
                found, value = got, float(sum(pi[j] for j, _ in got))
        done = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE) or stopped[0]
        if done or (left if work is None else work - quick) <= 0.01:
            break
    if alone is not None:  # the best group of one member, outside the model
        if alone[0] > value:
            found, value = [alone[1]], alone[0]
        proven[0] = max(proven[0], math.ceil(alone[0] * SCALE))
    if found:
        seen[tuple(found)] = value
    best = sorted(seen.items(), key=lambda kv: -kv[1])[:KEEP_GROUPS]
    groups = tuple((v, g) for g, v in best)
    decided = done or (enough is not None and proven[0] <= enough * SCALE)
    upper = min(total, proven[0] / SCALE + 1e-9)
    return CaseBound(upper, found, value, groups, decided, 0.0 if alone is None else alone[0])


def with_programme(got: CaseBound, dp: float) -> CaseBound:
    """``got`` (the case's :func:`case_bound`) with its bound lowered to ``dp``, the two-pool
    programme's (:func:`open_bound`, which bounds the model's groups), where that is less;
    the best group of one member, outside the model, stays: ``max(A, min(U, DP))``."""
    # ``decided`` stays CP-SAT's: colgen's stop rule counts on the case models' own proofs
    return replace(got, upper=min(got.upper, max(got.alone, dp + 1e-9)))


def case_model(
    pi: np.ndarray,
    items: np.ndarray,
    ok: np.ndarray,
    duration: np.ndarray,
    load: np.ndarray,
    mem: np.ndarray,
    chain: np.ndarray,
    slo: np.ndarray,
    factor: np.ndarray,
    switch: np.ndarray,
    level: int,
    room: np.ndarray,
) -> tuple[Any, dict[tuple[int, int], Any], tuple[float, tuple[int, int]] | None]:
    """The case's CP-SAT model over its groups of two or more members (arguments as
    :func:`case_bound`'s), its variables ``x[item, combination]``, and the best group of one
    member, ``(π_j, (job, combination))``, found outside the model (None: no job fits
    alone). The case's maximum is the larger of the model's and that one's."""
    from ortools.sat.python import cp_model

    ok = undominated(ok, duration, load, mem, chain)
    P = duration.shape[2]
    alone = best_alone(pi, items, ok, duration, mem, chain, slo, factor, level, room)
    # A pool every admissible combination uses has every member of a group of two or more
    # as a user: there, R3' is the load row with every switch, no big-M. (The model then
    # holds groups of one member to that stricter row too: still groups of R'.)
    universal = _universal(ok, load)
    m = cp_model.CpModel()
    T = m.new_int_var(0, int(level), "T")
    s_bar = int(switch[items].max()) if len(items) else 0
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    # per pool: the variables and their durations, loads (with the switch) and memory
    pool_v: list[list] = [[] for _ in range(P)]
    pool_d: list[list[int]] = [[] for _ in range(P)]
    pool_l: list[list[int]] = [[] for _ in range(P)]
    pool_n = [0] * P  # jobs with a combination on the pool
    mem_v: list[list] = [[] for _ in range(P)]
    mem_w: list[list[int]] = [[] for _ in range(P)]
    obj_v: list = []
    obj_w: list[int] = []
    weighted = cp_model.LinearExpr.weighted_sum
    for i, j in enumerate(items):
        cs = [int(c) for c in np.flatnonzero(ok[i])]
        if not cs:
            continue
        xs = [m.new_bool_var("") for _ in cs]
        chains = [int(chain[i, c]) for c in cs]
        for p in range(P):
            pool_n[p] += bool((load[i, cs, p] > 0).any())
        for c, v in zip(cs, xs, strict=True):
            x[i, c] = v
            for p in range(P):
                if load[i, c, p] > 0:
                    pool_v[p].append(v)
                    pool_d[p].append(int(duration[i, c, p]))
                    pool_l[p].append(int(load[i, c, p]))
                if mem[i, c, p] > 0:
                    mem_v[p].append(v)
                    mem_w[p].append(int(mem[i, c, p]))
        m.add_at_most_one(xs)
        # R5: the step fits 1 + σ cycles (at most one combination is chosen)
        m.add(int(factor[j]) * T >= weighted(xs, chains))
        if slo[j] < level:  # R4: the cycle is within every member's SLO
            m.add(T + (int(level) - int(slo[j])) * sum(xs) <= int(level))
        obj_v += xs
        obj_w += [int(np.ceil(pi[j] * SCALE))] * len(xs)
    for p in range(P):
        if not pool_v[p]:
            continue
        if universal[p]:  # R3' of a group of two or more: every member's switch is paid
            m.add(weighted(pool_v[p], pool_l[p]) <= T)
        else:
            # R3': a pool's phases fit the cycle; with two users or more (b = 1), every
            # user's switch too
            m.add(weighted(pool_v[p], pool_d[p]) <= T)
            b = m.new_bool_var("")
            m.add(sum(pool_v[p]) <= 1 + (pool_n[p] - 1) * b)
            m.add(weighted(pool_v[p], pool_l[p]) <= T + s_bar * (1 - b))
        if mem_v[p]:
            m.add(weighted(mem_v[p], mem_w[p]) <= int(room[p]))  # R2
    m.maximize(weighted(obj_v, obj_w))
    return m, x, alone


def best_alone(
    pi: np.ndarray,
    items: np.ndarray,
    ok: np.ndarray,
    duration: np.ndarray,
    mem: np.ndarray,
    chain: np.ndarray,
    slo: np.ndarray,
    factor: np.ndarray,
    level: int,
    room: np.ndarray,
) -> tuple[float, tuple[int, int]] | None:
    """The case's best group of one member, ``(π_j, (job, combination))``, found outside the
    model (arguments as :func:`case_bound`'s, ``ok`` undominated; None: no job fits alone)."""
    # its best is the largest π of a job that fits alone (T = min(ℓ, S_j), the most any row
    # allows; R3' with one user is d ≤ T)
    n = len(items)
    alone = np.minimum(int(level), slo[items]) if n else np.zeros(0, dtype=np.int64)
    fits = ok & (chain <= (factor[items] * alone)[:, None])
    fits &= (duration <= alone[:, None, None]).all(axis=2) & (mem <= room).all(axis=2)
    single = [(float(pi[j]), i) for i, j in enumerate(items) if fits[i].any() and pi[j] > 0]
    if not single:
        return None
    best, i = max(single)
    return best, (int(items[i]), int(np.flatnonzero(fits[i])[0]))


def _universal(ok: np.ndarray, load: np.ndarray) -> list[bool]:
    """Per pool: every admissible combination of every item uses it (``ok`` undominated)."""
    used: np.ndarray = (load > 0) | ~ok[..., None]  # (items, combinations, pools)
    return [bool(used[..., p].all()) for p in range(load.shape[2])]


def open_bound(
    pi: np.ndarray,
    items: np.ndarray,
    ok: np.ndarray,
    duration: np.ndarray,
    load: np.ndarray,
    mem: np.ndarray,
    chain: np.ndarray,
    slo: np.ndarray,
    level: int,
    switch: np.ndarray,
    cells: int | None = None,
    deadline: Deadline | None = None,
) -> float:
    """An upper bound on the most ``Σ π`` of the case model's groups (without the groups of one
    member found outside it) that no CP-SAT proof needs: :func:`.case_dp.case_dp` on the
    undominated combinations, with the model's universal pools and largest switch, at
    ``cells`` per pool (:data:`.case_dp.CELLS` if None); past ``deadline``, the sum of the
    positive π (:func:`.case_dp.pair_bound`)."""
    from .case_dp import CELLS, case_dp

    if not len(items):
        return 0.0
    ok = undominated(ok, duration, load, mem, chain)
    s_bar = int(switch[items].max())
    uni = _universal(ok, load)
    return case_dp(pi, items, ok, load, slo, int(level), uni, s_bar, cells or CELLS, deadline)


def undominated(
    ok: np.ndarray, duration: np.ndarray, load: np.ndarray, mem: np.ndarray, chain: np.ndarray
) -> np.ndarray:
    """``ok`` without the combinations another admissible one of the same job dominates: no
    more time on any pool (with and without the switch), memory or step chain (and, among
    equals, the first kept). Every row of the case's model is monotone in these numbers, so a
    group keeps its Σ π with the dominating combination in place of the dominated one."""
    out = ok.copy()
    for i in range(ok.shape[0]):
        cs = np.flatnonzero(ok[i])
        if len(cs) < 2:
            continue
        v = np.concatenate([duration[i, cs], load[i, cs], mem[i, cs], chain[i, cs][:, None]], 1)
        le = (v[:, None, :] <= v[None, :, :]).all(axis=2)  # le[a, b]: a ≤ b everywhere
        first = np.arange(len(cs))[:, None] < np.arange(len(cs))[None, :]
        out[i, cs[(le & (~le.T | first)).any(axis=0)]] = False
    return out

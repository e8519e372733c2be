"""Exact pricing of one case of the group space R' (formulations/cosched.md, "R' and exact
pricing"): the most dual value ``Σ π_j`` a group with hosts ``h`` and cycle ``T ≤ ℓ`` can collect
from jobs whose SLO exceeds the level below, under R1, R2, R3' (C11's switches), R4 and R5, as
a small CP-SAT model.

:func:`case_bound` returns CP-SAT's proven upper bound on that value (an upper bound even when
stopped early: the bound, not the incumbent) and the best group found, so the Farley bound can
replace a case's surrogate knapsack value by it, and column generation can try the group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: π is scaled by this and rounded up for CP-SAT's integer objective (the bound stays above).
SCALE = 10_000


@dataclass(frozen=True)
class CaseBound:
    upper: float  # ≥ Σ_{j∈S} π_j for every group S of the case
    found: list[tuple[int, int]]  # the best group found: (job, combination index)
    value: float  # its Σ π


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
) -> CaseBound:
    """``items``: job indices; per item ``i`` (row ``i`` of the arrays): ``ok[i, c]`` the
    admissible combinations; ``duration[i, c, p]`` ms on pool ``p`` without switch, ``load``
    with the job's switch; ``mem`` MiB; ``chain`` the step (R5). ``room`` MiB per pool."""
    from ortools.sat.python import cp_model  # the solver is imported when first used

    P = duration.shape[2]
    m = cp_model.CpModel()
    T = m.new_int_var(0, int(level), "T")
    s_bar = int(switch[items].max()) if len(items) else 0
    n = len(items)
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    pool_d: list[list] = [[] for _ in range(P)]
    pool_l: list[list] = [[] for _ in range(P)]
    pool_u: list[list] = [[] for _ in range(P)]
    pool_m: list[list] = [[] for _ in range(P)]
    obj = []
    for i, j in enumerate(items):
        cs = [int(c) for c in np.flatnonzero(ok[i])]
        if not cs:
            continue
        xs = [m.new_bool_var("") for _ in cs]
        for c, v in zip(cs, xs, strict=True):
            x[i, c] = v
            # R5: the step fits 1 + σ cycles
            m.add(int(factor[j]) * T >= int(chain[i, c])).only_enforce_if(v)
            for p in range(P):
                if load[i, c, p] > 0:
                    pool_d[p].append(int(duration[i, c, p]) * v)
                    pool_l[p].append(int(load[i, c, p]) * v)
                    pool_u[p].append(v)
                if mem[i, c, p] > 0:
                    pool_m[p].append(int(mem[i, c, p]) * v)
        m.add_at_most_one(xs)
        if slo[j] < level:  # R4: the cycle is within every member's SLO
            m.add(T + (int(level) - int(slo[j])) * sum(xs) <= int(level))
        obj.append(int(np.ceil(pi[j] * SCALE)) * sum(xs))
    for p in range(P):
        if not pool_u[p]:
            continue
        # R3': a pool's phases fit the cycle; with two users or more (b = 1), every user's
        # switch too
        m.add(sum(pool_d[p]) <= T)
        b = m.new_bool_var("")
        m.add(sum(pool_u[p]) <= 1 + n * b)
        m.add(sum(pool_l[p]) <= T + s_bar * (1 - b))
        if pool_m[p]:
            m.add(sum(pool_m[p]) <= int(room[p]))  # R2
    m.maximize(sum(obj))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, seconds)
    solver.parameters.num_workers = 1
    status = solver.solve(m)
    total = float(sum(pi[j] for j in items))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return CaseBound(total, [], 0.0)  # not decided: every item's π
    found = [(int(items[i]), c) for (i, c), v in x.items() if solver.value(v)]
    value = float(sum(pi[j] for j, _ in found))
    upper = min(total, solver.best_objective_bound / SCALE + 1e-9)
    return CaseBound(upper, found, value)

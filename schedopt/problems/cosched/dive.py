"""The restricted master's plan, cheap and steady (formulations/cosched.md, "Diving and the
ladder of sub-MIPs").

At 4,096 GPUs x 200 jobs the master MIP over 1,500 scheduled groups spends its seconds in the
root's cut rounds: stopped at 6 s it answered the first point HiGHS found (4,327 $/h) where
given 10 s its sub-MIP found 3,920 on the same columns (#17). :func:`dive` fixes the groups the
LP already takes and re-solves (a plan in a few LPs); :func:`ladder` solves sub-MIPs over the
groups of least reduced cost, more of them each step, each from the best plan so far. Both pick
columns of the master only, so every plan is explicitly scheduled; nothing here touches a bound.
"""

from __future__ import annotations

import math

import numpy as np

from schedopt.core.stopping import Deadline

from .colgen import Column, Master
from .data import ModelData

#: The dive fixes every open column the LP sets at least this high (above ½: two columns that
#: share a job cannot both be, C1's cover row sums to 1, so the fixed columns are disjoint).
DIVE_FIX = 0.6
#: An LP value this close to 0 or 1 is taken as integral.
TOL = 1e-6
#: The ladder's first sub-MIP holds this many columns of least reduced cost (and the
#: incumbent's); each next step this many times more, until a step is not proven optimal.
LADDER_FIRST, LADDER_GROWTH = 300, 1.3
#: Deterministic mode: each MIP stops after this many branch-and-bound nodes (HiGHS
#: ``mip_max_nodes``; it has no deterministic time limit) with HiGHS's ``random_seed``.
DETERMINISTIC_MIP_NODES = 200


def cost(data: ModelData, plan: list[Column]) -> float:
    return sum(c.cost(data) for c in plan)


def integer(
    master: Master, seconds: float, start: list[Column] | None = None, seed: int | None = None
) -> tuple[list[Column] | None, bool]:
    """The restricted master MIP over the scheduled groups (the artificials stay out), started
    from ``start`` (groups, all columns of the master) as its incumbent, and whether it was
    proven optimal over them. ``seed`` given (deterministic mode): at most
    DETERMINISTIC_MIP_NODES nodes, that random seed, and ``seconds`` only a runaway cap.
    Turns ``master`` into a MIP: solve its LP before, not after."""
    import highspy  # the solver is imported when first used (#16 item 11)

    h = master.h
    n_art = master.n
    k = len(master.columns)
    h.changeColsBounds(n_art, np.arange(n_art, dtype=np.int32), np.zeros(n_art), np.zeros(n_art))
    idx = np.arange(n_art, n_art + k, dtype=np.int32)
    h.changeColsIntegrality(k, idx, np.array([highspy.HighsVarType.kInteger] * k))
    where = {master.key(c): i for i, c in enumerate(master.columns)}
    at = [where.get(master.key(c)) for c in start or ()]
    if at and None not in at:
        # HiGHS checks the point and keeps it as its first incumbent when feasible
        value = np.zeros(n_art + k)
        value[[n_art + i for i in at if i is not None]] = 1.0
        sol = highspy.HighsSolution()
        sol.col_value = value.tolist()
        sol.value_valid = True
        h.setSolution(sol)
    h.setOptionValue("time_limit", max(0.05, seconds))
    if seed is not None:
        h.setOptionValue("mip_max_nodes", DETERMINISTIC_MIP_NODES)
        h.setOptionValue("random_seed", seed)
    h.run()
    proven = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    if h.getInfo().primal_solution_status != 2:
        return None, False
    v = np.asarray(h.getSolution().col_value)[n_art:]
    return [c for c, x in zip(master.columns, v, strict=True) if x > 0.5], proven


def dive(master: Master, deadline: Deadline) -> list[Column] | None:
    """A plan of the master's columns by diving on its LP: fix every open column at
    :data:`DIVE_FIX` or more (else the largest one) to 1, solve again, until the LP is
    integral. None when the LP needs an artificial column (the fixed groups leave some job no
    room in the pools) or the deadline passes. At most one LP a column; the bounds are put
    back before it returns."""
    n, h = master.n, master.h
    fixed: list[int] = []
    try:
        while not deadline.expired():
            if master.solve(deadline.remaining()) is None:
                return None
            x = np.asarray(h.getSolution().col_value)
            if x[:n].max(initial=0.0) > TOL:
                return None
            v = x[n:]
            is_open = v > TOL
            is_open[fixed] = False
            if not (v[is_open] < 1 - TOL).any():
                return [c for c, val in zip(master.columns, v, strict=True) if val > 0.5]
            fix = np.flatnonzero(is_open & (v >= DIVE_FIX))
            if not len(fix):
                fix = np.array([int(np.argmax(np.where(is_open, v, -1.0)))])
            fixed += [int(i) for i in fix]
            m = len(fix)
            h.changeColsBounds(m, (n + fix).astype(np.int32), np.ones(m), np.ones(m))
        return None
    finally:
        if fixed:
            at = n + np.array(fixed, dtype=np.int32)
            inf = np.full(len(fixed), h.getInfinity())
            h.changeColsBounds(len(fixed), at, np.zeros(len(fixed)), inf)


def ladder(
    master: Master, plan: list[Column], deadline: Deadline, seed: int | None = None
) -> tuple[list[Column], int]:
    """``plan`` (columns of ``master``) or a cheaper plan from sub-MIPs over the columns of
    least reduced cost at the master LP's duals (and ``plan``'s): :data:`LADDER_FIRST` of them,
    then :data:`LADDER_GROWTH` times more per step, each from the best plan so far, until a
    step is not proven optimal over its columns (its time, or its node budget with ``seed``),
    the deadline, or a step over every column. A plan over fewer columns is a plan over all.
    Also the number of sub-MIPs run."""
    data = master.data
    solved = master.solve(deadline.remaining())
    if solved is None:
        return plan, 0
    _, pi, y = solved
    reduced = np.array(
        [
            c.cost(data) - sum(pi[j] for j, _ in c.members) - float(np.dot(y, c.hosts))
            for c in master.columns
        ]
    )
    order = np.argsort(reduced, kind="stable")
    best, size, steps = plan, LADDER_FIRST, 0
    while not deadline.expired():
        steps += 1
        small = Master.of(data, [*best, *(master.columns[int(i)] for i in order[:size])])
        found, proven = integer(small, deadline.remaining(), best, seed)
        if found is not None and cost(data, found) < cost(data, best) - 1e-9:
            best = found
        if not proven or size >= len(order):
            break
        size = math.ceil(size * LADDER_GROWTH)
    return best, steps

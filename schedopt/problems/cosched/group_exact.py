"""One group's periodic schedule, exactly: C8, C9, C11 and C12 for fixed members and options
(formulations/cosched.md, "Groups with their schedule"), as a small CP-SAT model.

:func:`schedule_exact` answers a :class:`~.schedule.Planned` (the shortest cycle found, valid:
the validator checks it with the rest of the plan), ``False`` when CP-SAT proves that no cycle
within the members' smallest SLO exists, or ``None`` when the time ran out first. The
heuristic scheduler (:func:`.schedule.schedule_group`) samples cycles and orders, so it can miss
a group that has a schedule; this one cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .schedule import Member, Planned, cross, cycle_window


def schedule_exact(
    members: Sequence[Member], seconds: float, seed: int = 0, work: float | None = None
) -> Planned | Literal[False] | None:
    """The members' periodic schedule of least cycle (C8, C9, C11, C12 with the options
    fixed); False: proven none within the smallest SLO; None: not decided in ``seconds`` (or
    in ``work`` deterministic seconds when given: reproducible, ``seconds`` a runaway cap)."""
    if not members:
        return None
    lo, hi = cycle_window(members)
    if lo > hi:
        return False
    from ortools.sat.python import cp_model  # the solver is imported when first used

    from schedopt.backends.cpsat import new_solver, solve  # SIGINT left to Python

    m = cp_model.CpModel()
    T = m.new_int_var(lo, hi, "T")
    starts: dict[int, list] = {}
    phases = []  # (job, phase index, start var, duration, pool)
    for job, opts in members:
        top = (2 + job.sigma) * hi
        a = [m.new_int_var(0, top, f"a{job.index}_{k}") for k in range(len(opts))]
        starts[job.index] = a
        m.add(a[0] <= T - 1)  # C9: the step's origin lies in the first cycle
        for k in range(len(opts) - 1):
            m.add(a[k + 1] >= a[k] + opts[k].duration)  # C8
        sync = job.sync_ms if cross(job, opts) else 0
        m.add(a[0] + (1 + job.sigma) * T >= a[-1] + opts[-1].duration + sync)  # C9
        for k, o in enumerate(opts):
            phases.append((job, k, a[k], o.duration, o.pool))
    for i, (ja, _, aa, da, pa) in enumerate(phases):
        for jb, _, ab, db, pb in phases[i + 1 :]:
            if pa != pb:
                continue
            other = ja.index != jb.index
            sw_ab = jb.switch if other else 0  # switch into β's job
            sw_ba = ja.switch if other else 0
            A = 2 + max(ja.sigma, jb.sigma)
            picks = []
            for q in range(1 - A, A + 1):  # C11: β's occurrence q cycles on follows α
                e = m.new_bool_var("")
                m.add(ab + q * T >= aa + da + sw_ab).only_enforce_if(e)
                m.add(aa + T >= ab + q * T + db + sw_ba).only_enforce_if(e)
                picks.append(e)
            m.add_bool_or(picks)
    m.minimize(T)
    solver = new_solver()
    solver.parameters.max_time_in_seconds = max(0.01, seconds)
    if work is not None:
        solver.parameters.max_deterministic_time = work
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    status = solve(solver, m)
    if status == cp_model.INFEASIBLE:
        return False
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return Planned(
        int(solver.value(T)),
        {j: [int(solver.value(v)) for v in a] for j, a in starts.items()},
    )

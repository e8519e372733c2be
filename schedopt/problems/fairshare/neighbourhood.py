"""A neighbourhood of a plan as a round of its own, and its MILP (formulations/fairshare.md,
"Decomposition", the join's L2 repair).

The jobs of the neighbourhood ``N`` are re-decided on what the jobs outside it leave: the hosts
with the GPUs they leave free, and every unit's accounts with the GPUs its jobs outside ``N``
get added to ``U_v`` (``U'_v = U_v + L·g_v,out``), so that ``(U'_v + L·g_v,N) / D'_v`` is the
unit's share on the whole round. A unit with no job in ``N`` keeps its share and is not
counted there. The MILP is the model of model.py over these rows (``lp_rows.part_lp``, the
same rows as ``build_model``, integrality put back), with ``t ≥ t̂`` for L1: every counted
unit keeps at least the whole GPUs ``m_v(t̂)``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from schedopt.backends.highs_signals import SignalGuard
from schedopt.model.lp_bound import highs_of

from .data import ModelData
from .lp_rows import PartLp, part_lp
from .plan import Plan
from .subround import part_data
from .units import NotCounted

#: L2 is held at the plan's value less this fraction of it while L3 is minimised.
L2_HOLD = 1e-9
#: What a second of L3 is worth in the L2 neighbourhoods' objective, as a tie-break (the
#: plan is kept only if its L2 rose; on 4,096 GPUs a repair that raised L2 by 3.3 raised L3
#: by 1,800 s without it, by 470 s with it).
TIE_BREAK = 1e-7
#: Relative slack of t's lower bound t̂ (HiGHS's tolerances; the whole plan's L1 is checked
#: again exactly before a neighbourhood's answer is kept).
T_SLACK = 1e-9

#: A job's decision: its option index in the neighbourhood's data (None: idle) and whether
#: it keeps its previous allocation.
Decision = tuple[int | None, bool]


def residual(state: Plan, chosen: list[int]) -> ModelData:
    """The round over ``chosen`` (job indices of ``state.data``) alone (module docstring)."""
    data = state.data
    free = dict(state.board.free)
    for i in chosen:
        for h, n in state.hosts[i].items():
            free[h] += n
    left = {h: n for h, n in free.items() if n > 0 and data.host_type[h] is not None}
    sub = part_data(dataclasses.replace(data, free=left), chosen, 0, dict.fromkeys(left, 0))
    mine: dict[int, list[int]] = {}
    tenant_jobs: dict[int, list[int]] = {}
    gpus_in: dict[int, int] = {}
    demand: dict[int, int] = {}
    for n, job in enumerate(sub.jobs):
        mine.setdefault(job.unit, []).append(n)
        tenant_jobs.setdefault(job.tenant, []).append(n)
        r = state.raw[chosen[n]]
        if r.option is not None:
            got = data.jobs[chosen[n]].options[r.option].n
            gpus_in[job.unit] = gpus_in.get(job.unit, 0) + got
        demand[job.unit] = demand.get(job.unit, 0) + max((o.n for o in job.options), default=0)
    units = []
    for v in data.units:
        outside = state.unit_gpus[v.index] - gpus_in.get(v.index, 0)
        reason = v.not_counted
        if reason is None and not demand.get(v.index):
            reason = NotCounted.NO_DEMAND  # its share does not change here
        units.append(
            dataclasses.replace(
                v,
                demand=demand.get(v.index, 0),
                used_s=v.used_s + data.round_s * outside,
                jobs=tuple(mine.get(v.index, ())),
                not_counted=reason,
            )
        )
    tenants = tuple(
        dataclasses.replace(t, guarantee=0, jobs=tuple(tenant_jobs.get(t.index, ())))
        for t in data.tenants
    )
    return dataclasses.replace(sub, units=tuple(units), tenants=tenants)


def solve(
    sub: ModelData,
    state: Plan,
    chosen: list[int],
    t_hat: float,
    seconds: float,
    l2: bool,
    abs_gap: float = 0.0,
    nodes: int | None = None,
) -> list[Decision] | None:
    """The neighbourhood's decisions by job, or None (no point in time): with ``l2`` max L2
    (L3 as a tie-break), else min L3 with L2 held at the plan's; from the plan (a MIP
    start), within ``seconds``; with ``l2``, done once its L2 is proven within ``abs_gap``
    of the neighbourhood's best (HiGHS's ``mip_abs_gap``). ``nodes`` (deterministic mode):
    HiGHS stops on that many branch-and-bound nodes, ``seconds`` only a runaway cap."""
    import highspy  # imported when first solved (start-up imports no solver)

    p = part_lp(sub)
    r = p.relaxation
    t_col = int(p.l1.cols[0])
    lb = r.lb.copy()
    lb[t_col] = max(0.0, t_hat - T_SLACK * max(1.0, t_hat))
    if lb[t_col] > r.ub[t_col]:
        return None
    n = len(r.c)
    integer = np.ones(n, dtype=bool)
    integer[t_col] = False
    h = highs_of(dataclasses.replace(r, lb=lb), integer)
    h.setOptionValue("mip_rel_gap", 0.0)
    if nodes is not None:
        h.setOptionValue("mip_max_nodes", nodes)
    if l2 and abs_gap > 0.0:
        h.setOptionValue("mip_abs_gap", abs_gap)
    stop_at = time.perf_counter() + seconds

    guard = SignalGuard()  # a Ctrl-C stops the search and reaches the caller
    h.cbMipInterrupt.subscribe(guard.stop_at(lambda: stop_at))
    start = _start(sub, state, chosen, p, t_col, lb[t_col])
    if l2:
        c = p.l2.objective(n, True) + TIE_BREAK * p.l3.objective(n, False)
    else:
        held = p.l2.value(start)
        h.addRow(
            held - L2_HOLD * max(1.0, abs(held)),
            highspy.kHighsInf,
            len(p.l2.cols),
            p.l2.cols.astype(np.int32),
            p.l2.coefs.astype(np.float64),
        )
        c = p.l3.objective(n, False)
    idx = np.arange(n, dtype=np.int32)
    h.changeColsCost(n, idx, -c)
    h.setSolution(n, idx, start)
    h.setOptionValue("time_limit", max(0.01, seconds))
    with guard.deferring():
        h.run()
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return None
    x = np.asarray(h.getSolution().col_value, dtype=np.float64)
    # (HiGHS 1.16 can hand back a start's columns with another point's objective: the whole
    # plan is checked again before it is kept)
    whole = np.abs(x - np.round(x)) <= 1e-6
    if not whole[integer].all():
        return None
    return _decisions(sub, p, x)


def _start(
    sub: ModelData, state: Plan, chosen: list[int], p: PartLp, t_col: int, t_lo: float
) -> np.ndarray:
    """The plan's point in the neighbourhood's columns (the MIP start)."""
    x = np.zeros(len(p.relaxation.c))
    for n, job in enumerate(sub.jobs):
        r = state.raw[chosen[n]]
        if r.option is None:
            continue
        o = state.data.jobs[chosen[n]].options[r.option]
        if o not in job.options:
            continue
        x[p.x_start[n] + job.options.index(o)] = 1.0
        if r.keep and p.k_col[n] >= 0:
            x[p.k_col[n]] = 1.0
    x[t_col] = t_lo
    # the chunks (single-host mode): as many as each host leaves after the jobs kept on it
    for c, (h, s) in enumerate(_chunk_keys(sub)):
        held = sum(m for j, m in sub.keep_hosts.get(h, []) if x[p.k_col[j]] > 0.5)
        x[t_col + 1 + c] = (sub.free[h] - held) // s
    return x


def _chunk_keys(sub: ModelData) -> list[tuple[str, int]]:
    """The chunk columns' (host, s), in ``lp_rows._c3``'s order."""
    if sub.multi_host:
        return []
    out: list[tuple[str, int]] = []
    hosts_of: dict[str, list[str]] = {}
    for h, g in sub.host_type.items():
        if g is not None:
            hosts_of.setdefault(g, []).append(h)
    types = set(sub.type_capacity) | {o.gpu_type for j in sub.jobs for o in j.options}
    for g, levels in sub.levels.items():
        if g not in types:
            continue
        for s in levels:
            if any(o.gpu_type == g and o.n >= s for j in sub.jobs for o in j.options):
                out += [(h, s) for h in hosts_of.get(g, []) if h in sub.keep_hosts]
    return out


def _decisions(sub: ModelData, p: PartLp, x: np.ndarray) -> list[Decision]:
    out: list[Decision] = []
    for n, job in enumerate(sub.jobs):
        opt = None
        for k in range(len(job.options)):
            if x[p.x_start[n] + k] > 0.5:
                opt = k
        keep = opt is not None and opt == job.prev_option and x[p.k_col[n]] > 0.5
        out.append((opt, keep))
    return out


__all__ = ["L2_HOLD", "Decision", "residual", "solve"]

"""Other jobs' moves beside the returns: an LP picks the neighbourhood of an L3 MILP
(formulations/fairshare.md, "Decomposition", the exchange neighbourhood).

After the return step (``l3_return.py``) the plan still restarts running jobs that the integer
minimum of L3 at its own L2 keeps: returning them needs other jobs to move (a job that has not
run taking another GPU type, a restarting job taking another option) so that each type's GPUs
and L2 still add up. The return step's knapsack has no such columns, and the L3
neighbourhoods of ``l2_repair.py`` (the restarting jobs of highest cost with the jobs on their
previous hosts) were not kept in any measured run. Here one LP over both kinds of column,

    max Σ s_c y_c  s.t.  Σ ΔL2_c y_c ≥ 0,  Σ Δn_cg y_c ≤ free_g (every type g),
                         g_v + Σ Δg_cv y_c ≥ m_v(t̂) (every counted unit),
                         Σ P_jh y_c ≤ f_h − K_h (every previous host h of a return),
                         Σ_{c of job j} y_c ≤ 1 (every job),  0 ≤ y ≤ 1,

(a return ``c`` of a restarting job ``j``: ``s_c`` the L3 it saves, as in the return step; a
move ``c`` of a job not kept and not placed as before to another of its options or to idle:
``s_c`` the host cost it saves, ``φ(ν_now − ν_new)``) says which jobs an exchange involves:
the jobs of the columns it uses, with the jobs sitting on the previous hosts of the returns it
uses, filled up by the jobs of the columns of least reduced cost. That set is then solved as an
L3 neighbourhood of the L2 repair (``l2_repair.improve_neighbourhood``: ``min L3`` with the
whole plan's L2 and L1 held, the model's own rows, the plan as the MIP start, kept only if the
whole plan gets better). The LP is a guide and nothing is claimed of it (it ignores the hosts
of moved jobs); the neighbourhood's claim is the L2 repair's. Measured on 4,096 GPUs × 5,000
jobs: after the return step's 1,612 s, the LP says 1,736 more, the neighbourhood of its 300
jobs keeps 188 s; the neighbourhood of the restarting jobs of highest cost keeps nothing.
Not with hard guarantees or a preemption cap (``decomp`` refuses both).
"""

from __future__ import annotations

import time
from collections.abc import Collection

import numpy as np

from schedopt.model.lp_bound import Relaxation, highs_of

from .l2_repair import COST_TOL, RepairStats, improve_neighbourhood
from .l3_return import Rows, step_model
from .plan import Plan
from .restore import restarting

#: Jobs in the neighbourhood (its MILP on 4,096 GPUs: 0.2 s, load 4).
EXCHANGE_JOBS = 300
#: Seconds per job of the round the LP and the neighbourhood need (measured on 4,096 GPUs ×
#: 5,000 jobs, load 4: LP built in 0.1 s, solved in 0.13 s, the MILP 0.19 s; at 16,384 GPUs
#: the LP alone took 1.8-2.3 s): the step is not started with less time than this.
EXCHANGE_S_PER_JOB = 1e-4
#: Seconds the step may take at most: EXCHANGE_MAX_S, or on large rounds EXCHANGE_MAX_X times
#: what it needs to start (at 16,384 GPUs × 20,000 jobs, 3 s: with the swap step done early,
#: 3-5 s of a 10 s limit were left unused, and the step took 2.3 s at load 4 and saved 815
#: more of L3, gap 0.88% -> 0.61%; benchmarks/RESULTS.md, 2026-12-06).
EXCHANGE_MAX_S = 0.8
EXCHANGE_MAX_X = 1.5
#: A column the LP uses (its value above this).
USED = 1e-9

#: A column: (job index, True for a return to the previous allocation, option or None).
Column = tuple[int, bool, int | None]


def fits(state: Plan, seconds: float) -> bool:
    """Whether the step is worth starting with ``seconds`` (EXCHANGE_S_PER_JOB)."""
    inst = state.data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None:
        return False
    return seconds >= EXCHANGE_S_PER_JOB * len(state.data.jobs)


def max_seconds(state: Plan) -> float:
    """The most seconds the step takes on this round (EXCHANGE_MAX_S, EXCHANGE_MAX_X)."""
    return max(EXCHANGE_MAX_S, EXCHANGE_MAX_X * EXCHANGE_S_PER_JOB * len(state.data.jobs))


def exchange(state: Plan, seconds: float, out: RepairStats) -> RepairStats:
    """The LP (module docstring), then its neighbourhood's MILP, within ``seconds``; the
    effect added to ``out`` (``out.seconds`` included)."""
    started = time.perf_counter()
    seconds = min(seconds, max_seconds(state))
    end = started + seconds
    if fits(state, seconds):
        chosen = neighbourhood(state, end)
        if chosen:
            improve_neighbourhood(state, chosen, end, False, out)
    out.seconds += time.perf_counter() - started
    return out


def neighbourhood(
    state: Plan, end: float, size: int = EXCHANGE_JOBS, jobs: Collection[int] | None = None
) -> list[int]:
    """The jobs the LP's exchange involves, filled up to ``size`` (module docstring); none
    if the LP is not solved before ``end`` or uses no column. With ``jobs``, the LP over
    those jobs' columns alone."""
    cols, model = columns(state, jobs)
    if not cols:
        return []
    n = len(cols)
    h = highs_of(model)
    h.setOptionValue("time_limit", max(0.01, end - time.perf_counter()))
    h.run()
    if str(h.getModelStatus()) != "HighsModelStatus.kOptimal":
        return []
    sol = h.getSolution()
    y = np.asarray(sol.col_value)
    used = np.flatnonzero(y > USED)
    if not len(used):
        return []
    data = state.data
    on_host: dict[str, list[int]] = {}
    for i, hosts in enumerate(state.hosts):
        if not state.raw[i].keep:
            for h_ in hosts:
                on_host.setdefault(h_, []).append(i)
    chosen: dict[int, None] = {}  # (in order, without repeats)

    def add(c: int) -> None:
        i, back, _ = cols[c]
        chosen[i] = None
        if back:
            for h_ in data.jobs[i].prev_hosts:
                chosen.update(dict.fromkeys(on_host.get(h_, ())))

    # the columns the LP uses, most of the L3 they save first
    for c in used[np.argsort(-(y[used] * model.c[used]), kind="stable")]:
        if len(chosen) >= size:
            break
        add(int(c))
    # (of ``min −sᵀy``: the columns at 0 that would cost least to bring in)
    cost = np.asarray(sol.col_dual)
    rest = np.setdiff1d(np.arange(n), used)
    for c in rest[np.argsort(cost[rest], kind="stable")]:
        if len(chosen) >= size:
            break
        add(int(c))
    return sorted(chosen)


def columns(state: Plan, jobs: Collection[int] | None = None) -> tuple[list[Column], Relaxation]:
    """The LP's columns and rows (module docstring); with ``jobs``, those jobs' alone."""
    data = state.data
    phi = data.frag_cost
    cols: list[Column] = []
    save: list[float] = []
    d_l2: list[float] = []
    d_gpus: list[dict[str, int]] = []  # GPUs of each type the column adds
    back_ = {j.index for j in restarting(state)}
    for job in data.jobs if jobs is None else (data.jobs[i] for i in jobs):
        r = state.raw[job.index]
        if r.keep or not job.options:
            continue
        now = None if r.option is None else job.options[r.option]
        if job.prev_option is not None and (r.option, state.hosts[job.index]) == (
            job.prev_option,
            job.prev_hosts,
        ):
            continue  # a running job placed as before (not kept) restarts if it moves
        now_hosts = now.extra_hosts if now else 0
        for k in [*range(len(job.options)), None]:
            if k == r.option:
                continue
            o = None if k is None else job.options[k]
            back = job.index in back_ and k == job.prev_option
            s = phi * (now_hosts - (o.extra_hosts if o else 0))
            if back:
                s += job.restart_cost
                if s <= COST_TOL:
                    continue
            add: dict[str, int] = {}
            if o is not None:
                add[o.gpu_type] = o.n
            if now is not None:
                add[now.gpu_type] = add.get(now.gpu_type, 0) - now.n
            cols.append((job.index, back, k))
            save.append(s)
            d_l2.append((o.eff if o else 0.0) - (now.eff if now else 0.0))
            d_gpus.append(add)
    if not cols:
        return [], Relaxation(*(np.zeros(0) for _ in range(8)))
    rows: Rows = []
    rows.append((0.0, {c: -v for c, v in enumerate(d_l2) if v != 0.0}))  # L2 does not fall
    by_type: dict[str, dict[int, float]] = {}
    by_unit: dict[int, dict[int, float]] = {}  # GPUs the unit loses
    by_host: dict[str, dict[int, float]] = {}
    by_job: dict[int, dict[int, float]] = {}
    for c, (i, back, _) in enumerate(cols):
        job = data.jobs[i]
        for g, m in d_gpus[c].items():
            if m:
                by_type.setdefault(g, {})[c] = float(m)
        loses = -sum(d_gpus[c].values())
        if loses:
            by_unit.setdefault(job.unit, {})[c] = float(loses)
        if back:
            for h, m in job.prev_hosts.items():
                by_host.setdefault(h, {})[c] = float(m)
        by_job.setdefault(i, {})[c] = 1.0
    one_each = [(1.0, coefs) for coefs in by_job.values() if len(coefs) > 1]  # a job's columns
    model = step_model(state, save, rows, by_type, by_unit, by_host, last=one_each)
    return cols, model


__all__ = ["EXCHANGE_JOBS", "exchange", "fits", "neighbourhood"]

"""Running jobs returned to their previous allocations as a set, at the plan's L1 and L2
(formulations/fairshare.md, "Decomposition", the return step).

A rounded plan restarts running jobs that could be kept: on 4,096 GPUs × 5,000 jobs the
integer minimum of L3 at the plan's own L2 keeps 33 more of them, mostly pairs that swapped
GPU types (a job that ran on H100 now on A100 and one that ran on A100 now on H100), each
pair worth a little less L2 than the plan, paid for by a few that return to a better option.
``restore.py`` takes one job at a time and only where L2 does not fall; this step chooses the
whole set at once by a small MILP over one binary per candidate,

    max Σ s_j y_j  s.t.  Σ ΔL2_j y_j ≥ 0,  Σ Δn_jg y_j ≤ free_g (every type g),
                         g_v + Σ Δg_jv y_j ≥ m_v(t̂) (every counted unit),
                         Σ P_jh y_j ≤ f_h − K_h (every previous host h),

``s_j`` the L3 it saves (``c_j`` less the host cost it adds), the other terms what its move
back changes in L2, in each type's GPUs, in its unit's GPUs and on its previous hosts. The
jobs chosen are then kept on their previous hosts, the jobs not kept that sit there are placed
again on their own options (best fit), and the whole plan is checked: kept only if its
minimum share is still at least t̂, its L2 did not fall (within ``L2_HOLD``) and its L3 fell;
otherwise it is put back as it was. So the plan gets lexicographically better or stays.
Not with hard guarantees or a preemption cap (``decomp`` refuses both).
"""

from __future__ import annotations

import time

import numpy as np

from schedopt.model.lp_bound import Relaxation, highs_of

from .l1_fix import need_gpus
from .l2_repair import COST_TOL, RepairStats
from .neighbourhood import L2_HOLD
from .plan import Plan
from .restore import restarting

#: Fewest seconds the MILP is started with.
MIN_S = 0.02
#: Times the choice is made again without a job that would not fit its previous hosts.
MAX_TRIES = 3


def return_running(state: Plan, seconds: float, out: RepairStats) -> RepairStats:
    """The return step (module docstring) within ``seconds``; its effect added to ``out``."""
    started = time.perf_counter()
    end = started + seconds
    data = state.data
    inst = data.instance
    if inst.guarantees_hard or inst.max_preemptions is not None:
        return out
    banned: set[int] = set()
    for _ in range(MAX_TRIES):
        if end - time.perf_counter() < MIN_S:
            break
        chosen = _choose(state, banned, end)
        if not chosen:
            break
        out.neighbourhoods += 1
        failed = _apply(state, chosen, out)
        if failed is None:
            break
        banned.add(failed)
    out.seconds += time.perf_counter() - started
    return out


def _choose(state: Plan, banned: set[int], end: float) -> list[int]:
    """The MILP of the module docstring: the candidates to return, or none."""
    data = state.data
    phi = data.frag_cost
    cand, save, d_l2 = [], [], []
    for job in restarting(state):
        if job.index in banned:
            continue
        r = state.raw[job.index]
        assert job.prev_option is not None
        p = job.options[job.prev_option]
        cur = None if r.option is None else job.options[r.option]
        s = job.restart_cost + phi * ((cur.extra_hosts if cur else 0) - p.extra_hosts)
        if s <= COST_TOL:
            continue
        cand.append(job.index)
        save.append(s)
        d_l2.append(p.eff - (cur.eff if cur else 0.0))
    if not cand:
        return []
    n = len(cand)
    rows: Rows = []
    rows.append((0.0, {c: -v for c, v in enumerate(d_l2) if v != 0.0}))  # L2 does not fall
    by_type: dict[str, dict[int, float]] = {}
    by_unit: dict[int, dict[int, float]] = {}  # GPUs the unit loses
    by_host: dict[str, dict[int, float]] = {}
    for c, i in enumerate(cand):
        job, r = data.jobs[i], state.raw[i]
        assert job.prev_option is not None
        p = job.options[job.prev_option]
        got = by_type.setdefault(p.gpu_type, {})
        got[c] = got.get(c, 0.0) + p.n
        loses = -p.n
        if r.option is not None:
            o = job.options[r.option]
            got = by_type.setdefault(o.gpu_type, {})
            got[c] = got.get(c, 0.0) - o.n
            loses += o.n
        if loses:
            by_unit.setdefault(job.unit, {})[c] = float(loses)
        for h, m in job.prev_hosts.items():
            by_host.setdefault(h, {})[c] = float(m)
    model = step_model(state, save, rows, by_type, by_unit, by_host)
    h = highs_of(model, np.ones(n, dtype=bool))
    h.setOptionValue("time_limit", max(MIN_S, end - time.perf_counter()))
    h.setOptionValue("mip_rel_gap", 0.0)
    # the LP first, then the MILP over the candidates the LP uses (the rest held at 0): at
    # 16,384 GPUs the MILP over all 4,900 candidates found nothing in 0.35 s (load 6)
    h.setOptionValue("solve_relaxation", True)
    h.run()
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return []
    y = np.asarray(h.getSolution().col_value)
    off = np.flatnonzero(y <= 1e-9).astype(np.int32)
    h.changeColsBounds(len(off), off, np.zeros(len(off)), np.zeros(len(off)))
    h.setOptionValue("solve_relaxation", False)
    h.setOptionValue("time_limit", max(MIN_S, end - time.perf_counter()))
    h.run()
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return []
    y = np.asarray(h.getSolution().col_value)
    return [cand[c] for c in range(n) if y[c] > 0.5]


Rows = list[tuple[float, dict[int, float]]]  # (upper bound, coefficients): "≤" rows


def step_model(
    state: Plan,
    save: list[float],
    rows: Rows,
    by_type: dict[str, dict[int, float]],
    by_unit: dict[int, dict[int, float]],
    by_host: dict[str, dict[int, float]],
    last: Rows | None = None,
) -> Relaxation:
    """``max Σ save·y`` over ``0 ≤ y ≤ 1`` with ``rows`` and the capacity rows of the return
    step and the exchange (module docstrings): each type's free GPUs (``by_type``: GPUs a
    column adds), each counted unit's ``m_v(t̂)`` (``by_unit``: GPUs it loses) and each
    previous host's ``f_h − K_h`` (``by_host``: GPUs a return takes there, a row only where
    they could exceed it), then the rows ``last``."""
    data = state.data
    rows = list(rows)
    for g, coefs in by_type.items():
        rows.append((float(state.board.type_free.get(g, 0)), coefs))
    need = need_gpus(data, data.min_share([float(g) for g in state.unit_gpus]))
    for v, coefs in by_unit.items():
        if data.units[v].not_counted is None and max(coefs.values()) > 0:
            rows.append((state.unit_gpus[v] - float(need[v]), coefs))
    kept_on = dict(data.free)  # f_h − K_h: the host's GPUs less those kept on it
    for i, r in enumerate(state.raw):
        if r.keep:
            for h, m in state.hosts[i].items():
                kept_on[h] -= m
    for h, coefs in by_host.items():
        if sum(coefs.values()) > kept_on[h]:
            rows.append((float(kept_on[h]), coefs))
    rows.extend(last or ())
    n = len(save)
    return Relaxation(
        c=np.asarray(save),
        starts=np.cumsum([0] + [len(coefs) for _, coefs in rows]),
        cols=np.fromiter((c for _, coefs in rows for c in coefs), dtype=np.int64),
        coefs=np.fromiter((v for _, coefs in rows for v in coefs.values()), dtype=np.float64),
        lo=np.full(len(rows), -np.inf),
        hi=np.array([ub for ub, _ in rows], dtype=np.float64),
        lb=np.zeros(n),
        ub=np.ones(n),
    )


def _apply(state: Plan, chosen: list[int], out: RepairStats) -> int | None:
    """The chosen jobs kept on their previous hosts, the jobs not kept there placed again on
    their options, kept only if better (counted in ``out``); None, or a chosen job whose
    hosts could not be freed (the plan as it was)."""
    data = state.data
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    mine = set(chosen)
    hosts = {h for i in chosen for h in data.jobs[i].prev_hosts}
    moved = [
        i
        for i, on in enumerate(state.hosts)
        if i not in mine and not state.raw[i].keep and hosts.intersection(on)
    ]
    touched = chosen + moved
    before = state.levels(touched)
    old = state.saved(touched)
    options = [state.raw[i].option for i in moved]
    for i in touched:
        state.unset(data.jobs[i])
    for i in chosen:
        if not state.keep(data.jobs[i]):
            state.put_back(touched, old)
            return i
    was = dict(zip(moved, old[len(chosen) :], strict=True))
    for i, o in sorted(zip(moved, options, strict=True), key=lambda m: -_gpus(state, *m)):
        if o is not None and not state.place(data.jobs[i], o):
            state.put_back(touched, old)
            # (the chosen job that took most of the hosts this one held)
            return max(chosen, key=lambda c: len(set(data.jobs[c].prev_hosts) & set(was[i][1])))
    after = state.levels(touched)
    tol = L2_HOLD * max(1.0, abs(before[0]))
    fair = data.min_share([float(g) for g in state.unit_gpus]) >= t_hat
    if fair and after[0] >= before[0] - tol and after[1] < before[1] - COST_TOL:
        out.improved += 1
        out.gained_l2 += after[0] - before[0]
        out.saved_l3 += before[1] - after[1]
        return None
    state.put_back(touched, old)
    return None


def _gpus(state: Plan, i: int, o: int | None) -> int:
    return 0 if o is None else state.data.jobs[i].options[o].n


__all__ = ["return_running"]

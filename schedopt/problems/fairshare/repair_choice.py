"""Which jobs a neighbourhood of the join's L2 repair (``l2_repair.py``) takes
(formulations/fairshare.md, "Decomposition", the L2 repair).

The L2 neighbourhoods follow B2L's multipliers (``μ_g`` per GPU of each type, ``ρ_v`` per
counted unit): a job's reduced profit on option ``o`` is ``π_jo = e_jo − (μ_g − ρ_v) n_o``, and
the jobs whose choice is furthest below their best (the shortfall ``max(0, max_o π_jo) −
π_j,now``: idle jobs that should run, jobs on the wrong option, jobs that cost more GPUs than
they are worth) are where the relaxation says the rounding lost L2; the jobs with the least
``|π|`` (those the relaxation is nearly indifferent about) fill the neighbourhood up. The L3
neighbourhoods are the running jobs that restart though they could be kept, with the jobs on
their previous hosts; after B3L (``l2_repair.repair_l3``) filled up by the least margin at
B3L's multipliers, else at B2L's.
"""

from __future__ import annotations

import numpy as np

from .l3_lagrangian import L3Dual
from .option_arrays import Arrays
from .plan import Plan

#: Shortfalls below this are noise.
LOSS_TOL = 1e-9


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


__all__ = ["l2_neighbourhood", "l3_neighbourhood", "l3_shortfalls", "losses"]

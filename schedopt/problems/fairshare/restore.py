"""Running jobs put back where they ran, when that costs neither fairness nor throughput
(formulations/fairshare.md, "Decomposition": the join's restore step).

A plan from rounded LPs restarts running jobs that could have stayed: on 4,096 GPUs × 5,000
jobs the MILP keeps L2 at least the plan's with 68,475 s of restarts where the plan has 80,582
(issue #17). Each move here keeps one running job ``j`` on its previous hosts, stopping the
jobs not kept that sit there (the cheapest in ``e`` first), and is made only if

- every counted unit that loses GPUs keeps a share of at least t̂, the plan's minimum share
  (L1 does not fall),
- the effective throughput does not fall (``e`` of ``j``'s previous option at least what
  ``j`` had plus what the stopped jobs had: L2 does not fall),
- L3 falls (``c_j`` saved, host costs counted),
- and no tenant falls below a hard guarantee (C5). Only jobs not kept are stopped and ``j``
  is kept, so no running job is added to the preempted ones (C6).

So the plan gets lexicographically better or stays; the GPUs freed are water-filled after.
"""

from __future__ import annotations

from schedopt.core.stopping import Deadline

from .data import JobData, Option
from .plan import Plan

#: Slack on the throughput test (sums of e in another order).
EFF_TOL = 1e-12


def restarting(state: Plan) -> list[JobData]:
    """The running jobs the plan restarts that could be kept where they ran: keepable, with a
    restart cost, not kept, and not placed as before (placed as before without the flag, a
    job is not restarted: there is nothing to save)."""
    return [
        j
        for j in state.data.jobs
        if j.keepable
        and j.restart_cost > 0
        and not state.raw[j.index].keep
        and not (
            state.raw[j.index].option == j.prev_option and state.hosts[j.index] == j.prev_hosts
        )
    ]


def restore_running(state: Plan, stop: Deadline) -> set[int]:
    """Keep running jobs on their previous hosts where the tests above pass (highest restart
    cost first) until ``stop``; the units of the jobs kept or stopped (whose jobs may take
    the GPUs freed)."""
    data = state.data
    t_hat = data.min_share([float(g) for g in state.unit_gpus])
    on_host: dict[str, set[int]] = {}
    for job in data.jobs:
        for h in state.hosts[job.index]:
            on_host.setdefault(h, set()).add(job.index)
    candidates = restarting(state)
    candidates.sort(key=lambda j: (-j.restart_cost, j.index))
    touched: set[int] = set()
    for job in candidates:
        if stop.expired():
            break
        assert job.prev_option is not None
        # what the stopped jobs' e may add up to before L2 would fall (most fail here)
        margin = job.options[job.prev_option].eff - _eff(state, job.index) + EFF_TOL
        if margin < 0.0:
            continue
        stopped = _to_stop(state, job, on_host, margin)
        if stopped is None or not _worth_it(state, job, stopped, t_hat):
            continue
        for i in [job.index, *stopped]:
            for h in state.hosts[i]:
                on_host[h].discard(i)
            state.unset(data.jobs[i])
            touched.add(data.jobs[i].unit)
        if not state.keep(job):  # the tests above make room: a failure is a bug
            raise RuntimeError(f"restore: job {job.id!r} does not fit its previous hosts")
        for h in job.prev_hosts:
            on_host.setdefault(h, set()).add(job.index)
    return touched


def _to_stop(
    state: Plan, job: JobData, on_host: dict[str, set[int]], margin: float
) -> list[int] | None:
    """The jobs (not kept) to stop so that ``job`` fits its previous hosts, or None (also when
    their ``e`` would pass ``margin``)."""
    freed: dict[str, int] = dict(state.hosts[job.index])  # what the job itself gives back
    stopped: list[int] = []
    lost = 0.0
    for h, n in job.prev_hosts.items():
        free = state.board.free[h] + freed.get(h, 0)
        if free >= n:
            continue
        others = [i for i in on_host.get(h, ()) if i != job.index and i not in stopped]
        others = [i for i in others if not state.raw[i].keep]
        others.sort(key=lambda i: (_eff(state, i), i))
        for i in others:
            if free >= n:
                break
            lost += _eff(state, i)
            if lost > margin:
                return None
            stopped.append(i)
            for hh, m in state.hosts[i].items():
                freed[hh] = freed.get(hh, 0) + m
            free = state.board.free[h] + freed.get(h, 0)
        if free < n:
            return None
    # a job stopped for a later host may have freed an earlier one: all hold now
    if any(state.board.free[h] + freed.get(h, 0) < n for h, n in job.prev_hosts.items()):
        return None
    return stopped


def _eff(state: Plan, i: int) -> float:
    option = _option(state, i)
    return 0.0 if option is None else option.eff


def _worth_it(state: Plan, job: JobData, stopped: list[int], t_hat: float) -> bool:
    """L1 and L2 do not fall, L3 falls (module docstring)."""
    data = state.data
    assert job.prev_option is not None
    prev = job.options[job.prev_option]
    r = state.raw[job.index]
    now = None if r.option is None else job.options[r.option]
    if prev.eff + EFF_TOL < (now.eff if now else 0.0) + sum(_eff(state, i) for i in stopped):
        return False
    delta: dict[int, int] = {job.unit: prev.n - (now.n if now else 0)}
    tenants: dict[int, int] = {job.tenant: prev.n - (now.n if now else 0)}
    extra = prev.extra_hosts - (now.extra_hosts if now else 0)
    for i in stopped:
        option = _option(state, i)
        assert option is not None  # only running jobs are stopped
        other = data.jobs[i]
        delta[other.unit] = delta.get(other.unit, 0) - option.n
        tenants[other.tenant] = tenants.get(other.tenant, 0) - option.n
        extra -= option.extra_hosts
    for v, d in delta.items():
        unit = data.units[v]
        if d < 0 and unit.included and unit.share(state.unit_gpus[v] + d, data.round_s) < t_hat:
            return False
    for u, d in tenants.items():  # C5, hard guarantees (never with decomp, which refuses them)
        if d < 0 and state.tenant_gpus[u] + d < data.tenants[u].guarantee:
            return False
    return data.frag_cost * extra - job.restart_cost < 0.0


def _option(state: Plan, i: int) -> Option | None:
    r = state.raw[i]
    return None if r.option is None else state.data.jobs[i].options[r.option]


__all__ = ["restore_running"]

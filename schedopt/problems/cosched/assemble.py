"""Raw decisions (groups, options, starts) ↔ a :class:`CoschedSolution`.

Shared by the exact methods (through the codec) and the heuristics: a group holds host
*counts* per pool, and the hosts themselves are numbered ``pool/i`` in group order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .instance import CoschedInstance
from .solution import CoschedSolution, Group, JobPlan, PhasePlan


@dataclass
class RawGroup:
    members: list[int]  # job indices
    hosts: list[int]  # per pool (instance order)
    cycle: int  # ms


@dataclass
class Raw:
    groups: list[RawGroup] = field(default_factory=list)
    #: job index → the instance's option index per phase, and each phase's step-0 start (ms).
    option: dict[int, list[int]] = field(default_factory=dict)
    start: dict[int, list[int]] = field(default_factory=dict)


def assemble(inst: CoschedInstance, raw: Raw) -> CoschedSolution:
    used = [0] * len(inst.pools)
    groups, plans = [], []
    group_of: dict[int, str] = {}
    for n, rg in enumerate(sorted(raw.groups, key=lambda g: min(g.members))):
        gid = f"g{n}"
        hosts = []
        for p, count in enumerate(rg.hosts):
            hosts += [f"{inst.pools[p].name}/{used[p] + i}" for i in range(count)]
            used[p] += count
        members = sorted(rg.members)
        groups.append(
            Group(
                id=gid,
                hosts=tuple(hosts),
                members=tuple(inst.jobs[j].id for j in members),
                cycle_ms=rg.cycle,
            )
        )
        for j in members:
            group_of[j] = gid
    for j, job in enumerate(inst.jobs):
        plans.append(
            JobPlan(
                job_id=job.id,
                group=group_of[j],
                phases=tuple(
                    PhasePlan(option=o, start_ms=s)
                    for o, s in zip(raw.option[j], raw.start[j], strict=True)
                ),
            )
        )
    return CoschedSolution(groups=tuple(groups), plans=tuple(plans))


def raw_from_solution(inst: CoschedInstance, sol: CoschedSolution) -> Raw | None:
    """The raw decisions of a solution (None if it does not even name the instance's jobs)."""
    index = {j.id: i for i, j in enumerate(inst.jobs)}
    pools = {p.name: i for i, p in enumerate(inst.pools)}
    raw = Raw()
    try:
        for g in sol.groups:
            if not g.members:
                continue
            counts = [0] * len(inst.pools)
            for h in set(g.hosts):
                counts[pools[h.rpartition("/")[0]]] += 1
            raw.groups.append(RawGroup([index[m] for m in g.members], counts, g.cycle_ms))
        for plan in sol.plans:
            j = index[plan.job_id]
            raw.option[j] = [pp.option for pp in plan.phases]
            raw.start[j] = [pp.start_ms for pp in plan.phases]
    except KeyError:
        return None
    if set(raw.option) != set(range(len(inst.jobs))):
        return None
    # A hint is caller input: a plan with the wrong number of phases or a job in no group
    # listing it is no point of the model (encode would fail on it), not an error.
    if any(len(raw.option[j]) != len(job.phases) for j, job in enumerate(inst.jobs)):
        return None
    if {j for rg in raw.groups for j in rg.members} != set(raw.option):
        return None
    return raw

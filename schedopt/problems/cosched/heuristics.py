"""RollMux's two baselines and a packing heuristic with local search (formulations/cosched.md).

- ``disaggregated``: every job its own group, its phases spread over as many pool types as
  they allow (rollout on H20, train on H800, environments on CPU), on the cheapest such options
  whose schedule meets its SLO alone (RollMux's "plain disaggregation").
- ``colocated``: every job its own group with its phases on as few pool types as possible (all
  on one pool where every phase allows it), time-sharing the same devices.
- ``packing``: complementary jobs (rollout-heavy with train-heavy) first-fit into shared
  groups while residency and SLOs hold, then a local search over job moves and cheaper options.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome, Runner
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .assemble import Raw, RawGroup, assemble
from .data import JobData, ModelData, OptionData, aggregate_bound, build_data, robust
from .instance import CoschedInstance
from .schedule import Member, Planned, group_cost, host_counts, schedule_group
from .solution import CoschedSolution


@dataclass(frozen=True)
class BaselineParams:
    """``max_combinations``: option combinations tried per job, cheapest first."""

    max_combinations: int = 256

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {"max_combinations": (8, 4096)}


@dataclass(frozen=True)
class PackingParams:
    """``complementary`` 1 pairs rollout-heavy with train-heavy jobs (else largest first);
    ``best_fit`` 1 joins the group saving most (else the first that saves); local search runs
    ``max_rounds`` passes over the jobs, trying ``options_per_job`` cheaper combinations."""

    complementary: int = 1
    best_fit: int = 1
    max_rounds: int = 4
    options_per_job: int = 8
    max_combinations: int = 256

    SPACE: ClassVar[dict[str, tuple[float, float]]] = {
        "complementary": (0, 1),
        "best_fit": (0, 1),
        "max_rounds": (0, 20),
        "options_per_job": (1, 64),
        "max_combinations": (8, 4096),
    }


@dataclass
class Built:
    members: list[Member]
    hosts: list[int]
    planned: Planned

    def cost(self, data: ModelData) -> float:
        return group_cost(data, self.hosts)


#: A heuristic's search on data already built (:func:`timed` makes it a method).
Search = Callable[[CoschedInstance, ModelData, SolveOptions, Deadline], Outcome]


def heuristic_data(inst: CoschedInstance) -> ModelData:
    """The data the heuristics plan with: under C13 every option lasts its longest scenario
    (``data.robust``), so their timetables hold in every scenario (longer intervals keep every
    rule of the shorter ones)."""
    data = build_data(inst)
    if not data.scenarios:
        return data
    jobs = tuple(
        dataclasses.replace(
            j,
            phases=tuple(
                tuple(dataclasses.replace(o, duration=robust(o)) for o in opts) for opts in j.phases
            ),
        )
        for j in data.jobs
    )
    return dataclasses.replace(data, jobs=jobs)


def combos(
    data: ModelData, job: JobData, limit: int, mode: str = "any"
) -> list[tuple[OptionData, ...]]:
    """The job's option combinations, cheapest alone first (then shortest); ``mode``
    ``fewest``/``most``: only those on the fewest/most pool types (co-located/disaggregated)."""
    if any(not opts for opts in job.phases):
        return []
    every = itertools.islice(itertools.product(*job.phases), max(1, limit) * 8)
    out = list(every)
    if mode != "any":
        spread = [len({o.pool for o in c}) for c in out]
        keep = min(spread) if mode == "fewest" else max(spread)
        out = [c for c, n in zip(out, spread, strict=True) if n == keep]

    def key(c: tuple[OptionData, ...]) -> tuple[float, int]:
        hosts = host_counts(data, [(job, c)])
        cost = float("inf") if hosts is None else group_cost(data, hosts)
        return cost, sum(o.duration for o in c)

    return sorted(out, key=key)[: max(1, limit)]


def build(data: ModelData, members: list[Member], deadline: Deadline | None) -> Built | None:
    hosts = host_counts(data, members)
    if hosts is None or any(n > data.hosts[p] for p, n in enumerate(hosts)):
        return None
    planned = schedule_group(members, deadline)
    return None if planned is None else Built(members, hosts, planned)


def alone(
    data: ModelData, job: JobData, limit: int, deadline: Deadline, mode: str = "any"
) -> Built | None:
    for c in combos(data, job, limit, mode):
        if deadline.expired():
            return None
        b = build(data, [(job, c)], deadline)
        if b is not None:
            return b
    return None


def to_raw(groups: Sequence[Built]) -> Raw:
    raw = Raw()
    for b in groups:
        raw.groups.append(RawGroup([j.index for j, _ in b.members], list(b.hosts), b.planned.cycle))
        for job, opts in b.members:
            raw.option[job.index] = [o.index for o in opts]
            raw.start[job.index] = list(b.planned.starts[job.index])
    return raw


def fits_cluster(data: ModelData, groups: Sequence[Built]) -> bool:
    return all(sum(b.hosts[p] for b in groups) <= data.hosts[p] for p in range(len(data.pools)))


def finish(inst: CoschedInstance, data: ModelData, groups: list[Built] | None, why: str) -> Outcome:
    if groups is None or not fits_cluster(data, groups):
        return Outcome(Status.NO_SOLUTION, explanation=why)
    # The bound comes from the planning durations, not the heuristics' robust ones: under C13 a
    # plan may miss an option's longest scenario, so a bound on those would overshoot the optimum.
    return Outcome(
        Status.FEASIBLE,
        solution=assemble(inst, to_raw(groups)),
        bound=aggregate_bound(build_data(inst)),
    )


def _none_alone(data: ModelData, job: JobData) -> str:
    """What a heuristic that found no plan for ``job`` alone knows: not that none exists (its
    option combinations and cycle times are a sample, and under C13 it plans every option at
    its longest scenario, where the model may miss ε of them)."""
    robust = " at every option's longest scenario" if data.scenarios else ""
    return f"the heuristic found no plan meeting {job.id!r}'s SLO alone{robust}"


def separate(
    data: ModelData, limit: int, deadline: Deadline, mode: str
) -> tuple[list[Built] | None, str]:
    groups = []
    for job in data.jobs:
        b = alone(data, job, limit, deadline, mode)
        if b is None:
            return None, "out of time" if deadline.expired() else _none_alone(data, job)
        groups.append(b)
    if not fits_cluster(data, groups):
        return None, "one group per job needs more hosts than the pools have"
    return groups, ""


def baselines(inst: CoschedInstance, data: ModelData, deadline: Deadline) -> list[CoschedSolution]:
    """The plans of RollMux's two baselines (disaggregated, colocated: each job alone, one
    pass over the jobs each), for a method that keeps them as floors."""
    out = []
    for mode in ("most", "fewest"):
        groups, _ = separate(data, BaselineParams.max_combinations, deadline, mode)
        if groups is not None:
            out.append(assemble(inst, to_raw(groups)))
    return out


def timed(search: Search) -> Runner:
    """A heuristic as a method: its data built first (``build_s``), then ``search`` on it
    (``solve_s``), both measured."""

    def run(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        started = time.perf_counter()
        data = heuristic_data(inst)
        built = time.perf_counter()
        outcome = search(inst, data, options, deadline)
        return dataclasses.replace(
            outcome, build_s=built - started, solve_s=time.perf_counter() - built
        )

    return run


def _disaggregated(
    inst: CoschedInstance, data: ModelData, options: SolveOptions, deadline: Deadline
) -> Outcome:
    params = BaselineParams(**options.params)
    groups, why = separate(data, int(params.max_combinations), deadline, "most")
    return finish(inst, data, groups, why)


def _colocated(
    inst: CoschedInstance, data: ModelData, options: SolveOptions, deadline: Deadline
) -> Outcome:
    params = BaselineParams(**options.params)
    groups, why = separate(data, int(params.max_combinations), deadline, "fewest")
    return finish(inst, data, groups, why)


def _rollout_share(m: Member) -> float:
    _, opts = m
    return opts[0].duration / sum(o.duration for o in opts)


def _order(singles: list[Built], complementary: bool) -> list[Built]:
    if not complementary:
        return sorted(singles, key=lambda b: -b.planned.cycle)
    by_share = sorted(singles, key=lambda b: -_rollout_share(b.members[0]))
    out = []
    while by_share:  # alternate the most rollout-heavy and the most train-heavy
        out.append(by_share.pop(0))
        if by_share:
            out.append(by_share.pop())
    return out


def _packing(
    inst: CoschedInstance, data: ModelData, options: SolveOptions, deadline: Deadline
) -> Outcome:
    params = PackingParams(**options.params)
    limit = int(params.max_combinations)
    # Start from plain disaggregation (RollMux): rollout on the inference pool, train on the
    # training pool, so that jobs complement each other once they share a group; a job whose
    # phases cannot spread starts from its cheapest plan alone.
    singles: list[Built] = []
    for job in data.jobs:
        b = alone(data, job, limit, deadline, "most") or alone(data, job, limit, deadline)
        if b is None:
            why = "out of time" if deadline.expired() else _none_alone(data, job)
            return Outcome(Status.NO_SOLUTION, explanation=why)
        singles.append(b)
    spread = {b.members[0][0].index: b.members[0][1] for b in singles}
    groups: list[Built] = []
    for single in _order(singles, bool(params.complementary)):
        job = single.members[0][0]
        tries = [single.members[0][1]]
        cheapest = alone(data, job, limit, deadline)
        if cheapest is not None and cheapest.members[0][1] != tries[0]:
            tries.append(cheapest.members[0][1])
        best, best_saving = None, 1e-9
        for i, g in enumerate(groups):
            # the group as it is, and with its members back on their spread plans (a member
            # alone on its cheapest, co-located plan leaves no bubble to fill)
            spread_g = [(j, spread[j.index]) for j, _ in g.members]
            bases = [g.members] if spread_g == g.members else [g.members, spread_g]
            for base, c in itertools.product(bases, tries):
                if deadline.expired():
                    break
                merged = build(data, [*base, (job, c)], deadline)
                if merged is None:
                    continue
                saving = g.cost(data) + single.cost(data) - merged.cost(data)
                if saving > best_saving:
                    best, best_saving = (i, merged), saving
            if best is not None and not params.best_fit:
                break
        if best is None:
            groups.append(cheapest if cheapest is not None else single)
        else:
            groups[best[0]] = best[1]
    groups = repair(data, groups, deadline)
    groups = local_search(data, groups, params, deadline)
    return finish(inst, data, groups, "the packed groups need more hosts than the pools have")


def _excess(data: ModelData, groups: Sequence[Built]) -> int:
    """Hosts held beyond the pools' sizes, summed over pools."""
    return sum(
        max(0, sum(b.hosts[p] for b in groups) - data.hosts[p]) for p in range(len(data.pools))
    )


def repair(data: ModelData, groups: list[Built], deadline: Deadline) -> list[Built]:
    """While the groups hold more hosts than the pools have, merge the pair of groups (with
    their options, else with each member's cheapest plan alone) that frees the most hosts."""
    while _excess(data, groups) and not deadline.expired():
        best, best_excess = None, _excess(data, groups)
        for i, gi in enumerate(groups):
            for k in range(i + 1, len(groups)):
                if deadline.expired():
                    return groups
                union = build(data, gi.members + groups[k].members, deadline)
                if union is None:
                    continue
                rest = [g for n, g in enumerate(groups) if n not in (i, k)]
                excess = _excess(data, [*rest, union])
                if excess < best_excess:
                    best, best_excess = [*rest, union], excess
        if best is None:
            return groups
        groups = best
    return groups


def local_search(
    data: ModelData, groups: list[Built], params: PackingParams, deadline: Deadline
) -> list[Built]:
    """Move single jobs between groups, and try cheaper options, while the cost falls."""
    for _ in range(int(params.max_rounds)):
        improved = False
        for job in data.jobs:
            if deadline.expired():
                return groups
            src = next(i for i, g in enumerate(groups) if any(j is job for j, _ in g.members))
            mine = next(m for m in groups[src].members if m[0] is job)
            rest = [m for m in groups[src].members if m[0] is not job]
            base_rest = build(data, rest, deadline) if rest else None
            if rest and base_rest is None:
                continue
            rest_cost = base_rest.cost(data) if base_rest else 0.0
            here = groups[src].cost(data)
            for c in combos(data, job, int(params.options_per_job)):
                for dst in [*range(len(groups)), None]:
                    if deadline.expired():
                        return groups
                    if dst == src:
                        cand = build(data, [*rest, (job, c)], deadline)
                        delta = (cand.cost(data) - here) if cand else 0.0
                        change = {src: cand}
                    elif dst is None:
                        cand = build(data, [(job, c)], deadline)
                        delta = (cand.cost(data) + rest_cost - here) if cand else 0.0
                        change = {src: base_rest, -1: cand}
                    else:
                        cand = build(data, [*groups[dst].members, (job, c)], deadline)
                        delta = (
                            cand.cost(data) - groups[dst].cost(data) + rest_cost - here
                            if cand
                            else 0.0
                        )
                        change = {src: base_rest, dst: cand}
                    if cand is None or delta >= -1e-9:
                        continue
                    if c == mine[1] and dst == src:
                        continue
                    new = [g for i, g in enumerate(groups) if i not in change]
                    new += [g for g in change.values() if g is not None]
                    if fits_cluster(data, new) or not fits_cluster(data, groups):
                        groups, improved = new, True
                        break
                if improved:
                    break
            if improved:
                break
        if not improved:
            break
    return groups


#: What ``auto`` runs, best first.
HEURISTICS = ("heuristic:packing", "heuristic:disaggregated", "heuristic:colocated")


solve_disaggregated = timed(_disaggregated)
solve_colocated = timed(_colocated)
solve_packing = timed(_packing)

"""Admission by decomposition: parts of hosts and jobs, each solved by CP-SAT from its own
greedy plan, joined, repaired and topped up on the whole cluster (formulations/admission.md,
"Decomposition").

C3 is a sum over hosts (``κ_gs = Σ_h s·⌊f_h/s⌋``), and L1, L2 are sums over jobs: plans that
keep C3 within disjoint host groups keep it on the whole cluster, so the join needs no repair
of capacity. Two partitions:

- ``decomp``: hosts in topology order (leaf switches stay together), in ``k`` groups of equal
  free GPUs per type; jobs dealt round-robin in order of kind, earlier admission and size, so
  every part gets the same mix;
- ``decomp:pop``: POP's random split (Narayanan et al., NSDI'21): hosts and jobs at random.

The bound is B1, the LP relaxation of the whole instance (``bound.py``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from schedopt.backends.first_import import CPSAT, import_solver
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.executor import Task
from schedopt.model import decompose
from schedopt.model.lexico import solve_levels

from .assemble import RawPlan, assemble, guaranteed_value
from .bound import l1_bound
from .codec import decode, encode
from .data import JobData, ModelData, build_data, finish_reserve_s
from .exact import AdmissionHooks
from .heuristics import (
    ASSEMBLE_PER_BUILD,
    EdfParams,
    Ledger,
    SlackParams,
    _fill_best_effort,
    _place_slo,
    edf_order,
    run_edf,
    run_slack,
)
from .instance import AdmissionInstance
from .model import build_model

#: About this many jobs per part (CP-SAT proves or nearly proves L1 of a 64-GPU × 200-job
#: part within seconds: benchmarks/RESULTS.md, the contested 64-GPU rows).
JOBS_PER_PART = 200
#: Fewest hosts in a part: the widest gangs of the generated instances take 4 whole hosts, and
#: a part must keep its share of the earlier guarantees beside them.
MIN_HOSTS_PER_PART = 8
#: ``auto`` runs ``decomp`` instead of CP-SAT from this many jobs on (issue #17: at 1,000
#: jobs on 1,024 GPUs the monolithic model proves L1 on a quiet machine but reports no bound
#: at load 4; the LP bound B1 takes 0.6 s there).
AUTO_DECOMP_JOBS = 500
#: Deterministic mode: the share of the limit the parts' CP-SAT runs get together, in
#: deterministic seconds (outside it they get about what the bound's 0.4 share leaves, 0.54).
PARTS_WORK_SHARE = 0.5

#: (job indices of the whole instance, capacity κ_gs of the part's hosts)
Part = tuple[list[int], dict[tuple[str, int], int]]


def part_count(data: ModelData, hosts: int) -> int:
    return max(1, min(round(len(data.jobs) / JOBS_PER_PART), hosts // MIN_HOSTS_PER_PART))


def split(data: ModelData, k: int, random: bool, seed: int) -> list[Part]:
    """``k`` parts of hosts and jobs (the module docstring says how)."""
    rng = np.random.default_rng(seed)
    groups = sorted(data.instance.free_gpus_by_group.items())
    if random:
        groups = [groups[i] for i in rng.permutation(len(groups))]
    # hosts: fill each part to its equal share of every type's free GPUs, in order
    caps: list[dict[tuple[str, int], int]] = [
        {key: 0 for key in data.chunk_capacity} for _ in range(k)
    ]
    total = {g: sum(len(v) for (_, t), v in groups if t == g) for g in data.levels}
    seen = dict.fromkeys(data.levels, 0)
    for (_, g), gpus in groups:
        f = len(gpus)
        p = min(k - 1, seen[g] * k // max(1, total[g]))
        seen[g] += f
        for s in data.levels[g]:
            caps[p][g, s] += s * (f // s)
    if random:
        order = [int(i) for i in rng.permutation(len(data.jobs))]
    else:
        order = sorted(
            range(len(data.jobs)),
            key=lambda i: (
                data.jobs[i].is_slo,
                data.jobs[i].admitted_before,
                max((o.n for o in data.jobs[i].options), default=0),
                data.jobs[i].work,
            ),
        )
    jobs: list[list[int]] = [[] for _ in range(k)]
    for rank, i in enumerate(order):
        turn, at = divmod(rank, k)
        jobs[at if turn % 2 == 0 else k - 1 - at].append(i)  # a snake deal
    return list(zip(jobs, caps, strict=True))


def part_data(data: ModelData, part: Part) -> ModelData:
    """A self-contained ModelData of the part: its jobs re-indexed from 0, its hosts' κ. The
    instance is left out (a part is sent to a worker; only the join assembles a solution)."""
    indices, cap = part
    return data.subset(indices, chunk_capacity=cap)


def _greedy_start(part: ModelData) -> list[RawPlan] | None:
    """The better of EDF and slack on the part (None: neither keeps its guarantees)."""
    best, best_key = None, None
    for raw, broken in (run_edf(part, EdfParams()), run_slack(part, SlackParams())):
        if broken:
            continue
        key = guaranteed_value(part, raw)
        if best_key is None or key > best_key:
            best, best_key = raw, key
    return best


def solve_part(
    part: ModelData, budget: decompose.Budget, seed: int, work_s: float | None = None
) -> list[RawPlan]:
    """One part: its greedy plan, improved by CP-SAT over the three levels within ``budget``
    (module-level, picklable arguments: a process pool's task). ``work_s`` (deterministic
    mode): CP-SAT gets that many deterministic seconds over the levels, whatever the clock
    says, and ``budget`` is only the runaway cap."""
    deadline = budget.deadline()
    time_limit_s = deadline.remaining() if work_s is None else work_s
    start = _greedy_start(part)
    if time_limit_s < 0.05 or not part.jobs:
        if start is None:
            raise RuntimeError("no time to keep the part's earlier guarantees")
        return start
    try:
        found = _improve(part, deadline, seed, start, work_s)
    except DeadlineReached:  # no time for CP-SAT (building, emitting): the greedy plan stands
        found = None
    if found is None:
        if start is None:
            raise RuntimeError("no plan keeps the part's earlier guarantees")
        return start
    return found


def _improve(
    part: ModelData,
    deadline: Deadline,
    seed: int,
    start: list[RawPlan] | None,
    work_s: float | None = None,
) -> list[RawPlan] | None:
    """CP-SAT over the part's three levels from ``start`` (None: it found nothing); with
    ``work_s``, on that much deterministic time (SolveOptions.deterministic). CP-SAT's first
    import is refused (:class:`DeadlineReached`) when it would not end by ``deadline``
    (deterministic mode: not gated)."""
    import_solver(CPSAT, first_import_deadline(deadline, work_s is not None))
    from schedopt.model.emit_cpsat import CpsatSession  # the solver, on first use

    am = build_model(part, deadline=deadline)
    session = CpsatSession(am.model, AdmissionHooks.cpsat_linearization_level)
    if work_s is None:
        options = SolveOptions(time_limit_s=max(0.01, deadline.remaining()), seed=seed)
    else:
        options = SolveOptions(time_limit_s=max(0.01, work_s), seed=seed, deterministic=True)
    hint = None if start is None else encode(am, start)
    try:
        lex = solve_levels(am.model, session, options, deadline, AdmissionHooks(am), hint)
    finally:
        session.close()
    return None if lex.values is None else decode(am, lex.values)


def join(
    data: ModelData, parts: Sequence[Part], answers: Mapping[str, Any], deadline: Deadline
) -> tuple[Any, dict[str, float | str]]:
    """The parts' plans on the whole cluster, the failed parts' jobs and every rejected SLO job
    placed greedily in what is left (earlier guarantees first), best-effort jobs topped up."""
    raw = [RawPlan([None] * data.T) for _ in data.jobs]
    missing: list[JobData] = []
    for p, (indices, _) in enumerate(parts):
        got = answers.get(f"part{p}")
        for n, i in enumerate(indices):
            if got is None:
                missing.append(data.jobs[i])
            else:
                raw[i] = got[n]
    ledger = Ledger(data)
    for job, r in zip(data.jobs, raw, strict=True):
        for t, o in enumerate(r.run):
            if o is not None:
                ledger.take(t, job.options[o])
    order = edf_order(EdfParams())
    for job in sorted((j for j in missing if j.admitted_before), key=order):
        if not _place_slo(data, ledger, job, raw[job.index], latest_tier_first=True):
            return None, {"join": f"earlier guarantee of {job.id} not kept"}
    before = guaranteed_value(data, raw)
    for job in sorted((j for j in data.jobs if j.is_slo and not raw[j.index].admitted), key=order):
        if deadline.expired():
            break
        _place_slo(data, ledger, job, raw[job.index])
    for job in data.jobs:  # not reached in time (a failed part's jobs): rejected, unproven
        if job.is_slo and raw[job.index].admitted is None:
            raw[job.index].admitted = False
    _fill_best_effort(data, ledger, raw, deadline)
    added = (guaranteed_value(data, raw) - before) / 1000
    stats: dict[str, float | str] = {
        "repair_added_value": added,
        "parts_missing_jobs": len(missing),
    }
    return assemble(data, raw, optimal_admission=False), stats


def decomposition(
    inst: AdmissionInstance, options: SolveOptions, deadline: Deadline, random: bool
) -> decompose.Decomposition:
    started = time.perf_counter()
    data = build_data(inst, check_size=False, deadline=deadline)
    data_s = time.perf_counter() - started
    hosts = len({h for h, _ in inst.free_gpus_by_group})
    k = decompose.whole_param(options, "parts", part_count(data, hosts), 1, decompose.MAX_PARTS)
    parts = split(data, k, random, options.seed)

    # deterministic mode: every part gets the same deterministic time, PARTS_WORK_SHARE of
    # the limit shared out (the parts' budgets from the clock are then only a runaway cap)
    work_s = PARTS_WORK_SHARE * options.time_limit_s / k if options.deterministic else None

    def task(p: int, budget: decompose.Budget) -> Task:
        args = (part_data(data, parts[p]), budget, options.seed, work_s)
        return Task(f"part{p}", solve_part, args)

    def bound(seconds: float) -> decompose.Bound:
        b = l1_bound(data, seconds, deadline)
        return decompose.Bound(b.bound, {"bound": "B1 LP" + ("" if b.solved else " (stopped)")})

    return decompose.Decomposition(
        part=task,
        count=k,
        join=lambda answers, dl: join(data, parts, answers, dl),
        bound=bound,
        # the join's greedy pass and assembling: about two data builds (heuristics.py's
        # ASSEMBLE_PER_BUILD), measured here so that it follows the machine's load
        # (and the finish once more, as fair share's decomposition keeps it)
        join_reserve_s=max(0.05 + 2e-5 * len(data.jobs) * data.T, ASSEMBLE_PER_BUILD * data_s)
        + finish_reserve_s(inst),
        # B1 is the promise ("a bound every run"): at 256 GPUs x 800 jobs its LP took
        # 1.8-2.6 s at load 11-16, past a quarter of what auto leaves it
        bound_share=0.4,
    )


def auto_route(inst: AdmissionInstance) -> str:
    """``auto``'s exact method: ``decomp:lp`` (``lpdecomp.py``) from AUTO_DECOMP_JOBS jobs on,
    else CP-SAT."""
    return "decomp:lp" if len(inst.jobs) >= AUTO_DECOMP_JOBS else "cpsat"


METHODS = decompose.methods(
    decomposition,
    "decomposition by host group (CP-SAT per part, greedy repair), LP bound of the whole",
    "POP's random split of hosts and jobs (CP-SAT per part), LP bound of the whole",
)

__all__ = ["METHODS", "auto_route", "join", "solve_part", "split"]

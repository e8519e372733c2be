"""``colgen``: groups as columns (formulations/cosched.md, "Column-generation bound on L1").

Start from the hint's groups (without a hint, the packing plan's: ``auto`` runs ``colgen``
first, MethodSpec.decomposition) and every job alone; rounds of restricted master LP and pricing
add groups whose schedules the sub-solves build (through :mod:`schedopt.executor`); the Farley
bound is proven over the relaxed space R'; the restricted master MIP over the scheduled groups
picks the plan, run again with the groups one step from it (:mod:`.polish`), or the starting
plan when the MIP gives none or a worse one. The answer is
FEASIBLE with its gap against ``max(aggregate, Farley)``, never OPTIMAL (the bound is not shown
attained).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace

import numpy as np

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.solve import lex_better
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, make_executor, usable_cores
from schedopt.model.decompose import executor_choice, whole_param

from .assemble import Raw, RawGroup, assemble, raw_from_solution
from .colgen import Column, Master, generate
from .data import ModelData, aggregate_bound, build_data
from .heuristics import alone, baselines, heuristic_data, solve_packing
from .instance import CoschedInstance
from .polish import polish
from .schedule import Planned
from .validate import TERMS, evaluate, validate

#: ``auto`` runs ``colgen`` instead of the monolithic model from this many jobs (the exact
#: model has 1.2 M nonzeros at 40 jobs and is refused; at 8 jobs it still runs).
COLGEN_FROM_JOBS = 16
#: Shares of the time left: column generation, then the Farley bound; the MIP gets the rest.
CG_SHARE, BOUND_SHARE = 0.65, 0.12
#: Shares of the time left for the master MIP, then for polishing its plan (the MIP runs again
#: over the new groups with the rest but what is kept for the metrics and the validator).
MIP_SHARE, POLISH_SHARE, REMIP_SHARE = 0.6, 0.3, 0.6
#: The second MIP holds the columns whose reduced cost is within this share of the first
#: plan's gap above the master LP (656 GPUs x 40 jobs: 278 of 752 columns, 912.2 in 0.23 s,
#: where all of them took 0.66 s to the same plan).
RC_KEEP = 0.5
#: Share of the time left for the packing plan when no hint is given, then for the baselines.
SEED_SHARE, FLOOR_SHARE = 0.3, 0.1
#: Option combinations tried per job for its group alone, cheapest first.
SINGLE_COMBOS = 8
#: Rounds of column generation in deterministic mode (``params["rounds"]`` overrides it): a
#: budget of work in place of the wall clock, so the answer is reproducible.
DETERMINISTIC_ROUNDS = 30
#: Deterministic mode's work budgets for the steps around the rounds (formulations/cosched.md,
#: "Deterministic mode"): the master MIP's branch-and-bound nodes (HiGHS ``mip_max_nodes``, a
#: fixed ``random_seed``; its search is serial) and the neighbours :func:`.polish.polish`
#: schedules. The packing plan, the baselines and the starting columns are fixed work already
#: (bounded loops); in deterministic mode each of these steps gets the whole deadline, which
#: is then only the runaway cap (core/solve.py), not a wall-clock share that stops it early.
DETERMINISTIC_MIP_NODES, DETERMINISTIC_NEIGHBOURS = 200, 1_000
#: Most rounds ``params["rounds"]`` may ask for.
MAX_ROUNDS = 100_000
#: From this many jobs, without ``params`` naming an executor or workers and outside
#: deterministic mode, exact pricing's case models run on this many worker processes (at
#: most one a core; none on one core): at 4,096 GPUs x 200 jobs a round's CP-SAT case models
#: are about two thirds of it, and the rounds are what the bound lacks (benchmarks/RESULTS.md,
#: #17); at 656 x 40 (40 jobs) the rounds converge inline. Only with this many seconds
#: left: a worker's start (an interpreter importing CP-SAT) is paid once per solve.
PARALLEL_FROM_JOBS, CASE_WORKERS, PARALLEL_FROM_S = 100, 2, 10.0


def route(inst: CoschedInstance) -> str:
    """``auto``'s exact method for ``inst`` (ProblemSpec.auto_route), from its size alone."""
    return "colgen" if len(inst.jobs) >= COLGEN_FROM_JOBS and inst.chance is None else "cpsat"


def case_workers(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> int:
    """The worker processes ``colgen`` starts for exact pricing's case models (0: none, they
    run in this process or on the executor ``params`` name)."""
    if options.deterministic or "executor" in options.params or "workers" in options.params:
        return 0
    if len(inst.jobs) < PARALLEL_FROM_JOBS or deadline.remaining() < PARALLEL_FROM_S:
        return 0
    n = min(CASE_WORKERS, usable_cores())
    return n if n >= 2 else 0


def _start(
    inst: CoschedInstance, data: ModelData, options: SolveOptions, dl: Deadline
) -> tuple[list[Column], list[Column]]:
    """Scheduled groups to start from: the hint's as they are (if the hint is valid), and every
    job alone on its cheapest plan found; and the hint's groups alone (its plan, as columns)."""
    out: list[Column] = []
    hint = options.hint
    raw = None if hint is None or validate(inst, hint) else raw_from_solution(inst, hint)
    if raw is not None:
        for g in raw.groups:
            members = []
            for j in g.members:
                # an option's index is its place in the instance's phase, not in the options
                # offered (C5b, C5c filter them): look it up per phase (one dict over all phases
                # gave every phase the last phase's option of that index; harmless while only
                # the indices were read, wrong for rescheduling)
                offered = [{o.index: o for o in ph} for ph in data.jobs[j].phases]
                members.append((j, tuple(offered[k][i] for k, i in enumerate(raw.option[j]))))
            starts = {j: list(raw.start[j]) for j in g.members}
            out.append(Column(tuple(members), tuple(g.hosts), Planned(g.cycle, starts)))
    plan = list(out)
    for job in data.jobs:
        if dl.expired():
            break
        b = alone(data, job, SINGLE_COMBOS, dl)
        if b is not None:
            out.append(Column(((job.index, b.members[0][1]),), tuple(b.hosts), b.planned))
    return out, plan


def _integer(
    master: Master, seconds: float, start: list[Column] | None = None, seed: int | None = None
) -> list[Column] | None:
    """The restricted master MIP over the scheduled groups (the artificials stay out), started
    from ``start`` (the seed plan's groups, all columns of the master) as its incumbent.
    ``seed`` given (deterministic mode): at most DETERMINISTIC_MIP_NODES nodes, that random
    seed, and ``seconds`` only a runaway cap."""
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
    if h.getInfo().primal_solution_status != 2:
        return None
    v = np.asarray(h.getSolution().col_value)[n_art:]
    return [c for c, x in zip(master.columns, v, strict=True) if x > 0.5]


def _polished(
    data: ModelData,
    columns: list[Column],
    chosen: list[Column],
    share: Callable[[float], float],
    stats: dict[str, float],
    seed: int | None = None,
) -> list[Column]:
    """``chosen``, or the master MIP's plan over the columns and the groups one step from it
    (:func:`.polish.polish`) when that one costs less; the MIP starts from ``chosen`` and
    holds the columns whose reduced cost at the LP's duals is at most :data:`RC_KEEP` times
    ``chosen``'s cost above the LP (a plan of cost ``c`` has ``Σ rc_a ≤ c − z_LP``: the
    others can only be in plans within the rest of that gap; a heuristic cut, for speed).
    ``share``: the seconds of a share of the deadline (``solve_colgen``'s); ``seed`` given
    (deterministic mode): work budgets, the deadline only the runaway cap."""
    master = Master(data)
    for col in columns:
        master.add(col)
    limit = DETERMINISTIC_NEIGHBOURS if seed is not None else None
    added = polish(master, chosen, Deadline.after(share(POLISH_SHARE)), limit)
    stats["polish_columns"] = float(added)
    if not added:
        return chosen
    cost = sum(c.cost(data) for c in chosen)
    solved = master.solve(share(POLISH_SHARE))
    kept = master.columns
    if solved is not None:
        lp, pi, y = solved
        slack = RC_KEEP * (cost - lp)
        keys = {Master.key(c) for c in chosen}
        kept = [
            c
            for c in master.columns
            if Master.key(c) in keys
            or c.cost(data) - sum(pi[j] for j, _ in c.members) - float(np.dot(y, c.hosts)) <= slack
        ]
    small = Master(data)
    for col in kept:
        small.add(col)
    better = _integer(small, share(REMIP_SHARE), chosen, seed)
    if better is None or sum(c.cost(data) for c in better) >= cost:
        return chosen
    stats["polished"] = 1.0
    return better


def solve_colgen(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    # ``params``: ``executor`` and ``workers`` as every decomposition reads them (checked and
    # refused by name there); ``{"workers": k}`` alone means k processes, as it always has.
    kind, workers = executor_choice(options)
    if workers and "executor" not in options.params:
        kind = "process"
    # ``params["rounds"]``: a budget of rounds (in deterministic mode DETERMINISTIC_ROUNDS
    # without it; the wall clock then only stops a runaway run).
    det = options.deterministic
    rounds: int | None = None
    if det or "rounds" in options.params:
        rounds = whole_param(options, "rounds", DETERMINISTIC_ROUNDS, 1, MAX_ROUNDS)
    # In deterministic mode every step before and after the rounds stops on its work (a
    # bounded loop, a node or neighbour budget), the deadline only a runaway cap: a share of
    # it would stop the step at another point on a loaded machine (the plan then differed).
    share = (lambda f: deadline.remaining()) if det else deadline.share
    mip_seed = options.seed if det else None
    exact = build_data(inst)
    aggregate = aggregate_bound(exact)
    if exact.scenarios:
        return Outcome(
            Status.NO_SOLUTION,
            bound=aggregate,
            explanation="colgen plans at the planning quantile only (no chance constraint)",
        )
    data = heuristic_data(inst)
    if options.hint is None:
        # No hint (called by name, or first by auto: MethodSpec.decomposition): the master
        # starts from the packing plan.
        packed = solve_packing(inst, replace(options, params={}), Deadline.after(share(SEED_SHARE)))
        options = replace(options, hint=packed.solution)
        # auto's other two heuristics (each job alone: a pass over the jobs, 0.05 s at 200
        # jobs) are floors too, so auto is never below any of its heuristics
        floors = baselines(inst, data, Deadline.after(share(FLOOR_SHARE)))
    else:
        floors = []
    seed = options.hint if options.hint is not None and not validate(inst, options.hint) else None
    start, seed_groups = _start(inst, data, options, Deadline.after(share(SEED_SHARE)))
    cg_dl = Deadline.after(share(CG_SHARE))
    bound_dl = Deadline.after(share(CG_SHARE + BOUND_SHARE))
    own = case_workers(inst, options, deadline)
    pool = make_executor("process", jobs=own) if own else nullcontext(None)
    with make_executor(kind, jobs=workers) as executor, pool as mine:
        # the case models on their own pool, else on the executor params name (if it has
        # two or more workers: refine.parallel); the checks on that executor
        cases: Executor = mine if mine is not None else executor
        gen = generate(data, start, cg_dl, executor, bound_dl, rounds, det, cases)
    master = Master(data)
    for col in gen.columns:
        master.add(col)
    # Keep a share back for the baselines' metrics (with_efficiency) and the validator.
    chosen = _integer(master, share(MIP_SHARE), seed_groups, mip_seed)
    stats: dict[str, float] = {}
    if chosen is not None:
        chosen = _polished(data, master.columns, chosen, share, stats, mip_seed)
    bound = max((b for b in (aggregate, gen.bound) if b is not None), default=None)
    stats |= {
        "rounds": float(gen.rounds),
        "case_workers": float(own),
        "columns": float(len(gen.columns)),
        "master_lp": float("nan") if gen.lp is None else gen.lp,
        "farley_bound": float("nan") if gen.bound is None else gen.bound,
    }
    plan = None
    if chosen is not None:
        raw = Raw()
        for col in chosen:
            members = [j for j, _ in col.members]
            raw.groups.append(RawGroup(members, list(col.hosts), col.planned.cycle))
            for j, opts in col.members:
                raw.option[j] = [o.index for o in opts]
                raw.start[j] = list(col.planned.starts[j])
        plan = assemble(inst, raw)
    for floor in (seed, *floors):
        if floor is None or (
            plan is not None and not lex_better(evaluate(inst, floor), evaluate(inst, plan), TERMS)
        ):
            continue
        if floor is not seed and validate(inst, floor):
            continue
        # The starting plan's groups are columns, so the MIP can only lose to it when stopped
        # early (or on the later levels, which it does not price): never answer worse than
        # the plan it started from, or than the baselines (auto's promise to be at least as
        # good as its heuristics).
        stats["seed_kept" if floor is seed else "baseline_kept"] = 1.0
        plan = floor
    if plan is None:
        return Outcome(
            Status.NO_SOLUTION, bound=bound, explanation="no plan from the columns", stats=stats
        )
    return Outcome(Status.FEASIBLE, solution=plan, bound=bound, stats=stats)

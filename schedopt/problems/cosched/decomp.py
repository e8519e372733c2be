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

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace

from schedopt.backends.first_import import HIGHS, import_solver
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.solve import lex_better
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.executor import Executor, Task, make_executor, usable_cores
from schedopt.executor.aside import Aside
from schedopt.model.decompose import executor_choice, whole_param

from .assemble import Raw, RawGroup, assemble, raw_from_solution
from .colgen import Column, Master, generate
from .data import ModelData, aggregate_bound, build_data
from .dive import cost, dive, integer, ladder
from .heuristics import alone, baselines, heuristic_data, solve_packing
from .instance import CoschedInstance
from .polish import polish
from .schedule import Planned
from .solution import CoschedSolution as Solution
from .validate import TERMS, evaluate, validate

#: ``auto`` runs ``colgen`` instead of the monolithic model from this many jobs (the exact
#: model has 1.2 M nonzeros at 40 jobs and is refused; at 8 jobs it still runs).
COLGEN_FROM_JOBS = 16
#: Shares of the time left: column generation, then the Farley bound; the MIP gets the rest.
CG_SHARE, BOUND_SHARE = 0.65, 0.12
#: Shares of the time left for the master's plan (dive and ladder, :mod:`.dive`), then for
#: polishing it (the ladder runs again over the new groups with the rest but what is kept for
#: the metrics and the validator).
MIP_SHARE, POLISH_SHARE, REMIP_SHARE = 0.6, 0.3, 0.6
#: Share of the time left for the packing plan when no hint is given, then for the baselines.
SEED_SHARE, FLOOR_SHARE = 0.3, 0.1
#: Option combinations tried per job for its group alone, cheapest first.
SINGLE_COMBOS = 8
#: Rounds of column generation in deterministic mode (``params["rounds"]`` overrides it): a
#: budget of work in place of the wall clock, so the answer is reproducible.
DETERMINISTIC_ROUNDS = 30
#: Deterministic mode's work budgets for the steps around the rounds (formulations/cosched.md,
#: "Deterministic mode"): the master MIPs' branch-and-bound nodes
#: (:data:`.dive.DETERMINISTIC_MIP_NODES`) and the neighbours :func:`.polish.polish`
#: schedules. The packing plan, the baselines and the starting columns are fixed work already
#: (bounded loops); in deterministic mode each of these steps gets the whole deadline, which
#: is then only the runaway cap (core/solve.py), not a wall-clock share that stops it early.
DETERMINISTIC_NEIGHBOURS = 1_000
#: Most rounds ``params["rounds"]`` may ask for.
MAX_ROUNDS = 100_000
#: From this many jobs, without ``params`` naming an executor or workers and outside
#: deterministic mode, exact pricing's case models run on this many worker processes (at
#: most one a core; none on one core): at 4,096 GPUs x 200 jobs a round's CP-SAT case models
#: are about two thirds of it, and the rounds are what the bound lacks (benchmarks/RESULTS.md,
#: #17); at 656 x 40 (40 jobs) the rounds converge inline. Only with this many seconds
#: left: a worker's start (an interpreter importing CP-SAT) is paid once per solve.
PARALLEL_FROM_JOBS, CASE_WORKERS, PARALLEL_FROM_S = 100, 2, 10.0


#: Seconds the packing's worker has beyond the packing's own share before it is killed (its
#: start: an interpreter importing numpy and the package).
ASIDE_GRACE_S = 3.0


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


def packing_aside(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> bool:
    """``colgen`` makes its packing plan on a worker of its own: it has no hint and it will
    start the case workers once the packing's share is spent (:func:`case_workers`)."""
    if options.hint is not None:
        return False
    return bool(case_workers(inst, options, deadline.earlier(deadline.share(SEED_SHARE))))


class _Packed:
    """The packing plan made aside (:func:`packing_plan`): called, its groups as columns once,
    when it has come back (column generation's ``incoming``; then nothing more)."""

    def __init__(self, inst: CoschedInstance, data: ModelData, aside: Aside):
        self.inst, self.data, self.aside = inst, data, aside
        self.plan: Solution | None = None
        #: ``plan``'s groups as columns; None until it is back, or if it is not a valid plan
        #: (validated once, by _hint_columns)
        self.columns: list[Column] | None = None
        self.elapsed_s = float("nan")
        self.taken = False

    def __call__(self, wait: bool = False) -> list[Column]:
        if self.taken:
            return []
        res = self.aside.result() if wait else self.aside.poll()
        if res is None:
            return []
        self.taken, self.elapsed_s = True, res.elapsed_s
        if res.ok and isinstance(res.value, Solution):
            self.plan = res.value
            self.columns = _hint_columns(self.inst, self.data, self.plan)
        return self.columns or []

    def __enter__(self) -> _Packed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.aside.close()


def _hint_columns(
    inst: CoschedInstance, data: ModelData, hint: Solution | None
) -> list[Column] | None:
    """The groups of ``hint`` as columns, as they are; None if there is no hint or it is not a
    valid plan (the one validation of the starting plan: its result also says whether the plan
    is ``solve_colgen``'s seed, #17)."""
    out: list[Column] = []
    raw = None if hint is None or validate(inst, hint) else raw_from_solution(inst, hint)
    if raw is None:
        return None
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
    return out


def _start(
    inst: CoschedInstance, data: ModelData, options: SolveOptions, dl: Deadline
) -> tuple[list[Column], list[Column] | None]:
    """Scheduled groups to start from: the hint's as they are (if the hint is valid), and every
    job alone on its cheapest plan found; and the hint's groups alone (its plan, as columns;
    None if there is no hint or it is not valid)."""
    plan = _hint_columns(inst, data, options.hint)
    out = list(plan or [])
    for job in data.jobs:
        if dl.expired():
            break
        b = alone(data, job, SINGLE_COMBOS, dl)
        if b is not None:
            out.append(Column(((job.index, b.members[0][1]),), tuple(b.hosts), b.planned))
    return out, plan


def packing_plan(inst: CoschedInstance, options: SolveOptions, until: float) -> Solution | None:
    """The packing plan (``heuristic:packing``) by ``until`` (``time.time()``, the clock every
    process shares: the worker's start-up comes out of the packing's time, not after it):
    ``colgen``'s seed, made here or on a worker of its own
    (:class:`~schedopt.executor.aside.Aside`) while the rounds run."""
    seconds = max(0.0, until - time.time())
    return solve_packing(inst, replace(options, params={}), Deadline.after(seconds)).solution


def _master_plan(
    master: Master,
    seed_groups: list[Column] | None,
    deadline: Deadline,
    stats: dict[str, float],
    seed: int | None = None,
) -> tuple[list[Column] | None, list[Column] | None]:
    """The restricted master's plan (formulations/cosched.md, "Diving and the ladder of
    sub-MIPs"): the cheaper of the seed plan's groups and the dive's plan, improved by the
    ladder of sub-MIPs; the MIP over every column when there is neither. ``seed`` given
    (deterministic mode): node budgets, ``deadline`` only the runaway cap. ``stats`` gets the
    dive's cost (when it found a plan) and the ladder's sub-MIPs. Also the dive's plan."""
    dived = dive(master, deadline)
    if dived is not None:
        stats["dive"] = cost(master.data, dived)
    starts = [p for p in (seed_groups, dived) if p]
    if not starts:
        return integer(master, deadline.remaining(), None, seed)[0], None
    best = min(starts, key=lambda p: cost(master.data, p))
    plan, stats["ladder_steps"] = ladder(master, best, deadline, seed)
    return plan, dived


def _polished(
    data: ModelData,
    columns: list[Column],
    chosen: list[Column],
    share: Callable[[float], float],
    stats: dict[str, float],
    seed: int | None = None,
    dived: list[Column] | None = None,
) -> list[Column]:
    """``chosen``, or the ladder's plan (:func:`.dive.ladder`, from ``chosen``) over the
    columns and the groups one step (:func:`.polish.polish`) from ``chosen`` and, in the
    polishing time left, from the dive's plan ``dived``, when that one costs less. (Another
    plan near the LP: at 656 GPUs x 40 jobs in deterministic mode the ladder's 917.36 $/h
    was one of two optima over the columns, and only the other's or the dive's neighbours
    held the 912.2 plan.) ``share``: the seconds of a share of the deadline
    (``solve_colgen``'s); ``seed`` given (deterministic mode): work budgets, the deadline
    only the runaway cap."""
    master = Master.of(data, columns)
    limit = DETERMINISTIC_NEIGHBOURS if seed is not None else None
    polish_dl = Deadline.after(share(POLISH_SHARE))
    added = polish(master, chosen, polish_dl, limit)
    if dived is not None and {Master.key(c) for c in dived} != {Master.key(c) for c in chosen}:
        added += polish(master, dived, polish_dl, limit)
    stats["polish_columns"] = float(added)
    if not added:
        return chosen
    better, stats["polish_ladder_steps"] = ladder(
        master, chosen, Deadline.after(share(REMIP_SHARE)), seed
    )
    if cost(data, better) >= cost(data, chosen):
        return chosen
    stats["polished"] = 1.0
    return better


def _without_master(
    inst: CoschedInstance, hint: Solution | None, bound: float | None, why: str
) -> Outcome:
    """colgen's answer when HiGHS's first import would not end in the time left (``why``):
    the caller's plan, if it is valid, else none; the aggregate bound either way."""
    if hint is not None and not validate(inst, hint):
        return Outcome(Status.FEASIBLE, solution=hint, bound=bound, explanation=why)
    return Outcome(Status.NO_SOLUTION, bound=bound, explanation=why)


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
    try:  # the master is HiGHS's: its first import gated (deterministic mode: not)
        import_solver(HIGHS, first_import_deadline(deadline, det))
    except DeadlineReached as stop:
        return _without_master(inst, options.hint, aggregate, str(stop))
    data = heuristic_data(inst)
    # where the seconds go, in the result's stats (``*_s``, kept by the bench rows)
    stats: dict[str, float] = {}
    began = time.perf_counter()
    # From PARALLEL_FROM_JOBS jobs, with the case workers' time left after the packing's share,
    # the packing plan is made on a worker of its own while the rounds start from every job
    # alone, and its groups join the master when it comes back (at 4,096 GPUs x 200 jobs the
    # packing took 15.6 s of the minute on one core, the rounds waiting for it, #17).
    aside = packing_aside(inst, options, deadline)
    packed: _Packed | None = None
    if options.hint is None:
        # No hint (called by name, or first by auto: MethodSpec.decomposition): the master
        # starts from the packing plan.
        seconds = share(SEED_SHARE)
        if not aside:
            options = replace(options, hint=packing_plan(inst, options, time.time() + seconds))
        # auto's other two heuristics (each job alone: a pass over the jobs, 0.05 s at 200
        # jobs) are floors too, so auto is never below any of its heuristics
        floors = baselines(inst, data, Deadline.after(share(FLOOR_SHARE)))
        if aside:  # started last: the ``with`` below closes it on every path
            # (its end an absolute time, killed ASIDE_GRACE_S after it: at load 16 a worker's
            # start took 3 s and more, and a packing that counted its time from there was
            # killed, its plan lost)
            task = Task("packing", packing_plan, (inst, options, time.time() + seconds))
            packed = _Packed(inst, data, Aside(task, Deadline.after(seconds + ASIDE_GRACE_S)))
    else:
        floors = []
    stats["packing_s"] = time.perf_counter() - began
    with packed if packed is not None else nullcontext():
        start, seed_groups = _start(inst, data, options, Deadline.after(share(SEED_SHARE)))
        cg_dl = Deadline.after(share(CG_SHARE))
        bound_dl = Deadline.after(share(CG_SHARE + BOUND_SHARE))
        began = time.perf_counter()
        own = case_workers(inst, options, deadline)
        pool = make_executor("process", jobs=own) if own else nullcontext(None)
        with make_executor(kind, jobs=workers) as executor, pool as mine:
            # the case models on their own pool, else on the executor params name (if it has
            # two or more workers: refine.parallel); the checks on that executor
            cases: Executor = mine if mine is not None else executor
            gen = generate(data, start, cg_dl, executor, bound_dl, rounds, det, cases, packed)
        stats["rounds_s"], began = time.perf_counter() - began, time.perf_counter()
        columns = list(gen.columns)
        if packed is not None:
            # its groups, if they came back after the last round (the worker is stopped at
            # the packing's deadline, long before the rounds end)
            columns += packed(wait=True)
            seed_groups = packed.columns
            stats["packing_aside_s"] = packed.elapsed_s
            stats["packing_aside_plan"] = float(packed.plan is not None)
            options = replace(options, hint=packed.plan)
    # the starting plan, if valid: validated once, where its groups became columns
    # (_hint_columns: in _start, or by _Packed for the plan made aside, which is then the hint)
    seed = options.hint if seed_groups is not None else None
    master = Master.of(data, columns)
    # Keep a share back for the baselines' metrics (with_efficiency) and the validator.
    chosen, dived = _master_plan(
        master, seed_groups, Deadline.after(share(MIP_SHARE)), stats, mip_seed
    )
    stats["plan_s"], began = time.perf_counter() - began, time.perf_counter()
    if chosen is not None:
        chosen = _polished(data, master.columns, chosen, share, stats, mip_seed, dived)
    stats["polish_s"] = time.perf_counter() - began
    bound = max((b for b in (aggregate, gen.bound) if b is not None), default=None)
    stats |= {
        "rounds": float(gen.rounds),
        "case_workers": float(own),
        "columns": float(len(gen.columns)),
        "master_lp": float("nan") if gen.lp is None else gen.lp,
        "farley_bound": float("nan") if gen.bound is None else gen.bound,
    }
    # the scaled aggregate bound, if tried in time, and the rounds' own (the bound is the max)
    for key, value in (("scaled_bound", gen.scaled), ("rounds_bound", gen.own)):
        if value is not None:
            stats[key] = value
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

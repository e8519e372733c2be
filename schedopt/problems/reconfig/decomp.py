"""``decomp:rate``: the fixed-time decomposition of the template model (formulations/
reconfig.md, R1–R4; #17). Where the monolithic MILP's bound is weak (the product pipelines ×
micro-batches), this method bisects on the pipe time: each step a small packing MILP or LP, its
bound proven step by step, its plan the best fixed-time plan found (or the start's, if better).
Then the monolithic model starts from that plan with that bound as a row (C13): with L1 proven
it only has L2 and L3 left, and can prove every level. ``auto`` runs it past a size
(``route``)."""

from __future__ import annotations

import dataclasses
import time
from functools import partial

from schedopt.backends.first_import import HIGHS, solver_in_time
from schedopt.core.gates import first_import_deadline
from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline, DeadlineReached
from schedopt.model.decompose import open_executor
from schedopt.model.method import ExactBackend, exact_runner

from .budgets import phase_deadline, work_of
from .data import data_of
from .exact import INFEASIBLE, finish, prepare, refuse, warm_start
from .instance import ReconfigInstance
from .plan import first_level_us, realise
from .validate import evaluate

NAME = "decomp:rate"
#: ``auto`` runs ``decomp:rate`` rather than the monolithic MILP from this many surviving
#: GPUs on (benchmarks/RESULTS.md, #17; at load 14, 10 s: instances/reconfig/example.json, 30
#: GPUs, milp:highs 1.097 s with a 22% gap, decomp:rate 1.058 s proven optimal at every level
#: in 7.1 s; up to 16 GPUs both prove every level in about a second) ...
ROUTE_GPUS = 24
#: ... and from this many failed or slow GPUs per host on: where failures are sparse the
#: monolithic model proves every level itself, sooner (load 8-10: 256 GPUs with 1 failure,
#: milp:highs 1.9 s, decomp:rate 6.1 s, both OPTIMAL; 16,384 GPUs with 16 + 16, 0.016 a host,
#: milp:highs OPTIMAL in 11-17 s, decomp:rate's L2 and L3 unproven at 40 s; with 4 + 4 on 256
#: and 1,024 GPUs, 0.25 and 0.0625 a host, decomp:rate's gap 0% against 22% and 15%).
ROUTE_FAULTS_PER_HOST = 0.05
#: ... and ``decomp:physical`` from this many surviving GPUs on (dense failures): its plan and
#: its bound are both over the physical plan space (benchmarks/RESULTS.md, #17, "auto routed
#: to decomp:physical").
ROUTE_PHYSICAL_GPUS = 128


def route(inst: ReconfigInstance) -> str:
    """The exact method ``auto`` runs for ``inst`` (ProblemSpec.auto_route), from its size and
    its failures alone (nothing built)."""
    usable = inst.cluster.num_gpus - len(inst.failed_gpus)
    faults = len(inst.failed_gpus) + len(inst.slow_gpus)
    dense = faults >= ROUTE_FAULTS_PER_HOST * len(inst.cluster.hosts())
    if not dense or usable < ROUTE_GPUS:
        return "milp:highs"
    return PHYSICAL if usable >= ROUTE_PHYSICAL_GPUS else NAME


#: Of the time left after the data, the share the fixed-time search gets when it has not
#: proven L1 (the rest goes to the monolithic model, which starts from its plan and bound).
SEARCH_SHARE = 0.7
#: Of the time left after the search, the share kept for the stage-position bound over the
#: physical plan space (Q7–Q9, price_bound.py), computed last, whatever the model proved.
PHYSICAL_SHARE = 0.4


def with_stage_bound(
    inst: ReconfigInstance,
    outcome: Outcome,
    deadline: Deadline,
    known: tuple[int | None, dict[str, float]] | None = None,
    deterministic: bool = False,
) -> Outcome:
    """The answer with Q7–Q9's proven bound over the physical plan space in its stats
    (``physical_bound_s``, ``physical_gap``; P1–P6's alone are in its metrics); ``known``: the
    bound already computed (``priced_bound_us``'s answer), else it is computed now
    (``deterministic``: to the runaway cap, ``priced_bound_us``)."""
    if outcome.solution is None or (known is None and deadline.expired()):
        return outcome
    from .price_bound import priced_bound_us  # HiGHS, on first use

    upper = round(evaluate(inst, outcome.solution)[0] * 1e6)
    try:
        if known is None:
            known = priced_bound_us(inst, upper, deadline, deterministic=deterministic)
        q_us, counts = known
    except DeadlineReached:  # out of time while packing the hosts: the answer as it is
        return outcome
    stats: dict[str, object] = {**outcome.stats, **counts}
    bound = outcome.bound
    if bound is not None:
        # a template answer's own bound (one cut short in the hand-over came without a label)
        stats.setdefault("proven_over", "template plan space")
    metrics = dict(outcome.metrics)
    if q_us is not None and upper:
        # Q7–Q9 start from P1–P6's bound, so this one is at least the validator's
        q_us = min(q_us, upper)  # a bound found below another plan's L1 holds for this one
        stats["physical_bound_s"] = metrics["physical_bound_s"] = q_us / 1e6
        stats["physical_gap"] = metrics["physical_gap"] = max(0, upper - q_us) / upper
        if bound is None and outcome.status is Status.FEASIBLE:
            # no bound of its own: the physical one holds over the templates too (a subset)
            bound = q_us / 1e6
            stats["proven_over"] = "physical plan space"
    return dataclasses.replace(outcome, bound=bound, stats=stats, metrics=metrics)


def solve(inst: ReconfigInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    """``decomp:rate``: the template answer, then Q7–Q9's bound over the physical space.
    Deterministic mode (SolveOptions.deterministic): the search's MILPs and LPs, the
    hand-over's levels (their node budgets from the limit) and the bound's rounds run to
    their end, ``deadline`` only the runaway cap."""
    det = options.deterministic
    return with_stage_bound(inst, solve_templates(inst, options, deadline), deadline, None, det)


PHYSICAL = "decomp:physical"
#: ``decomp:physical``'s shares: the template answer gets TEMPLATE_SHARE of the time (its L1
#: is proven in about 2 s at 256 and 1,024 GPUs; L2 and L3 matter less once it is widened),
#: the bound over the physical space (Q7–Q9) BOUND_SHARE of what is left, widening (W1–W7,
#: its targets from that bound) WIDEN_SHARE of the rest (all of it but the final check).
TEMPLATE_SHARE = 0.25
BOUND_SHARE = 0.4
WIDEN_SHARE = 0.95
#: The bound's share is also one of this process's CPU time: it goes on, past BOUND_SHARE of
#: the wall, until its rounds have had BOUND_CPU_S CPU seconds, up to BOUND_MOST of the time
#: left (``Deadline.cpu_share``). Quiet, its 4-5 rounds end by themselves in 1.0-1.5 CPU s
#: (256 and 1,024 GPUs, 10 s) within BOUND_SHARE; beside other work a row gets a third of a
#: core or less, and the wall share cut the bound at 1-3 rounds while W7 took its share of
#: the rest (W8 and Q8″ need 3; RESULTS.md, #17).
BOUND_CPU_S = 1.6
BOUND_MOST = 0.6
#: Of the time left after the bound, the most its last bisection at the mean of its rounds'
#: prices takes (Q8″, ``price_bound.mean_bound_us``; 4 probes, 0.4-0.5 s at 256 GPUs, load 2.3),
#: and as CPU time: up to MEAN_CPU_S (0.12-0.17 CPU s quiet), at most MEAN_MOST of the wall.
MEAN_SHARE = 0.1
MEAN_CPU_S = 0.2
MEAN_MOST = 0.2
#: With less than this left after the template answer, widening runs first (its share
#: SHORT_WIDEN_SHARE, W7 SHORT_COLUMN_SHARE of that) and the bound gets the rest: the
#: bound's first prices take about a second at 256 GPUs, and W6 finds plans sooner than W7.
BOUND_FIRST_S = 5.0
SHORT_WIDEN_SHARE = 0.5
SHORT_COLUMN_SHARE = 0.3
#: What follows W7 in widening (W6, W3-W5) ends this many evaluations (of the answer, timed
#: at the load of the moment) before widening's own end, and the hand-over of an answer not
#: widened as many before the deadline: what follows them (the evaluations deciding between
#: the plans, with_stage_bound's, the way out of ``auto`` and the finish's validation,
#: evaluation and metrics) took up to 0.21 s beside a CPU burner at a quarter of a core at
#: 1,024 GPUs, 7 evaluations' time (0.029 s each), and the row ended past its limit
#: (RESULTS.md, #17). Quiet, 6 evaluations at 1,024 GPUs are about 0.04 s.
TAIL_EVALS = 6
#: The hand-over starts only with this many evaluations' time left before its end: its own
#: start and its answer's realisation do not stop at its deadline (beside a CPU burner at
#: 1,024 GPUs it took 0.19 s with nothing left, and 0.32 s, 15 evaluations' time, started
#: with 0.23 s left, ending the row 0.07 s past its limit; RESULTS.md, #17).
HANDOVER_EVALS = 15
PHYSICAL_NOTE = (
    "a plan of the physical plan space (TP differing between stages, slow GPUs in groups as "
    "they are, pipelines from priced columns and from the GPUs the template plan leaves idle; "
    "formulations/reconfig.md W1-W7): the bound is Q7-Q9's, over the physical plan space"
)


def solve_physical(inst: ReconfigInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
    """``decomp:physical``: the template answer, Q7–Q9's bound over the physical space, then
    the template answer widened to the physical space (W1–W7, W7's targets climbing from the
    bound, W6's designs on the executor ``options.params`` names) where that lowers L1, with
    the bound; an answer left as it was keeps its
    template-space status, with the physical bound beside it. With a template answer it
    always answers (that plan or a better one); without one, ``stats[NO_ANSWER]`` says why."""
    t0 = time.perf_counter()
    # the data and the start are built by the whole deadline (all that follows needs them);
    # only the search stops at the template share: on a busy machine the share once passed
    # while the data were built, and no answer came, with 3/4 of the limit unused (#17)
    # (deterministic mode: the search runs to its end, the deadline only the runaway cap)
    det = options.deterministic
    search_by = None if det else deadline.earlier(deadline.share(1 - TEMPLATE_SHARE))
    try:
        out = solve_templates(inst, options, deadline, hand_over=False, search_by=search_by)
    except DeadlineReached as stop:  # no data by the deadline itself: nothing to answer with
        return Outcome(Status.NO_SOLUTION, explanation=str(stop), stats={NO_ANSWER: str(stop)})
    if out.status is Status.NO_SOLUTION:
        said = {**out.stats, NO_ANSWER: out.explanation or out.status.value}
        return dataclasses.replace(out, stats=said)
    if out.solution is None:  # INFEASIBLE (a proof), as it is
        return out
    if deadline.expired():
        return with_stage_bound(inst, out, deadline, None, det)
    try:
        return _widened(inst, options, deadline, out, t0)
    except DeadlineReached as stop:  # cut short after the template answer: that answer stands
        cut = {**out.stats, "cut_short": str(stop)}
        return with_stage_bound(inst, dataclasses.replace(out, stats=cut), deadline, None, det)


#: ``decomp:physical``'s stats: why it has no template answer (and so no answer at all).
NO_ANSWER = "no_template_answer"


def _widened(
    inst: ReconfigInstance, options: SolveOptions, deadline: Deadline, out: Outcome, t0: float
) -> Outcome:
    """``decomp:physical`` after its template answer ``out``: the bound over the physical
    space, widening, then the widened plan or the template answer handed over. Deterministic
    mode (SolveOptions.deterministic): the bound's rounds run to their end, widening on
    budgets of work fixed by the limit (``budgets.work_of``), the hand-over's levels on node
    budgets, ``deadline`` only the runaway cap: no share of it and no time measured decides."""
    from .physical import widen
    from .price_bound import Gathered, mean_bound_us, priced_bound_us  # HiGHS, on first use

    assert out.solution is not None
    det = options.deterministic
    work = work_of(options.time_limit_s) if det else None
    judged = time.perf_counter()
    ours_value = evaluate(inst, out.solution)
    upper = round(ours_value[0] * 1e6)
    # what follows widening, counted in evaluations of the answer timed at this load: what
    # follows W7 in it keeps TAIL_EVALS of them back besides its share (the wall share alone
    # did not beside a CPU burner, where a row gets a quarter of a core or less); W7 keeps
    # its time (ending it earlier lost its plan there: 5.2263 s, 3.85%, against 5.4222 s)
    after_s = 0.0 if det else TAIL_EVALS * (time.perf_counter() - judged)
    known: tuple[int | None, dict[str, float]] | None = None
    ran_on: dict[str, float | str] = {}
    gathered = Gathered()  # the bound's columns and prices, for W8
    with open_executor(options) as pool:  # W6's designs (params: executor, workers)
        widening = partial(
            widen, inst, out.solution, executor=pool, counts=ran_on, keep_s=after_s, work=work
        )
        # (deterministic mode: the time left deemed what the limit leaves after the template
        # share, whatever the template answer took)
        left_s = (1 - TEMPLATE_SHARE) * options.time_limit_s if det else deadline.remaining()
        if left_s >= BOUND_FIRST_S:  # the bound first, W7's targets from it
            try:
                known = priced_bound_us(
                    inst,
                    upper,
                    deadline if det else deadline.cpu_share(BOUND_SHARE, BOUND_CPU_S, BOUND_MOST),
                    gathered=gathered,
                    deterministic=det,
                )
            except DeadlineReached:  # its share ran out while packing the hosts
                known = None
            if known is not None:  # the rounds it priced (W8 and Q8″ need BRANCH_SHORT_ROUNDS)
                known[1]["bound_rounds"] = float(len(gathered.prices))
            lower = None if known is None else known[0]
            if lower is not None and known is not None:  # Q8″: the bound at the rounds' mean
                sharper = mean_bound_us(
                    inst,
                    gathered,
                    lower,
                    upper,
                    deadline if det else deadline.cpu_share(MEAN_SHARE, MEAN_CPU_S, MEAN_MOST),
                    known[1],
                )
                known = (sharper, known[1])  # (widening's targets from the search's, as before)
            stop = phase_deadline(deadline, WIDEN_SHARE, det)
            wide = widening(stop, lower=lower, gathered=gathered)
        else:  # short of time: widening first (W7 a smaller part of it), the bound last
            stop = phase_deadline(deadline, SHORT_WIDEN_SHARE, det)
            wide = widening(stop, column_share=SHORT_COLUMN_SHARE)
        ran_on.update(pool.describe())
    judged = time.perf_counter()
    wide_value = evaluate(inst, wide)
    judge_s = time.perf_counter() - judged  # one evaluation, at this load
    if wide_value >= ours_value:
        # not widened: the template answer, with the hand-over proving L2 and L3 in the time
        # left (kept as it was if that time is too short to answer again), ending TAIL_EVALS
        # evaluations before the deadline (beside a CPU burner at a quarter of a core it took
        # 0.22 of the 0.29 s left and the 10 s row at 1,024 GPUs ended past its limit, #17)
        again = dataclasses.replace(options, hint=out.solution)
        by = deadline if det else deadline.earlier(TAIL_EVALS * judge_s)
        try:
            # not started without the time for its own start and its answer's realisation,
            # which do not stop at its deadline (HANDOVER_EVALS; deterministic mode: its
            # levels on node budgets, the runaway cap alone)
            short = not det and by.remaining() < HANDOVER_EVALS * judge_s
            handed = out if short else solve_templates(inst, again, by)
        except DeadlineReached:
            handed = out
        if (
            handed is not out
            and handed.solution is not None
            and evaluate(inst, handed.solution) <= ours_value
        ):
            out = handed
        out = dataclasses.replace(out, stats={**out.stats, **ran_on})
        return with_stage_bound(inst, out, deadline, known, det)
    stats = {
        **{k: v for k, v in out.stats.items() if k not in ("first_level_proven", "proven_over")},
        "plan_space": "physical",
        "proven_over": "physical plan space",
        "widened": 1.0,
        **ran_on,
    }
    ours = Outcome(Status.FEASIBLE, wide, build_s=out.build_s, stats=stats)
    ours = with_stage_bound(inst, ours, deadline, known, det)
    bound = ours.stats.get("physical_bound_s")
    return dataclasses.replace(
        ours,
        bound=bound if isinstance(bound, float) else None,
        explanation=PHYSICAL_NOTE,
        solve_s=time.perf_counter() - t0 - out.build_s,
    )


def solve_templates(
    inst: ReconfigInstance,
    options: SolveOptions,
    deadline: Deadline,
    hand_over: bool = True,
    search_by: Deadline | None = None,
) -> Outcome:
    """R4's search, then (``hand_over``) the monolithic model (C1–C13) from its plan, with its
    bound as C13: when L1 is proven the model only solves L2 and L3 (and may prove every
    level). ``decomp:physical`` skips the hand-over: L2 and L3 of a plan it widens are moot.
    ``search_by``: the search's deadline (else ``deadline``); the data and the start are built
    by ``deadline``, and a search left no time answers with the start."""
    t0 = time.perf_counter()
    data = data_of(inst, deadline)
    early = refuse(data)
    if early is not None:
        return early
    start = warm_start(data, options.hint, deadline)
    build_s = time.perf_counter() - t0
    by = deadline if search_by is None else search_by
    # deterministic mode: the search runs to its end (its steps' LPs and MILPs solved)
    det = options.deterministic
    search_dl = by if det else by.earlier(by.share(1 - SEARCH_SHARE))
    # R4's LPs are HiGHS's: its first import in the search's time (deterministic mode: not
    # gated), else the search is left out and the start answers, as when it has no time
    if solver_in_time(HIGHS, first_import_deadline(search_dl, det)):
        from .rate import search  # HiGHS, imported on first use (tests/test_startup.py)

        raw, bound_us, counts = search(data, start, search_dl)
    else:
        raw, bound_us, counts = start, None, {"lp": 0.0, "milp": 0.0}
    stats = {**counts, "templates": float(len(data.templates)), "kept_kinds": float(len(data.kept))}
    if counts.get("infeasible"):  # R2 over every kind proven infeasible
        return finish(inst, Outcome(Status.INFEASIBLE, explanation=INFEASIBLE, stats=stats))
    sol = None if raw is None else realise(data, raw)
    bound = None if bound_us is None else bound_us / 1e6
    if raw is not None and bound_us is not None and bound_us >= first_level_us(data, raw):
        stats["first_level_proven"] = 1.0  # L1 optimal over the templates
    ours = Outcome(
        Status.FEASIBLE if sol is not None else Status.NO_SOLUTION,
        sol,
        bound=bound,
        build_s=build_s,
        solve_s=time.perf_counter() - t0 - build_s,
        stats=stats,
        explanation=None if sol is not None else "no fixed-time plan found in time (not a proof)",
        from_hint=sol is not None and raw is start and options.hint is not None,
    )
    if sol is None or deadline.expired() or not hand_over:
        return finish(inst, ours)
    mono = partial(prepare, lb_us=bound_us, data=data)
    try:
        theirs = exact_runner(mono, ExactBackend.HIGHS)(
            inst,
            dataclasses.replace(options, hint=sol),
            deadline if det else deadline.earlier(deadline.share(PHYSICAL_SHARE)),
        )
    except DeadlineReached:
        return finish(inst, ours)
    known = [b for b in (bound, theirs.bound) if b is not None]
    best = max(known) if known else None  # both proven lower bounds of L1
    if theirs.solution is None or evaluate(inst, theirs.solution) > evaluate(inst, sol):
        return finish(inst, dataclasses.replace(ours, bound=best))
    merged = {**theirs.stats, **stats, "monolithic": 1.0}
    return dataclasses.replace(
        theirs,
        bound=best,
        build_s=build_s + theirs.build_s,
        solve_s=ours.solve_s + theirs.solve_s,
        stats=merged,
        from_hint=False,
    )

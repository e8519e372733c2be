"""``schedopt.solve``: the one entry point for every problem and method.

Time is measured here, once. Every solution is checked by the problem's independent validator
before it is returned; a violation is a bug and raises :class:`ValidationFailedError`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .errors import InvalidInstanceError, ModelTooLargeError, ValidationFailedError
from .gcpause import gc_paused
from .options import TIME_LIMIT_OVERHEAD_S, SolveOptions
from .progress import Progress, ProgressCallback, Stamped
from .registry import MethodKind, Outcome, ProblemSpec, problem_of
from .result import ObjectiveTerm, Result, Sense
from .status import Status
from .stopping import Deadline, DeadlineReached, runaway_cap_s
from .tuned import with_tuned

AUTO = "auto"

#: Share of the time limit that ``auto`` gives the heuristics before the exact model starts.
AUTO_HEURISTIC_SHARE = 0.2


def lex_better(
    a: Sequence[float], b: Sequence[float], terms: Sequence[ObjectiveTerm], rel_tol: float = 1e-9
) -> bool:
    """True when objective vector ``a`` is lexicographically strictly better than ``b``."""
    for x, y, term in zip(a, b, terms, strict=True):
        tol = rel_tol * max(1.0, abs(x), abs(y))
        if abs(x - y) <= tol:
            continue
        return x > y if term.sense is Sense.MAXIMIZE else x < y
    return False


def solve(
    instance: Any,
    method: str = AUTO,
    *,
    time_limit_s: float = 10.0,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: int = 0,
    hint: Any = None,
    params: dict[str, Any] | None = None,
    verbose: bool = False,
    deterministic: bool = False,
    warm_start: Any = None,
    options: SolveOptions | None = None,
    tuned: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
) -> Result[Any]:
    """Solve ``instance`` with ``method`` and return a validated :class:`Result`.

    ``method`` is ``"auto"`` (heuristics, then the exact model warm-started with the best of
    them, the better answer returned with an honest status), an exact back-end (``"cpsat"``,
    ``"milp:highs"``, ``"milp:cbc"``) or ``"heuristic:<name>"``; ``schedopt methods PROBLEM``
    lists them. The call returns within ``time_limit_s`` plus ``TIME_LIMIT_OVERHEAD_S``.

    ``warm_start`` is ``Result.warm_start`` of the previous round, for a method that can
    resume from it (timeshare's HiGHS basis); others ignore it.

    ``tuned`` is a parameter file written by ``schedopt tune --save``: its parameters replace
    the shipped tuned ones for the heuristics it lists, in ``auto``; with it, a heuristic named
    in ``method`` also runs with its tuned parameters (unless ``params`` is given). Without it
    only the shipped parameters are used, and only by ``auto``.

    ``on_progress`` is called with :class:`~schedopt.core.progress.Progress` events while the
    solve runs (the method and level, incumbent, bound, time left; a few a second at most);
    without it the library says nothing.
    """
    started = time.perf_counter()
    if options is None:
        options = SolveOptions(
            time_limit_s=time_limit_s,
            mip_gap=mip_gap,
            threads=threads,
            seed=seed,
            hint=hint,
            verbose=verbose,
            params=dict(params or {}),
            deterministic=deterministic,
            warm_start=warm_start,
            on_progress=on_progress,
        )
    elif on_progress is not None:
        options = replace(options, on_progress=on_progress)
    if options.on_progress is not None:
        options = replace(
            options, on_progress=Stamped(options.on_progress, started, options.time_limit_s)
        )
    try:
        spec = problem_of(instance)
    except TypeError as err:  # None, a dict, another library's object: bad input, not a bug
        raise InvalidInstanceError("instance", str(err)) from None
    if options.hint is not None and not isinstance(options.hint, spec.solution_type):
        raise InvalidInstanceError(
            "hint",
            f"must be a solution of this problem, {spec.solution_type.__name__} "
            f"(got {type(options.hint).__name__}); "
            "load one with schedopt.load_solution(instance, path)",
        )
    # Every method works to a deadline that keeps back what turning its answer into a Result
    # costs (validation, evaluation), so the promise holds at every instance size.
    # Deterministic mode trades the wall-clock promise for reproducible answers: the wall clock
    # then only stops a runaway run (the cap CP-SAT's wall-clock limit gets, stopping.py).
    wall_s = runaway_cap_s(options.time_limit_s) if options.deterministic else options.time_limit_s
    # On a busy machine validation takes longer than measured quiet: the reserve stretches
    # with the slowdown this process measures as it runs (Deadline.stretch_s).
    reserve = spec.finish_reserve_s(instance)
    deadline = Deadline(started + wall_s)
    deadline = deadline.earlier(reserve) if options.deterministic else deadline.reserving(reserve)
    if method != AUTO and spec.method(method).kind is MethodKind.HEURISTIC:
        # A heuristic's answer is what auto and callers fall back on: it keeps the plain
        # reserve (moe's heuristics at 0.5 s answered nothing with the stretched one).
        deadline = Deadline(deadline.end)
    options, tuned_params = with_tuned(spec, method, options, tuned)  # shipped or ``tuned``
    with gc_paused():
        if method == AUTO:
            name, outcome = _auto(spec, instance, options, deadline, tuned_params)
        else:
            name, outcome = method, _run(spec, method, instance, options, deadline)
        if (
            outcome.solution is None
            and options.hint is not None
            and outcome.status is Status.NO_SOLUTION
        ):
            # The previous plan is always a fallback: a method that found nothing in time does
            # not discard the caller's hint (for admission, the guarantees already given).
            name = f"{name} (hint kept)"
            outcome = replace(
                outcome,
                solution=options.hint,
                status=Status.FEASIBLE,
                from_hint=True,
                explanation=f"{outcome.explanation or outcome.status.value}; the hint is returned",
            )
        if outcome.status is Status.NO_SOLUTION and not options.deterministic:
            outcome = replace(outcome, explanation=_kept_back(outcome, deadline, started, options))
        return _finish(spec, instance, name, outcome, options, started)


def _kept_back(outcome: Outcome, deadline: Deadline, started: float, options: SolveOptions) -> str:
    """What really happened when a method answered nothing before the time was up: how much of
    the limit was kept back for checking an answer, and why (#16: "the time limit was reached"
    after 3.6 s of 10 s)."""
    said = outcome.explanation or outcome.status.value
    used = time.perf_counter() - started
    if used >= 0.8 * options.time_limit_s or not deadline.stretch_s:
        return said
    factor = deadline.stretch_factor()
    return (
        f"{said} (after {used:.1f} s of the {options.time_limit_s:g} s limit: "
        f"{deadline.stretch_s * factor:.1f} s are kept back for validating an answer, "
        f"{deadline.stretch_s:.2f} s × {factor:.1f} for this machine's load now)"
    )


def _run(
    spec: ProblemSpec, method: str, instance: Any, options: SolveOptions, deadline: Deadline
) -> Outcome:
    """One method, with a deadline reached in a phase that had nothing to return yet turned
    into an honest NO_SOLUTION."""
    runner = spec.method(method).run
    if options.on_progress is not None:
        options.on_progress(Progress(method, "started", milestone=True))
    started = time.perf_counter()
    try:
        outcome = runner(instance, options, deadline)
    except DeadlineReached as stop:
        outcome = Outcome(Status.NO_SOLUTION, explanation=str(stop))
    if outcome.build_s == 0.0 and outcome.solve_s == 0.0:
        # A method that does not split its time (a heuristic): all of it is its solve.
        outcome = replace(outcome, solve_s=time.perf_counter() - started)
    return outcome


def _auto(
    spec: ProblemSpec,
    instance: Any,
    options: SolveOptions,
    deadline: Deadline,
    tuned: dict[str, dict[str, Any]],
) -> tuple[str, Outcome]:
    exact_method = spec.auto_exact_for(instance)
    first: Outcome | None = None
    if spec.method(exact_method).decomposition:
        # A decomposition with its own starting plan runs first, with the whole limit
        # (MethodSpec.decomposition); the heuristics only stand in when it answers nothing.
        try:
            # with the plain reserve, as when called by name (a decomposition is registered
            # as a heuristic, and keeps the finish back itself): the stretched one left fair
            # share's parts 3 s less at load 6 (L2 5,804 against 10,058 by name)
            first = _run(spec, exact_method, instance, options, Deadline(deadline.end))
        except ModelTooLargeError as err:
            first = Outcome(Status.NO_SOLUTION, explanation=str(err))
        if first.solution is not None or first.status is Status.INFEASIBLE:
            return f"auto({exact_method})", first
        heuristic_deadline = deadline
    else:
        heuristic_deadline = Deadline(time.perf_counter() + deadline.share(AUTO_HEURISTIC_SHARE))
    best_name, best = None, None
    # The best answer's objectives, evaluated only once there is a second answer to compare
    # with: on 100,000 jobs an evaluation costs 0.5 s.
    best_obj: tuple[float, ...] | None = None
    notes: list[str] = []  # why heuristics answered nothing, for an honest NO_SOLUTION

    def objectives_of_best() -> tuple[float, ...]:
        nonlocal best_obj
        if best_obj is None:
            assert best is not None
            best_obj = spec.evaluate(instance, best.solution)
        return best_obj

    # Deterministic mode: every heuristic runs, with a fixed share of the limit as its work
    # budget, and the exact model gets the rest in deterministic time (SolveOptions).
    det = options.deterministic
    share = options.time_limit_s * AUTO_HEURISTIC_SHARE
    ran: list[str] = []

    def run_heuristics(until: Deadline) -> None:
        nonlocal best_name, best, best_obj
        for name in spec.auto_heuristics:
            if name in ran:
                continue
            if until.expired() and best is not None and not det:
                break
            ran.append(name)
            # Heuristics run with their tuned parameters (shipped or ``tuned=``), if any. Until
            # one has answered, a heuristic may use the whole limit: auto always wants one.
            heuristic_options = replace(options, params=tuned.get(name, {}))
            if det:
                heuristic_options = replace(heuristic_options, time_limit_s=share)
            outcome = _run(
                spec,
                name,
                instance,
                heuristic_options,
                # the first answer keeps the plain reserve, not the stretched one (see solve)
                until if best is not None else Deadline(deadline.end),
            )
            if outcome.solution is None:
                notes.append(f"{name}: {outcome.explanation or outcome.status.value}")
                continue
            if best is None:
                best_name, best = name, outcome
                continue
            obj = spec.evaluate(instance, outcome.solution)
            if lex_better(obj, objectives_of_best(), spec.terms):
                best_name, best, best_obj = name, outcome, obj

    run_heuristics(heuristic_deadline)
    heuristics_said = f" (heuristics: {'; '.join(notes)})" if notes and best is None else ""
    if first is not None:
        return _after_decomposition(exact_method, first, best_name, best, heuristics_said)
    hint = best.solution if best is not None else options.hint
    if best is not None and deadline.expired() and not det:
        # The heuristics used up the whole limit (very large instances): no time to start
        # the exact model at all, so the best heuristic answer is returned as it is.
        return f"auto({best_name})", replace(
            best, explanation="the heuristics used the whole time limit; no exact model ran"
        )
    if best is not None and not det:
        # The heuristic's objectives now, before the exact model: after it, comparing the two
        # answers then costs one evaluation, the one the finish reserve already holds (the
        # Result takes the objectives compared), so the exact model works to solve's deadline,
        # reserved once (a second reserve, stretched again on a busy machine, took 2-4 of
        # them from it; 0.7 s each at fair share's 20,000 jobs, quiet).
        objectives_of_best()
    try:
        exact_options = replace(options, hint=hint)
        if det:
            exact_options = replace(exact_options, time_limit_s=options.time_limit_s - share)
        exact = _run(spec, exact_method, instance, exact_options, deadline)
        if best is not None and exact.solution is None and exact.status is not Status.INFEASIBLE:
            # the exact model answered nothing: the heuristics the share cut off get the time
            # left (#17: a heuristic's plan returned after 4.2 s of a 10 s limit); a late
            # answer's one evaluation is again the finish's
            run_heuristics(deadline)
    except ModelTooLargeError as err:
        if best is None:
            # Nothing to return, and the instance itself is fine: an honest NO_SOLUTION.
            return f"auto({exact_method})", Outcome(
                Status.NO_SOLUTION, explanation=f"{err}{heuristics_said}"
            )
        # The exact model is refused for its size (before it is built): the heuristics the
        # share cut off get the time left, and the best heuristic answer stands, saying so.
        run_heuristics(deadline)
        assert best is not None
        return f"auto({best_name})", replace(best, objectives=best_obj, explanation=str(err))
    label = f"auto({exact_method}"
    if exact.status in (Status.OPTIMAL, Status.INFEASIBLE):
        return label + ")", exact
    if best is None:
        explanation = (exact.explanation or exact.status.value) + heuristics_said
        return label + ")", replace(exact, explanation=explanation)
    if exact.solution is not None:
        exact_obj = spec.evaluate(instance, exact.solution)
        if not lex_better(objectives_of_best(), exact_obj, spec.terms):
            return label + ")", replace(exact, objectives=exact_obj)
    if best_obj is not None:
        best = replace(best, objectives=best_obj)
    # The heuristic's answer stands; the exact model still contributes its bound.
    return f"{label} < {best_name})", _heuristic_with_bound(
        best, str(best_name), exact, exact.explanation or best.explanation
    )


def _heuristic_with_bound(best: Outcome, name: str, other: Outcome, why: str | None) -> Outcome:
    """Heuristic ``name``'s answer ``best``, FEASIBLE, with ``other``'s bound, times and stats."""
    return replace(
        best,
        status=Status.FEASIBLE,
        bound=other.bound,
        build_s=best.build_s + other.build_s,
        solve_s=best.solve_s + other.solve_s,
        explanation=why,
        stats={**other.stats, "heuristic": name},
    )


def _after_decomposition(
    method: str, first: Outcome, best_name: str | None, best: Outcome | None, said: str
) -> tuple[str, Outcome]:
    """``auto``'s answer when the decomposition it ran first answered nothing: the best
    heuristic plan found in the time left, with the decomposition's bound (of the whole
    instance), or the decomposition's own NO_SOLUTION."""
    why = first.explanation or first.status.value
    if best is None:
        return f"auto({method})", replace(first, explanation=why + said)
    return f"auto({method} < {best_name})", _heuristic_with_bound(
        best, str(best_name), first, f"{method} answered nothing ({why}); a heuristic's plan"
    )


def _finish(
    spec: ProblemSpec,
    instance: Any,
    method: str,
    outcome: Outcome,
    options: SolveOptions,
    started: float,
) -> Result[Any]:
    objectives = None
    metrics: dict[str, float] = {}
    status = outcome.status
    if outcome.solution is not None:
        violations = spec.validate(instance, outcome.solution)
        if violations and outcome.from_hint:
            # The caller's hint no longer fits this instance: not a schedopt bug, and nothing
            # else was found in time.
            first = "; ".join(str(v) for v in violations[:3])
            outcome = replace(
                outcome,
                solution=None,
                status=Status.NO_SOLUTION,
                explanation=f"{outcome.explanation}, but it violates this instance: {first}",
            )
            return _finish(spec, instance, method, outcome, options, started)
        if violations:
            raise ValidationFailedError(method, violations)
        objectives = outcome.objectives or spec.evaluate(instance, outcome.solution)
        metrics = {**spec.metrics(instance, outcome.solution), **outcome.metrics}
        if not status.has_solution:
            status = Status.FEASIBLE
    elif status.has_solution:
        status = Status.NO_SOLUTION
    bound = outcome.bound
    if objectives is not None and bound is not None:
        value, sense = objectives[0], spec.terms[0].sense
        slack = 1e-6 * max(1.0, abs(value))
        if (bound < value - slack) if sense is Sense.MAXIMIZE else (bound > value + slack):
            # A bound on the wrong side of a validated solution is no bound: report none
            # rather than a gap of 0 (and say so in the stats).
            bound = None
            outcome = replace(outcome, stats={**outcome.stats, "bound_discarded": outcome.bound})
    if status is Status.OPTIMAL and spec.methods.get(method, None) is not None:
        # Only exact back-ends may prove optimality.
        assert spec.methods[method].kind is MethodKind.EXACT, method
    return Result(
        problem=spec.name,
        status=status,
        method=method,
        terms=spec.terms,
        objectives=objectives,
        best_bound=bound,
        solution=outcome.solution,
        seed=options.seed,
        build_s=outcome.build_s,
        solve_s=outcome.solve_s,
        wall_s=time.perf_counter() - started,
        time_limit_s=options.time_limit_s,
        explanation=outcome.explanation,
        metrics=metrics,
        stats=dict(outcome.stats),
        warm_start=outcome.warm_start if outcome.solution is not None else None,
    )


__all__ = ["AUTO", "TIME_LIMIT_OVERHEAD_S", "lex_better", "solve"]

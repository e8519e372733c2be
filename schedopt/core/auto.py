"""``auto``: the heuristics, then the exact model routed for the instance, warm-started from
the best of them, and the better answer with an honest status (``schedopt.solve``'s default
method); :func:`run_method` runs one method for it and for ``solve``."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from .errors import ModelTooLargeError
from .options import SolveOptions
from .progress import Progress
from .registry import Outcome, ProblemSpec
from .result import lex_better
from .status import Status
from .stopping import Deadline, DeadlineReached

#: Share of the time limit that ``auto`` gives the heuristics before the exact model starts.
AUTO_HEURISTIC_SHARE = 0.2


def run_method(
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


def run_auto(
    spec: ProblemSpec,
    instance: Any,
    options: SolveOptions,
    deadline: Deadline,
    tuned: dict[str, dict[str, Any]],
) -> tuple[str, Outcome]:
    """``auto`` on ``instance`` by ``deadline`` (``solve``'s, the finish reserve kept back):
    (the label of what answered, its outcome). ``tuned``: the heuristics' parameters."""
    exact_method = spec.auto_exact_for(instance)
    first: Outcome | None = None
    if spec.method(exact_method).decomposition:
        # A decomposition with its own starting plan runs first, with the whole limit
        # (MethodSpec.decomposition); the heuristics only stand in when it answers nothing.
        try:
            # with the plain reserve, as when called by name (a decomposition is registered
            # as a heuristic, and keeps the finish back itself): the stretched one left fair
            # share's parts 3 s less at load 6 (L2 5,804 against 10,058 by name)
            first = run_method(spec, exact_method, instance, options, Deadline(deadline.end))
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
            outcome = run_method(
                spec,
                name,
                instance,
                heuristic_options,
                # the first answer keeps the plain reserve, not the stretched one (see solve.py);
                # in deterministic mode every heuristic works to its own budget and the
                # deadline is only the runaway cap, never a share of it cut on a busy machine
                until if best is not None and not det else Deadline(deadline.end),
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
        exact = run_method(spec, exact_method, instance, exact_options, deadline)
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

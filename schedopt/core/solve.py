"""``schedopt.solve``: the one entry point for every problem and method.

Time is measured here, once. Every solution is checked by the problem's independent validator
before it is returned; a violation is a bug and raises :class:`ValidationFailedError`.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from .auto import run_auto, run_method
from .errors import InvalidInstanceError, ValidationFailedError
from .gcpause import gc_paused
from .memo import solve_scope
from .options import TIME_LIMIT_OVERHEAD_S, SolveOptions
from .progress import ProgressCallback, Stamped
from .registry import MethodKind, Outcome, ProblemSpec, problem_of
from .result import Result, Sense, lex_better
from .status import Status
from .stopping import Deadline, runaway_cap_s
from .tuned import with_tuned

AUTO = "auto"


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
    # A method that cannot honour deterministic mode (MethodSpec.reproducible; auto by the
    # method it routes this instance to) still runs to the runaway cap: its wall-clock shares
    # of that cap let its steps run to their end where they can (the same plan inline and on
    # a process pool, tests/moe_placement/test_process_parts.py), but nothing guarantees it:
    # the Result says so.
    follows_clock = _follows_the_clock(spec, method, instance) if options.deterministic else None
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
    with gc_paused(), solve_scope():  # what its phases build once, dropped at its end
        if method == AUTO:
            name, outcome = run_auto(spec, instance, options, deadline, tuned_params)
        else:
            name, outcome = method, run_method(spec, method, instance, options, deadline)
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
        if follows_clock is not None:
            said = f"not honoured: {follows_clock} follows the wall clock (SolveOptions)"
            outcome = replace(outcome, stats={**outcome.stats, "deterministic": said})
        return _finish(spec, instance, name, outcome, options, started)


def _follows_the_clock(spec: ProblemSpec, method: str, instance: Any) -> str | None:
    """The method that would answer ``instance`` (for ``auto``, the one it routes it to) if
    it cannot honour deterministic mode (MethodSpec.reproducible), else None."""
    name = spec.auto_exact_for(instance) if method == AUTO else method
    return None if spec.method(name).reproducible else name


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


# (lex_better is result.py's, named here too: cosched and admission import it from here)
__all__ = ["AUTO", "TIME_LIMIT_OVERHEAD_S", "lex_better", "solve"]

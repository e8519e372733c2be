"""Bayesian tuning of heuristic parameters: scikit-optimize's ``Optimizer``, ask/tell in
batches.

A run evaluates the defaults first (they are the reference every score is normalised by, see
:mod:`.score`), then asks the Gaussian-process optimiser for ``batch`` points at a time
(``strategy="cl_min"``, the constant liar: the points of one batch are spread out as if the
pending ones had scored the best value so far), evaluates every (point, instance) pair as one
task on an :class:`~schedopt.executor.Executor` (in-process, a process pool or Ray), and tells
the optimiser the mean scores. After each batch a checkpoint records every point and what it
found, so an interrupted run resumes where it stopped.

The best point is then checked on **held-out** instances against the defaults; it is worth
shipping (:attr:`TuningResult.wins_held_out`) only where it beats them there, not only on the
instances it was tuned on.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, cast

from schedopt.core.checksum import instance_checksum
from schedopt.core.registry import MethodKind, ProblemSpec, problem_of
from schedopt.core.result import ObjectiveTerm
from schedopt.executor import Executor, InlineExecutor, Task

from .checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from .evaluate import evaluate
from .score import Objectives, improvement, instance_score, mean_score

#: The smallest improvement over the defaults, in per cent of their score, that counts as a
#: win on held-out instances.
MIN_GAIN_PCT = 0.1

#: ``progress(evaluated_points, total_points, params, score)``: called after each point.
Progress = Callable[[int, int, dict[str, Any], float], None]


class _Tunable(Protocol):
    """A heuristic's parameter class: its search space, field → (low, high)."""

    SPACE: ClassVar[Mapping[str, tuple[float, float]]]


@dataclass(frozen=True)
class TuningResult:
    """The outcome of :func:`tune`. Scores: lower is better, defaults = the reference (see
    :mod:`schedopt.tuning.score`); ``held_out_*`` are None when no held-out instance was
    given."""

    problem: str
    method: str
    params: dict[str, Any]
    score: float
    default_score: float
    evaluations: int
    seconds: float
    held_out_score: float | None = None
    held_out_default_score: float | None = None
    #: Standard deviation over held-out instances of the per-instance gain (defaults − best).
    held_out_spread: float | None = None

    @property
    def gain_pct(self) -> float:
        """Improvement over the defaults on the training instances, in per cent."""
        return improvement(self.score, self.default_score)

    @property
    def held_out_gain_pct(self) -> float | None:
        """Improvement over the defaults on the held-out instances, in per cent."""
        if self.held_out_score is None or self.held_out_default_score is None:
            return None
        return improvement(self.held_out_score, self.held_out_default_score)

    @property
    def wins_held_out(self) -> bool:
        """The tuned parameters beat the defaults on the held-out instances (on the training
        ones when there are none) by at least :data:`MIN_GAIN_PCT`: only then are they worth
        shipping (a smaller difference is noise, not a better heuristic)."""
        gain = self.held_out_gain_pct
        return (self.gain_pct if gain is None else gain) >= MIN_GAIN_PCT

    def entry(self, tuned_on: Sequence[str], held_out_on: Sequence[str] = ()) -> dict[str, Any]:
        """What a parameter file records for this method (``store.save_tuned``)."""
        out: dict[str, Any] = {
            "params": self.params,
            "score": self.score,
            "default_score": self.default_score,
            "evaluations": self.evaluations,
            "tuned_on": list(tuned_on),
        }
        if self.held_out_score is not None:
            out |= {
                "held_out_on": list(held_out_on),
                "held_out_score": self.held_out_score,
                "held_out_default_score": self.held_out_default_score,
                "held_out_spread": self.held_out_spread,
            }
        return out


def tunable_space(spec: ProblemSpec, method: str) -> tuple[list[str], list[Any], list[Any]]:
    """The parameter names of ``method``, its scikit-optimize dimensions and its defaults."""
    from skopt.space import Integer, Real  # heavy import, only when tuning

    m = spec.method(method)
    if m.kind is not MethodKind.HEURISTIC or m.params is None:
        raise ValueError(f"{method!r} has no tunable parameters")
    names = [f.name for f in fields(m.params)]
    bounds = cast("type[_Tunable]", m.params).SPACE
    defaults = [getattr(m.params(), n) for n in names]
    space: list[Any] = []
    for name, default in zip(names, defaults, strict=True):
        low, high = bounds[name]
        is_int = isinstance(default, int)
        space.append(
            Integer(int(low), int(high), name=name) if is_int else Real(low, high, name=name)
        )
    return names, space, defaults


def _points_in(space: Sequence[Any]) -> int | float:
    """How many distinct points ``space`` has (infinite with a real dimension)."""
    from skopt.space import Integer

    total: int | float = 1
    for dim in space:
        if not isinstance(dim, Integer):
            return math.inf
        total *= int(dim.high) - int(dim.low) + 1
    return total


def _typed(space: Sequence[Any], names: Sequence[str], x: Sequence[Any]) -> dict[str, Any]:
    from skopt.space import Integer

    return {
        n: (int(v) if isinstance(dim, Integer) else float(v))
        for n, dim, v in zip(names, space, x, strict=True)
    }


#: ``evaluate(method, case, params) -> objectives or None``: one run of ``method`` with
#: ``params`` on one case (an instance, a replay episode). Module-level (or a
#: ``functools.partial`` of one) so that any executor can run it by reference.
Evaluate = Callable[[str, Any, dict[str, Any]], "Sequence[float] | None"]


def evaluate_points(
    executor: Executor,
    evaluate_fn: Evaluate,
    method: str,
    cases: Sequence[Any],
    points: Sequence[dict[str, Any]],
) -> list[list[Objectives | None]]:
    """``found[p][i]``: what point ``p`` reaches on case ``i`` (None: nothing, or the task
    failed). One task per pair, so a pool spreads them all."""
    tasks = [
        Task(f"{p}/{i}", evaluate_fn, (method, case, params))
        for p, params in enumerate(points)
        for i, case in enumerate(cases)
    ]
    found: list[list[Objectives | None]] = [[None] * len(cases) for _ in points]
    for row in executor.run(tasks):
        p, i = (int(k) for k in row.key.split("/"))
        if row.error is not None:
            # A heuristic that crashes on a valid case is a bug to see, not a bad score.
            raise RuntimeError(f"{method} with {points[p]} failed on case {i}: {row.error}")
        if row.ok and row.value is not None:
            found[p][i] = tuple(row.value)
    return found


def tune(
    method: str,
    instances: Sequence[Any],
    *,
    held_out: Sequence[Any] = (),
    n_calls: int = 20,
    batch: int = 1,
    seed: int = 0,
    time_limit_s: float = 10.0,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> TuningResult:
    """Tune ``method`` (a heuristic with a ``params`` dataclass) on ``instances``: the score
    of a point is its objectives on each instance (:mod:`.score`).

    ``n_calls`` points are evaluated in all, the defaults first; ``batch`` points are asked of
    the optimiser at a time and evaluated in parallel on ``executor`` (default: in this
    process). ``checkpoint`` is a file recording every evaluation; a run given the file of an
    interrupted run resumes from it. The best point is re-evaluated against the defaults on
    ``held_out``.
    """
    if not instances:
        raise ValueError("tune needs at least one instance")
    spec = problem_of(instances[0])
    return search(
        spec,
        method,
        instances,
        functools.partial(evaluate, time_limit_s=time_limit_s, seed=seed),
        spec.terms,
        case_ids=[instance_checksum(i) for i in instances],
        held_out=held_out,
        n_calls=n_calls,
        batch=batch,
        seed=seed,
        executor=executor,
        checkpoint=checkpoint,
        progress=progress,
    )


def search(
    spec: ProblemSpec,
    method: str,
    cases: Sequence[Any],
    evaluate_fn: Evaluate,
    terms: Sequence[ObjectiveTerm],
    *,
    case_ids: Sequence[str],
    held_out: Sequence[Any] = (),
    n_calls: int = 20,
    batch: int = 1,
    seed: int = 0,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    initial: Sequence[dict[str, Any]] = (),
) -> TuningResult:
    """The Bayesian search behind :func:`tune` and policy tuning (:mod:`.policy`): points of
    ``method``'s parameter space scored by ``evaluate_fn`` on every case, objectives read in
    the sense of ``terms``. ``initial``: points evaluated right after the defaults (a warm
    start, e.g. the best of the previous tuning window). ``case_ids`` name the cases in the
    checkpoint."""
    from skopt import Optimizer  # heavy import, only when tuning

    if not cases:
        raise ValueError("tuning needs at least one case")
    if batch < 1:
        raise ValueError(f"batch must be >= 1 (got {batch})")
    names, space, defaults = tunable_space(spec, method)
    n_calls = max(n_calls, 6 + len(initial))  # the defaults, then at least five more points
    # A space of a few whole-number points (a switch, say) is searched once through, not
    # sampled again and again.
    n_calls = int(min(n_calls, _points_in(space)))
    runner = executor if executor is not None else InlineExecutor()
    started = time.perf_counter()

    state = Checkpoint(spec.name, method, names, list(case_ids))
    if checkpoint is not None:
        state = load_checkpoint(checkpoint, state)

    def record(xs: Sequence[Sequence[Any]]) -> None:
        found = evaluate_points(
            runner, evaluate_fn, method, cases, [_typed(space, names, x) for x in xs]
        )
        for x, f in zip(xs, found, strict=True):
            state.points.append([float(v) for v in x])
            state.found.append([list(o) if o is not None else None for o in f])
        if checkpoint is not None:
            save_checkpoint(checkpoint, state)

    def as_found(row: list[list[float] | None]) -> list[Objectives | None]:
        return [tuple(o) if o is not None else None for o in row]

    # An executor made here is closed here; a caller's stays open for the caller.
    with runner if executor is None else contextlib.nullcontext():
        if not state.points:
            record([defaults, *([p[n] for n in names] for p in initial)])
        # Normalisers: the defaults' objectives; where the defaults found nothing, the first
        # solution any evaluation found (in evaluation order), so that one case the defaults
        # fail on does not weigh hundreds of times more than the rest.
        reference: list[Objectives | None] = as_found(state.found[0])

        def score_of(row: list[list[float] | None]) -> float:
            found = as_found(row)
            for i, objectives in enumerate(found):
                if reference[i] is None and objectives is not None:
                    reference[i] = objectives
            return mean_score(terms, found, reference)

        opt = Optimizer(space, n_initial_points=max(1, min(5, n_calls - 1)), random_state=seed)
        scores = [score_of(row) for row in state.found]
        opt.tell([list(_typed(space, names, x).values()) for x in state.points], scores)
        if progress:
            for k, (x, s) in enumerate(zip(state.points, scores, strict=True), start=1):
                progress(k, n_calls, _typed(space, names, x), s)
        while len(state.points) < n_calls:
            k = min(batch, n_calls - len(state.points))
            with warnings.catch_warnings():
                # "evaluated at point ... before, using random point": expected in small
                # spaces, and handled (a random point instead).
                warnings.filterwarnings("ignore", category=UserWarning, module="skopt")
                xs = opt.ask(n_points=k, strategy="cl_min") if k > 1 else [opt.ask()]
            before = len(state.points)
            record(xs)
            new = [score_of(row) for row in state.found[before:]]
            opt.tell([list(x) for x in xs], new)
            scores.extend(new)
            if progress:
                for j, (x, s) in enumerate(zip(xs, new, strict=True), start=before + 1):
                    progress(j, n_calls, _typed(space, names, x), s)

        best_at = min(range(len(scores)), key=lambda j: (scores[j], j))
        result = TuningResult(
            spec.name,
            method,
            _typed(space, names, state.points[best_at]),
            scores[best_at],
            scores[0],
            len(state.points),
            time.perf_counter() - started,
        )
        if held_out:
            result = _check_held_out(
                result, runner, evaluate_fn, terms, held_out, _typed(space, names, defaults)
            )
    return result


def _check_held_out(
    result: TuningResult,
    executor: Executor,
    evaluate_fn: Evaluate,
    terms: Sequence[ObjectiveTerm],
    held_out: Sequence[Any],
    defaults: dict[str, Any],
) -> TuningResult:
    """``result`` with the scores of its parameters and of the defaults on ``held_out``."""
    base, tuned = evaluate_points(
        executor, evaluate_fn, result.method, held_out, [defaults, result.params]
    )
    reference = [b if b is not None else t for b, t in zip(base, tuned, strict=True)]
    gains = [
        instance_score(terms, b, r) - instance_score(terms, t, r)
        for b, t, r in zip(base, tuned, reference, strict=True)
    ]
    average = sum(gains) / len(gains)
    spread = math.sqrt(sum((g - average) ** 2 for g in gains) / len(gains))
    return TuningResult(
        **{
            **result.__dict__,
            "held_out_score": mean_score(terms, tuned, reference),
            "held_out_default_score": mean_score(terms, base, reference),
            "held_out_spread": spread,
        }
    )


__all__ = [
    "MIN_GAIN_PCT",
    "Evaluate",
    "Progress",
    "TuningResult",
    "evaluate_points",
    "search",
    "tunable_space",
    "tune",
]

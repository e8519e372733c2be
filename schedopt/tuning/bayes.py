"""Bayesian tuning of heuristic parameters with scikit-optimize's ``gp_minimize``.

The score of a parameter vector is the mean, over the training instances, of the heuristic's
lexicographic objective collapsed to one number: each level normalised by a reference (the
default parameters' value, so 1.0 = as good as the defaults; where the defaults find nothing, the
first solution found), weighted 1, 1e-3, 1e-6, … by level so that the first objective dominates,
signed so that lower is better (it is minimised); an instance without a solution scores +10.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, cast

from schedopt.core.registry import MethodKind, problem_of
from schedopt.core.result import Sense
from schedopt.core.solve import solve

#: Weight of each lexicographic level in the score: each level 1000 times less than the one
#: before (as many levels as any problem has).
LEVEL_WEIGHTS = (1.0, 1e-3, 1e-6, 1e-9, 1e-12)


class _Tunable(Protocol):
    """A heuristic's parameter class: its search space, field → (low, high)."""

    SPACE: ClassVar[Mapping[str, tuple[float, float]]]


@dataclass(frozen=True)
class TuningResult:
    problem: str
    method: str
    params: dict[str, Any]
    score: float  # mean normalised score of ``params`` (lower is better; defaults = -1.0)
    default_score: float
    evaluations: int
    seconds: float

    def entry(self, tuned_on: Sequence[str]) -> dict[str, Any]:
        return {
            "params": self.params,
            "score": self.score,
            "default_score": self.default_score,
            "evaluations": self.evaluations,
            "tuned_on": list(tuned_on),
        }


def _score(spec, results, reference) -> float:
    total = 0.0
    for objectives, ref in zip(results, reference, strict=True):
        if objectives is None or ref is None:
            total += 10.0  # no solution: far worse than any solution (each level scores ~1)
            continue
        for w, term, value, base in zip(LEVEL_WEIGHTS, spec.terms, objectives, ref, strict=False):
            # A level whose reference is ~0 (no best-effort progress at all) is scored in its
            # own units; dividing by ~0 would let it drown the first level.
            scale = max(abs(base), 1.0)
            signed = -value if term.sense is Sense.MAXIMIZE else value
            total += w * signed / scale
    return total / len(results)


def tune(
    method: str,
    instances: Sequence[Any],
    *,
    n_calls: int = 20,
    seed: int = 0,
    time_limit_s: float = 10.0,
    progress: Callable[[int, dict[str, Any], float], None] | None = None,
) -> TuningResult:
    """Tune ``method`` (a heuristic with a ``params`` dataclass) on ``instances``."""
    from skopt import gp_minimize  # heavy import, only when tuning
    from skopt.space import Integer, Real

    if not instances:
        raise ValueError("tune needs at least one instance")
    spec = problem_of(instances[0])
    m = spec.method(method)
    if m.kind is not MethodKind.HEURISTIC or m.params is None:
        raise ValueError(f"{method!r} has no tunable parameters")
    names = [f.name for f in fields(m.params)]
    # MethodSpec.params is typed as a plain ``type``; a heuristic's parameter class has SPACE.
    bounds = cast("type[_Tunable]", m.params).SPACE
    space = []
    for name in names:
        low, high = bounds[name]
        is_int = isinstance(getattr(m.params(), name), int)
        space.append(
            Integer(int(low), int(high), name=name) if is_int else Real(low, high, name=name)
        )

    def run(params: dict[str, Any]) -> list[tuple[float, ...] | None]:
        return [
            solve(inst, method, time_limit_s=time_limit_s, params=params).objectives
            for inst in instances
        ]

    started = time.perf_counter()
    defaults_found = run({})
    # Per-instance normalisers: the defaults' objectives; where the defaults found nothing,
    # the first solution any evaluation finds (fixed from then on), so that one instance the
    # defaults fail on does not weigh hundreds of times more than the rest.
    reference: list[tuple[float, ...] | None] = list(defaults_found)
    calls = 0

    def score(found: list[tuple[float, ...] | None]) -> float:
        for i, objectives in enumerate(found):
            if reference[i] is None and objectives is not None:
                reference[i] = objectives
        return _score(spec, found, reference)

    default_score = score(defaults_found)

    def objective(x: list[Any]) -> float:
        nonlocal calls
        params = {
            n: (int(v) if isinstance(space[i], Integer) else float(v))
            for i, (n, v) in enumerate(zip(names, x, strict=True))
        }
        value = score(run(params))
        calls += 1
        if progress:
            progress(calls, params, value)
        return value

    defaults = [getattr(m.params(), n) for n in names]
    n_calls = max(n_calls, 6)  # the defaults, then at least five more points
    res = gp_minimize(
        objective,
        space,
        n_calls=n_calls,
        x0=[defaults],
        random_state=seed,
        n_initial_points=min(5, n_calls - 1),
    )
    best = {
        n: (int(v) if isinstance(space[i], Integer) else float(v))
        for i, (n, v) in enumerate(zip(names, res.x, strict=True))
    }
    if res.fun > default_score:  # never record something worse than the defaults
        best, best_score = {n: getattr(m.params(), n) for n in names}, default_score
    else:
        best_score = float(res.fun)
    return TuningResult(
        spec.name, method, best, best_score, default_score, calls, time.perf_counter() - started
    )


__all__ = ["TuningResult", "tune"]

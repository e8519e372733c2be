"""Policy-level tuning (AutoSched, ICS'24): tune a heuristic's knobs on replays of a trace,
scored by what a scheduler cares about over time (deadline misses and JCT, ETTR, SLO
attainment), not on single instances; and re-tune as the workload drifts.

A problem offers replays through its :class:`~schedopt.core.registry.PolicySpec`: episodes cut
from a trace and a module-level ``evaluate(method, episode, params)`` returning the episode's
metrics. :func:`tune_policy` runs the same Bayesian search as instance tuning over episodes;
:func:`sliding_retune` tunes window after window, each warm-started from the previous window's
best point, and scores every window with the parameters tuned on the windows before it: the
parameters a scheduler re-tuning once per window would have used there.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from schedopt.core.registry import PolicySpec, ProblemSpec
from schedopt.executor import Executor, InlineExecutor

from .bayes import Progress, TuningResult, evaluate_points, search


def policy_of(spec: ProblemSpec) -> PolicySpec:
    if spec.policy is None:
        raise ValueError(f"{spec.name} has no replay to tune a policy on")
    return spec.policy


def tune_policy(
    spec: ProblemSpec,
    method: str,
    episodes: Sequence[Any],
    *,
    held_out: Sequence[Any] = (),
    n_calls: int = 20,
    batch: int = 1,
    seed: int = 0,
    executor: Executor | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    initial: Sequence[dict[str, Any]] = (),
) -> TuningResult:
    """Tune ``method`` on the replay ``episodes`` of ``spec``'s policy (its metrics, in their
    sense, normalised by the defaults' on each episode as in :mod:`.score`)."""
    policy = policy_of(spec)
    return search(
        spec,
        method,
        episodes,
        policy.evaluate,
        policy.terms,
        case_ids=[getattr(e, "name", str(k)) for k, e in enumerate(episodes)],
        held_out=held_out,
        n_calls=n_calls,
        batch=batch,
        seed=seed,
        executor=executor,
        checkpoint=checkpoint,
        progress=progress,
        initial=initial,
    )


@dataclass(frozen=True)
class WindowScore:
    """One window of a sliding re-tune: its metrics with the defaults, with the parameters
    tuned once on the first window, and with those re-tuned on the window before it."""

    window: str
    defaults: tuple[float, ...] | None
    one_time: tuple[float, ...] | None
    sliding: tuple[float, ...] | None
    sliding_params: dict[str, Any]


def sliding_retune(
    spec: ProblemSpec,
    method: str,
    windows: Sequence[Any],
    *,
    n_calls: int = 12,
    batch: int = 1,
    seed: int = 0,
    executor: Executor | None = None,
) -> list[WindowScore]:
    """Tune on ``windows[0]``; then for each later window ``k``: score the defaults, the
    first tuning and the tuning of window ``k-1`` on window ``k`` (held out from the tuning
    that is applied to it), and re-tune on window ``k`` warm-started from window ``k-1``'s
    best point."""
    policy = policy_of(spec)
    first = tune_policy(
        spec, method, windows[:1], n_calls=n_calls, batch=batch, seed=seed, executor=executor
    )
    defaults = _defaults(spec, method)
    current = first.params
    out: list[WindowScore] = []
    runner = executor if executor is not None else InlineExecutor()
    for k in range(1, len(windows)):
        window = windows[k]
        base, once, slide = evaluate_points(
            runner, policy.evaluate, method, [window], [defaults, first.params, current]
        )
        out.append(
            WindowScore(getattr(window, "name", str(k)), base[0], once[0], slide[0], dict(current))
        )
        if k + 1 < len(windows):
            current = tune_policy(
                spec,
                method,
                [window],
                n_calls=n_calls,
                batch=batch,
                seed=seed,
                executor=executor,
                initial=[current],
            ).params
    return out


def _defaults(spec: ProblemSpec, method: str) -> dict[str, Any]:
    params = spec.method(method).params
    assert params is not None
    return asdict(params())


__all__ = ["WindowScore", "policy_of", "sliding_retune", "tune_policy"]

"""Cost efficiency (steps per dollar) relative to RollMux's two baselines on one instance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from schedopt.core.options import SolveOptions
from schedopt.core.registry import Outcome, Runner
from schedopt.core.stopping import Deadline

from .heuristics import solve_colocated, solve_disaggregated
from .instance import CoschedInstance
from .solution import CoschedSolution
from .validate import metrics

#: Seconds each baseline may take when a result reports its efficiency against it.
BASELINE_S = 0.3


def baseline_metrics(
    inst: CoschedInstance, sol: CoschedSolution, deadline: Deadline
) -> dict[str, float]:
    """``efficiency_vs_disaggregated`` and ``efficiency_vs_colocated``: this solution's steps
    per dollar over the baseline's (omitted where the baseline finds no plan)."""
    out: dict[str, float] = {}
    mine = metrics(inst, sol)["steps_per_dollar"]
    budget = min(BASELINE_S, deadline.remaining() / 4)
    if budget < 0.02:  # no time left to compare: the result says nothing rather than late
        return out
    for name, run in (("disaggregated", solve_disaggregated), ("colocated", solve_colocated)):
        outcome = run(inst, SolveOptions(time_limit_s=budget), Deadline.after(budget))
        if outcome.solution is not None:
            theirs = metrics(inst, outcome.solution)["steps_per_dollar"]
            if theirs > 0:
                out[f"efficiency_vs_{name}"] = mine / theirs
    return out


def with_efficiency(run: Runner) -> Runner:
    """``run`` whose solutions also report their efficiency against both baselines."""

    def wrapped(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        outcome = run(inst, options, deadline)
        if outcome.solution is None:
            return outcome
        extra = baseline_metrics(inst, outcome.solution, deadline)
        return replace(outcome, metrics={**outcome.metrics, **extra})

    return wrapped


Metrics = Callable[[], dict[str, float]]

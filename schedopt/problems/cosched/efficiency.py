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
from .validate import basic_metrics

#: Seconds each baseline may take when a result reports its efficiency against it (at most;
#: a heuristic gives a quarter of what it has left, an exact method 5% of its time limit,
#: since it has used the rest).
BASELINE_S = 0.3
EXACT_SHARE = 0.05


def unbounded(inst: CoschedInstance) -> CoschedInstance:
    """The instance with as many hosts as one group per job could need: RollMux compares
    the cost a baseline needs for the same jobs, on however many hosts it takes."""
    need = sum(
        max(-(-o.gpus // p.gpus_per_host) for ph in j.phases for o in ph.options) + 1
        for j in inst.jobs
        for p in inst.pools[:1]
    )
    pools = tuple(p.model_copy(update={"hosts": max(p.hosts, need * 4)}) for p in inst.pools)
    return inst.model_copy(update={"pools": pools})


def baseline_metrics(
    inst: CoschedInstance, sol: CoschedSolution, budget: float
) -> dict[str, float]:
    """Against each baseline (``disaggregated``, ``colocated``), sized on as many hosts as it
    needs (:func:`unbounded`): ``cost_efficiency_vs_<b>``, the baseline's hourly cost over this
    solution's for the same jobs at 100% SLO attainment (RollMux's cost efficiency), and
    ``steps_per_dollar_vs_<b>``, steps per dollar over the baseline's (faster than the SLO
    counts too). Omitted where the baseline finds no plan in its time."""
    out: dict[str, float] = {}
    mine = basic_metrics(inst, sol)
    if budget < 0.01:  # no time left to compare: the result says nothing rather than late
        return out
    roomy = unbounded(inst)
    for name, run in (("disaggregated", solve_disaggregated), ("colocated", solve_colocated)):
        outcome = run(roomy, SolveOptions(time_limit_s=budget), Deadline.after(budget))
        if outcome.solution is not None:
            theirs = basic_metrics(roomy, outcome.solution)
            if mine["cost_per_hour"] > 0:
                out[f"cost_efficiency_vs_{name}"] = theirs["cost_per_hour"] / mine["cost_per_hour"]
            if theirs["steps_per_dollar"] > 0:
                out[f"steps_per_dollar_vs_{name}"] = (
                    mine["steps_per_dollar"] / theirs["steps_per_dollar"]
                )
    return out


def with_efficiency(run: Runner) -> Runner:
    """``run`` whose solutions also report their efficiency against both baselines."""

    def wrapped(inst: CoschedInstance, options: SolveOptions, deadline: Deadline) -> Outcome:
        outcome = run(inst, options, deadline)
        if outcome.solution is None:
            return outcome
        budget = min(BASELINE_S, deadline.remaining() / 4)
        extra = baseline_metrics(inst, outcome.solution, budget)
        return replace(outcome, metrics={**outcome.metrics, **extra})

    return wrapped


Metrics = Callable[[], dict[str, float]]

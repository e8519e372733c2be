"""Why a co-scheduling instance is infeasible: a smallest conflicting set of jobs."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedopt.core.stopping import Deadline
from schedopt.model.explain import CHECK_TIME_S, CheckBudget, deletion_filter

from .data import JobData, ModelData

FeasibleTogether = Callable[[ModelData, Sequence[JobData], float], "bool | None"]


def explain_infeasible(
    data: ModelData, deadline: Deadline, feasible_together: FeasibleTogether
) -> str:
    no_option = [j.id for j in data.jobs if any(not opts for opts in j.phases)]
    if no_option:
        return (
            "no option fits: "
            + ", ".join(repr(j) for j in no_option)
            + " has a phase whose every option needs a TP group wider than a host or lasts "
            "longer than the job's SLO"
        )
    budget = CheckBudget(deadline, spare=2.0)
    alone = []
    for job in data.jobs:  # the common case: an SLO no plan meets even alone
        if not budget.take():
            break
        if feasible_together(data, [job], CHECK_TIME_S) is False:
            alone.append(job.id)
    if alone:
        return (
            "SLOs cannot all be met: "
            + ", ".join(repr(a) for a in alone)
            + " cannot meet its SLO even alone on the whole cluster (a smallest conflicting set)"
        )
    every_job_tried = budget.checks == len(data.jobs)
    found = deletion_filter(
        data.jobs, lambda rest: feasible_together(data, rest, CHECK_TIME_S), budget
    )
    names = ", ".join(repr(j.id) for j in found.items)
    minimal = every_job_tried and found.minimal
    return f"SLOs cannot all be met: the jobs {names} cannot all meet their SLOs on the hosts " + (
        "(a minimal conflicting set)" if minimal else "(the set may not be minimal)"
    )

"""Why a co-scheduling instance is infeasible: a smallest conflicting set of jobs."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedopt.core.stopping import Deadline

from .data import JobData, ModelData

#: Seconds at most per feasibility check, and checks at most.
CHECK_TIME_S = 1.0
MAX_CHECKS = 40

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
    alone = []
    checks = 0
    for job in data.jobs:  # the common case: an SLO no plan meets even alone
        if checks >= MAX_CHECKS or deadline.remaining() < 2 * CHECK_TIME_S:
            break
        checks += 1
        if feasible_together(data, [job], CHECK_TIME_S) is False:
            alone.append(job.id)
    if alone:
        return (
            "SLOs cannot all be met: "
            + ", ".join(repr(a) for a in alone)
            + " cannot meet its SLO even alone on the whole cluster (a smallest conflicting set)"
        )
    core = list(data.jobs)
    complete = checks == len(data.jobs)
    for job in list(data.jobs):  # deletion filter
        if checks >= MAX_CHECKS or deadline.remaining() < 2 * CHECK_TIME_S:
            complete = False
            break
        rest = [j for j in core if j is not job]
        if not rest:
            continue
        checks += 1
        together = feasible_together(data, rest, CHECK_TIME_S)
        if together is False:
            core = rest
        elif together is None:  # kept without a proof that the rest fits: maybe not minimal
            complete = False
    names = ", ".join(repr(j.id) for j in core)
    return f"SLOs cannot all be met: the jobs {names} cannot all meet their SLOs on the hosts " + (
        "(a minimal conflicting set)" if complete else "(the set may not be minimal)"
    )

"""Why an admission instance is infeasible: which earlier guarantees cannot all be kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedopt.core.stopping import Deadline

from .data import JobData, ModelData

#: Seconds at most per feasibility check of the deletion filter, and checks at most.
CHECK_TIME_S = 1.0
MAX_CHECKS = 40

FeasibleTogether = Callable[[ModelData, Sequence[JobData], float], "bool | None"]


def explain_infeasible(
    data: ModelData, deadline: Deadline, feasible_together: FeasibleTogether
) -> str:
    admitted = [j for j in data.jobs if j.is_slo and j.admitted_before]
    alone = [j.id for j in admitted if data.best_alone_tier(j) is None]
    if alone:
        return (
            "earlier guarantees cannot be kept: "
            + ", ".join(repr(a) for a in alone)
            + " cannot meet even its last deadline alone on the free GPUs"
        )
    # Deletion filter: drop each job in turn; keep it out if the rest is still infeasible.
    core = list(admitted)
    checks = 0
    for job in list(admitted):
        if checks >= MAX_CHECKS or deadline.remaining() < CHECK_TIME_S:
            break
        rest = [j for j in core if j is not job]
        checks += 1
        if rest and feasible_together(data, rest, CHECK_TIME_S) is False:
            core = rest
    names = ", ".join(repr(j.id) for j in core)
    minimal = checks == len(admitted)
    return (
        f"earlier guarantees cannot all be kept: the admitted jobs {names} cannot all meet "
        f"their deadlines together on the free GPUs"
        + (" (a minimal conflicting set)" if minimal else " (the set may not be minimal)")
    )

"""Why an admission instance is infeasible: which earlier guarantees cannot all be kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedopt.core.stopping import Deadline
from schedopt.model.explain import CHECK_TIME_S, CheckBudget, deletion_filter

from .data import JobData, ModelData

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
    found = deletion_filter(
        admitted,
        lambda rest: feasible_together(data, rest, CHECK_TIME_S),
        CheckBudget(deadline),
    )
    core, minimal = found.items, found.minimal
    names = ", ".join(repr(j.id) for j in core)
    return (
        f"earlier guarantees cannot all be kept: the admitted jobs {names} cannot all meet "
        f"their deadlines together on the free GPUs"
        + (" (a minimal conflicting set)" if minimal else " (the set may not be minimal)")
    )

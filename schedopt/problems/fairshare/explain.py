"""Why a round is infeasible, and the Gavel LP's minimum share reported beside a result."""

from __future__ import annotations

from schedopt.core.registry import Outcome
from schedopt.core.status import Status
from schedopt.core.stopping import Deadline

from .data import BUILD_S_PER_VARIABLE, ModelData
from .placement import Raw, assemble

#: The Gavel LP is solved for the stats only if this many times its estimated build time is left.
GAVEL_STATS_MARGIN = 4.0


def explain_infeasible(data: ModelData) -> str:
    """Only C5 (hard guarantees) and C6 (preemption cap) can make a round infeasible."""
    inst = data.instance
    parts = []
    cap = inst.max_preemptions
    if cap is not None and data.forced_preemptions > cap:
        stuck = [j.id for j in data.jobs if j.was_running and not j.keepable]
        parts.append(
            f"{data.forced_preemptions} running jobs cannot keep their allocation "
            f"({', '.join(stuck[:10])}) but max_preemptions is {cap}"
        )
    overfull = [
        h for h, entries in data.keep_hosts.items() if sum(n for _, n in entries) > data.free[h]
    ]
    if cap is not None and overfull and not parts:
        parts.append(
            f"the running jobs' previous allocations on {', '.join(overfull[:10])} exceed the "
            f"free GPUs there, so some must move, but max_preemptions is {cap}"
        )
    guaranteed = {u.id: u.guarantee for u in data.tenants if u.guarantee}
    if guaranteed:
        parts.append(
            "the hard guarantees "
            + ", ".join(f"{k}: {v}" for k, v in guaranteed.items())
            + " GPUs cannot all be met with the jobs' gang sizes and GPU types"
            + ("" if cap is None else f" within {cap} preemptions")
        )
    return "; ".join(parts) or "no allocation satisfies C1–C7"


def gavel_stats(data: ModelData, deadline: Deadline) -> dict[str, float]:
    """``gavel_lp_min_share``: the continuous LP's minimum share, when there is time for it."""
    from .gavel import solve_data

    estimate = GAVEL_STATS_MARGIN * BUILD_S_PER_VARIABLE * data.num_variables
    left = deadline.remaining()
    if left < 2 * estimate + 0.1:
        return {}
    lp = solve_data(data, time_limit_s=left / 2, efficiency=False)
    return {} if lp.bound is None else {"gavel_lp_min_share": lp.bound}


def trivial_outcome(data: ModelData) -> Outcome | None:
    """Rounds decided without a solver: more unkeepable running jobs than the preemption cap
    (C6 cannot hold: INFEASIBLE), or no job has an option (everything idle is OPTIMAL)."""
    cap = data.instance.max_preemptions
    if cap is not None and data.forced_preemptions > cap:
        return Outcome(Status.INFEASIBLE, explanation=explain_infeasible(data))
    if any(j.options for j in data.jobs):
        return None
    solution = assemble(data, [Raw() for _ in data.jobs])
    return Outcome(Status.OPTIMAL, solution=solution, bound=data.share_upper_bound())

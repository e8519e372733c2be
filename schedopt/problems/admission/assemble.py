"""Turn a back-end's raw decision (counts per slot, admissions, tiers) into a solution.

Shared by every method so that placement and rejection reasons are produced one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from .data import ModelData
from .placement import place_first_slot
from .solution import AdmissionSolution, JobPlan, Rejection, RejectReason


@dataclass
class RawPlan:
    """A method's decision for one job; ``run[t]`` is an option index or None."""

    run: list[int | None]
    admitted: bool | None = None
    tier: int | None = None


def assemble(data: ModelData, raw: list[RawPlan], *, optimal_admission: bool) -> AdmissionSolution:
    """``optimal_admission``: the admission level (L1) was proven optimal, so every rejection
    that is not alone-infeasible is a proven conflict with the admitted set."""
    plans = []
    demands: dict[str, tuple[str, int]] = {}
    for job, r in zip(data.jobs, raw, strict=True):
        gpus = tuple(0 if o is None else job.options[o].n for o in r.run)
        types = tuple(None if o is None else job.options[o].gpu_type for o in r.run)
        if r.run and r.run[0] is not None:
            opt = job.options[r.run[0]]
            demands[job.id] = (opt.gpu_type, opt.n)
        rejection = None
        if job.is_slo and r.admitted is False:
            rejection = _why_rejected(data, job, optimal_admission)
        plans.append(
            JobPlan(
                job_id=job.id,
                admitted=r.admitted if job.is_slo else None,
                tier=r.tier if job.is_slo and r.admitted else None,
                gpus=gpus,
                gpu_types=types,
                rejection=rejection,
            )
        )
    placement = place_first_slot(data.instance, demands)
    return AdmissionSolution(plans=tuple(plans), placement=placement)


def _why_rejected(data: ModelData, job, optimal_admission: bool) -> Rejection:
    if data.best_alone_tier(job) is None:
        return Rejection(
            reason=RejectReason.DEADLINE_UNREACHABLE_ALONE,
            proven=True,
            detail="cannot finish by its last deadline even alone on the free cluster",
        )
    return Rejection(
        reason=RejectReason.CONFLICTS_WITH_ADMITTED,
        proven=optimal_admission,
        detail=(
            "admitting it would make an admitted job miss its guarantee"
            if optimal_admission
            else "this method found no room for it beside the admitted jobs"
        ),
    )


def guaranteed_value(data: ModelData, raw: list[RawPlan]) -> int:
    """L1 of a raw plan in the models' scaled units (VALUE_SCALE)."""
    return sum(
        job.tiers[r.tier].value_scaled
        for job, r in zip(data.jobs, raw, strict=True)
        if job.is_slo and r.admitted and r.tier is not None
    )


def raw_from_solution(data: ModelData, sol: AdmissionSolution) -> list[RawPlan]:
    """Map a solution (e.g. a hint) back to option indices; unknown options become idle."""
    raw = []
    for job in data.jobs:
        try:
            plan = sol.plan(job.id)
        except KeyError:
            raw.append(RawPlan([None] * data.T))
            continue
        index = {(o.gpu_type, o.n): i for i, o in enumerate(job.options)}
        run: list[int | None] = []
        for t in range(data.T):
            n = plan.gpus[t] if t < len(plan.gpus) else 0
            g = plan.gpu_types[t] if t < len(plan.gpu_types) else None
            run.append(index.get((g, n)) if n and g is not None else None)
        raw.append(RawPlan(run, plan.admitted, plan.tier))
    return raw

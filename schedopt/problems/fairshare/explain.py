"""Why a round is infeasible, and what a result says when fairness degenerated (F3, F4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from schedopt.core.registry import Outcome
from schedopt.core.status import Status

from .data import ModelData, build_data
from .instance import FairnessUnit, FairshareInstance
from .placement import Raw, assemble
from .solution import FairshareSolution
from .units import NotCounted

#: Unit ids an explanation names before "…".
NAMED = 10


@dataclass(frozen=True)
class UncountedUnit:
    """A fairness unit outside V⁺ (not in the minimum share, L1) and why (F3)."""

    unit_id: str
    reason: NotCounted


def uncounted_units(instance: FairshareInstance) -> tuple[UncountedUnit, ...]:
    """Every fairness unit of ``instance`` that L1 does not count, with its reason."""
    data = build_data(instance, check_size=False)
    return tuple(
        UncountedUnit(v.id, v.not_counted) for v in data.units if v.not_counted is not None
    )


def _names(ids: Sequence[str]) -> str:
    return ", ".join(ids[:NAMED]) + (", …" if len(ids) > NAMED else "")


def fairness_note(data: ModelData, solution: FairshareSolution, proven: bool) -> str | None:
    """What a result with ``solution`` says about fairness that degenerated, or None: tenants
    left out of V⁺ by a whole-GPU quota of 0 (F3), and a minimum share of 0 (F4). ``proven``:
    the solution's L1 is proven optimal."""
    parts = []
    dropped = [v.id for v in data.units if v.not_counted is NotCounted.NOTHING_DESERVED]
    if dropped:
        parts.append(
            f"{len(dropped)} of {len(data.units)} tenants are not counted in the minimum share: "
            f"their whole-GPU quota rounds to 0 and they have deserved no GPU-time yet "
            f"({_names(dropped)}); fairness_unit {FairnessUnit.JOB.value!r} gives every job a "
            "fractional share (F3)"
        )
    running = {a.job_id for a in solution.allocations if a.hosts}
    starved = [
        v.id
        for v in data.included
        if v.used_s == 0 and not any(data.jobs[j].id in running for j in v.jobs)
    ]
    if starved:
        kind = data.instance.fairness_unit.value
        why = (
            "; no allocation serves them all, so L1 is 0 for every allocation and L2 and L3 "
            "chose who runs (heuristic:astraea serves the lowest share first)"
            if proven
            else ""
        )
        parts.append(
            f"the minimum share is 0: {len(starved)} counted {kind}s with no GPU-time so far "
            f"get no GPU this round ({_names(starved)}){why} (F4)"
        )
    return "; ".join(parts) or None


def with_fairness_note(data: ModelData, outcome: Outcome) -> Outcome:
    """``outcome`` with :func:`fairness_note` added to its explanation (when it has a solution)."""
    if outcome.solution is None:
        return outcome
    note = fairness_note(data, outcome.solution, outcome.status is Status.OPTIMAL)
    if note is None:
        return outcome
    said = outcome.explanation
    return replace(outcome, explanation=note if said is None else f"{said}; {note}")


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


def trivial_outcome(data: ModelData) -> Outcome | None:
    """Rounds decided without a solver: more unkeepable running jobs than the preemption cap
    (C6 cannot hold: INFEASIBLE), or no job has an option (everything idle is OPTIMAL)."""
    cap = data.instance.max_preemptions
    if cap is not None and data.forced_preemptions > cap:
        return Outcome(Status.INFEASIBLE, explanation=explain_infeasible(data))
    if any(j.options for j in data.jobs):
        return None
    solution = assemble(data, [Raw() for _ in data.jobs])
    return with_fairness_note(
        data, Outcome(Status.OPTIMAL, solution=solution, bound=data.share_upper_bound())
    )

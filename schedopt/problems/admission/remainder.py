"""One lease round of the replay driver and the previous plan's remainder (issue 7, item 1).

The remainder of the plan executed in the previous round — its slots 1.. shifted by one slot,
an idle slot at the end, newly arrived SLO jobs rejected — is a solution of this round whenever
slot 0 ran as planned and the world did not change: every admitted job's plan still meets its
(shifted) guaranteed deadline on the same free GPUs. It is checked with the validator, never
assumed; when it fails, the change in the world that broke it is named. Its idle GPUs go to
best-effort jobs, so a replay in which every method fails still progresses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedopt.topology import Cluster

from .assemble import assemble, raw_from_solution
from .data import build_data
from .heuristics import refill_best_effort
from .instance import AdmissionInstance
from .placement import place_first_slot
from .solution import AdmissionSolution, JobPlan, Rejection, RejectReason
from .validate import validate

Tiers = list[tuple[int, float, float]]  # (index into TraceJob.deadlines, seconds from now, value)


#: Tried after the configured method fails, before the previous plan's remainder (``auto``
#: starts from the heuristics' plan or, when they fail, from the remainder as its hint).
FALLBACKS = ("heuristic:edf", "heuristic:slack", "auto")


@dataclass(frozen=True)
class DriverConfig:
    """The replay driver's settings (here, below ``driver.py``, because a round builds its
    instance with them; ``driver.DriverConfig`` is the same class).

    ``skip_idle``: with nothing running or waiting, jump to the next submission's round.
    ``deterministic``: solve with CP-SAT's deterministic time and fixed work instead of the
    wall clock (``SolveOptions.deterministic``), so two runs of a replay give the same report."""

    slot_s: float = 300.0
    horizon_slots: int = 12
    method: str = "auto"
    time_limit_s: float = 5.0
    seed: int = 0
    scaling_exponent: float = 0.9  # throughput at other GPU counts: r·(n/n0)**exponent
    skip_idle: bool = True
    deterministic: bool = False
    #: Parameters of ``method`` (a heuristic's knobs), as ``solve(..., params=...)`` takes
    #: them; the fallbacks run with their own.
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Tried in turn after ``method`` finds nothing, before the previous plan's remainder.
    fallbacks: tuple[str, ...] = FALLBACKS
    #: The exact method of the last retry with every admitted job held to its guarantee.
    hold_exact: str = "cpsat"

    def __post_init__(self) -> None:
        if not (self.slot_s > 0 and self.horizon_slots >= 1 and self.time_limit_s > 0):
            raise ValueError("slot_s and time_limit_s must be > 0, horizon_slots >= 1")


@dataclass(frozen=True)
class Round:
    """What one round solves: the cluster's unavailable GPUs (``failed``: those that were not
    unavailable when the previous plan was made) and each job with its tiers."""

    cluster: Cluster
    unavailable: tuple[str, ...]
    failed: tuple[str, ...]
    entries: list[tuple[Any, Tiers]]  # (the driver's job state, its tiers)

    def instance(self, cfg: DriverConfig, *, hold: bool = False) -> AdmissionInstance:
        jobs = []
        for s, tiers in self.entries:
            used = tiers[-1:] if hold and s.held else tiers
            jobs.append(
                {
                    "id": s.job.id,
                    "kind": s.job.kind if used else "best_effort",
                    "tenant": s.job.tenant,
                    "remaining_iterations": s.left,
                    "throughput": s.table,
                    "deadlines": [{"deadline_s": d, "value": v} for _, d, v in used],
                    "admitted": bool(used) and s.held,
                    "current_gpus": s.gpus,
                }
            )
        # the Cluster object itself: validated like ``cluster.to_dict()``, without re-parsing it
        doc = {"cluster": self.cluster, "unavailable_gpus": self.unavailable, "jobs": jobs}
        return AdmissionInstance.model_validate(
            {**doc, "slots": cfg.horizon_slots, "slot_s": cfg.slot_s}
        )

    def tiers_used(self, hold: bool) -> list[Tiers]:
        return [t[-1:] if hold and s.held else t for s, t in self.entries]


def remainder(rnd: Round, inst: AdmissionInstance) -> tuple[AdmissionSolution | None, str]:
    """The previous plan's remainder as a solution of ``inst``, or None and the change in the
    world that makes it invalid (see the module docstring)."""
    changes = []
    if rnd.failed:
        changes.append(f"GPUs {', '.join(rnd.failed)} became unavailable")
    for s, _ in rnd.entries:
        if not s.plan:
            continue
        if s.planned_left is not None and s.left != s.planned_left:
            changes.append(
                f"remaining work of {s.job.id!r} is {s.left}, the plan expected {s.planned_left}"
            )
        if s.planned_table is not None and s.table != s.planned_table:
            changes.append(f"throughput of {s.job.id!r} was revised")
    plans: list[JobPlan] = []
    demands: dict[str, tuple[str, int]] = {}
    T = inst.slots
    for (s, _), job in zip(rnd.entries, inst.jobs, strict=True):
        rest = list(s.plan[:T]) + [(None, 0)] * (T - len(s.plan[:T]))
        gpus = tuple(n for _, n in rest)
        types = tuple(g if n else None for g, n in rest)
        first_type = types[0]
        if gpus[0] and first_type is not None:
            demands[job.id] = (first_type, gpus[0])
        if not job.kind.is_slo:
            plans.append(JobPlan(job_id=job.id, gpus=gpus, gpu_types=types))
        elif job.admitted:
            plans.append(
                JobPlan(
                    job_id=job.id,
                    admitted=True,
                    tier=len(job.deadlines) - 1,
                    gpus=gpus,
                    gpu_types=types,
                )
            )
        else:  # newly arrived: the remainder has no room for it
            why = Rejection(
                reason=RejectReason.CONFLICTS_WITH_ADMITTED,
                proven=False,
                detail="no method found a plan this round; the previous plan was kept",
            )
            plans.append(
                JobPlan(job_id=job.id, admitted=False, gpus=(0,) * T, gpu_types=(None,) * T,
                        rejection=why)
            )  # fmt: skip
    try:
        placement = place_first_slot(inst, demands)
    except RuntimeError:
        placement = None
    violations = []
    if placement is not None:
        sol = AdmissionSolution(plans=tuple(plans), placement=placement)
        violations = validate(inst, sol)
        if not violations:
            return _with_best_effort(inst, sol), ""
    if not changes:
        changes.append(
            "the previous plan no longer fits: "
            + ("; ".join(v.message for v in violations[:3]) or "its slot-0 placement failed")
        )
    return None, "; ".join(changes)


def _with_best_effort(inst: AdmissionInstance, sol: AdmissionSolution) -> AdmissionSolution:
    """The remainder with its idle GPUs given to best-effort jobs (the heuristics' greedy fill;
    SLO plans untouched), so that a replay in which every method keeps failing still makes
    progress. Kept only if it validates."""
    data = build_data(inst, check_size=False)
    filled = assemble(
        data, refill_best_effort(data, raw_from_solution(data, sol)), optimal_admission=False
    )
    return filled if not validate(inst, filled) else sol

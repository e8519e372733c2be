"""Fairness units (F1–F3 of formulations/fairshare.md): what C7 and L1 are over.

The tenants with their whole-GPU quotas (``FairnessUnit.TENANT``, the default) or every job with
its weight and a fractional deserved share (``FairnessUnit.JOB``). The exact back-ends, the Gavel
LP and the heuristics read them from ``ModelData.units``; the validator re-derives them itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from .instance import FairnessUnit, FairshareInstance

#: Float noise allowed when flooring C·w_u/Σw to a whole-GPU quota.
QUOTA_TOL = 1e-9


class NotCounted(str, Enum):
    """Why a unit is outside V⁺ (F3)."""

    #: δ_v = 0: no job of the unit has an option this cluster can host.
    NO_DEMAND = "no_demand"
    #: D'_v = 0: the tenant's whole-GPU quota rounds to 0 and it has deserved nothing yet.
    NOTHING_DESERVED = "nothing_deserved"


@dataclass(frozen=True)
class UnitData:
    """A fairness unit v: a tenant, or a job in per-job mode."""

    index: int
    id: str
    weight: float  # w_v
    entitlement: float  # q_v: the tenant's quota q_u, or the job's C·w_j/Σw (GPUs)
    demand: int  # δ_v
    deserved: float  # d_v (whole GPUs for tenants, fractional for jobs: F2)
    used_s: float  # U_v
    deserved_after_s: float  # D'_v
    jobs: tuple[int, ...]  # J_v
    not_counted: NotCounted | None  # None: v ∈ V⁺ (F3)
    used_units: int = 0  # Ũ_v (CP-SAT, data.py)
    deserved_units: int = 0  # D̃_v

    @property
    def included(self) -> bool:
        return self.not_counted is None

    def share(self, gpus: float, round_s: float) -> float:
        """LTGF after the round with ``gpus`` GPUs this round."""
        return (self.used_s + round_s * gpus) / self.deserved_after_s


def tenant_quota(capacity: int, weight: float, total_weight: float) -> int:
    """q_u = ⌊C · w_u / Σ w⌋."""
    return math.floor(capacity * weight / total_weight + QUOTA_TOL)


def _unit(
    index: int,
    unit_id: str,
    *,
    weight: float,
    entitlement: float,
    demand: int,
    used_s: float,
    deserved_s: float,
    round_s: float,
    jobs: tuple[int, ...],
) -> UnitData:
    """F2 (d_v = min(δ_v, q_v), D'_v = D_v + L·d_v) and F3 (why not counted) for one unit."""
    deserved = min(float(demand), entitlement)
    after = deserved_s + round_s * deserved
    reason = None
    if demand <= 0:
        reason = NotCounted.NO_DEMAND
    elif after <= 0:
        reason = NotCounted.NOTHING_DESERVED
    return UnitData(
        index, unit_id, weight, entitlement, demand, deserved, used_s, after, jobs, reason
    )


def build_units(
    inst: FairshareInstance,
    capacity: int,
    job_demand: Sequence[int],
    tenant_jobs: Sequence[tuple[int, ...]],
) -> tuple[UnitData, ...]:
    """F1–F3: the units of ``inst``'s fairness mode. ``job_demand[j]`` is j's largest usable gang
    (0 without an option), ``tenant_jobs[u]`` the jobs of tenant ``u``."""
    L = inst.round_s
    if inst.fairness_unit is FairnessUnit.JOB:
        competing = sum(j.unit_weight for j, n in zip(inst.jobs, job_demand, strict=True) if n)
        return tuple(
            _unit(
                i,
                job.id,
                weight=job.unit_weight,
                entitlement=capacity * job.unit_weight / competing if competing else 0.0,
                demand=job_demand[i],
                used_s=job.used_gpu_s,
                deserved_s=job.deserved_gpu_s,
                round_s=L,
                jobs=(i,),
            )
            for i, job in enumerate(inst.jobs)
        )
    total = sum(t.weight for t in inst.tenants)
    return tuple(
        _unit(
            u,
            t.id,
            weight=t.weight,
            entitlement=float(tenant_quota(capacity, t.weight, total)),
            demand=sum(job_demand[j] for j in tenant_jobs[u]),
            used_s=t.used_gpu_s,
            deserved_s=t.deserved_gpu_s,
            round_s=L,
            jobs=tenant_jobs[u],
        )
        for u, t in enumerate(inst.tenants)
    )

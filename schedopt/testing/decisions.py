"""Decision builders: a scheduler's output as the problem's solution type, without the
formulation at hand. Thin over the solution types (``schedopt.get_problem(p).solution_type``);
pydantic's errors name the field that does not fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedopt.core import get_problem

from .oracle import with_problem

#: A job's GPUs in one slot: (GPU type, count), or None for idle.
SlotGpus = tuple[str, int] | None


def decision(problem: str, **fields: Any) -> Any:
    """``problem``'s solution type from its fields, e.g. ``decision("fairshare",
    allocations=[{"job_id": "j0", "gpu_type": "a100", "hosts": {"h0": 2}}])``."""
    spec = get_problem(problem)
    return spec.solution_type.model_validate(with_problem(spec, fields))


def _per_slot(given: SlotGpus | Sequence[SlotGpus], slots: int) -> list[SlotGpus]:
    if given is None:
        return []
    if isinstance(given, tuple) and len(given) == 2 and isinstance(given[0], str):
        return [(given[0], int(given[1]))] * slots
    return list(given)


def admission(
    instance: Any,
    *,
    gpus: Mapping[str, SlotGpus | Sequence[SlotGpus]],
    admitted: Mapping[str, int] | None = None,
    placement: Mapping[str, Sequence[str]] | None = None,
    proven: Mapping[str, str] | None = None,
) -> Any:
    """An admission decision from what a scheduler decides.

    ``gpus[job]``: (type, count) in every slot, or one entry per slot (None: idle; missing
    jobs and slots idle). ``admitted[job]``: the guaranteed deadline tier of an admitted SLO
    job; every other SLO job is rejected (reason ``conflicts_with_admitted``, not proven)
    unless ``proven[job]`` names the reason the rejection is proven by
    (``deadline_unreachable_alone`` or ``conflicts_with_admitted``: schedopt.testing checks it
    with the exact model). ``placement[job]``: the GPU ids of every job running in slot 0.
    """
    admitted, proven = dict(admitted or {}), dict(proven or {})
    slots = instance.slots
    plans = []
    for job in instance.jobs:
        per_slot = (_per_slot(gpus.get(job.id), slots) + [None] * slots)[:slots]
        plan: dict[str, Any] = {
            "job_id": job.id,
            "gpus": [0 if g is None else g[1] for g in per_slot],
            "gpu_types": [None if g is None else g[0] for g in per_slot],
        }
        if job.kind.is_slo:
            plan["admitted"] = job.id in admitted
            if job.id in admitted:
                plan["tier"] = admitted[job.id]
            else:
                reason = proven.get(job.id, "conflicts_with_admitted")
                plan["rejection"] = {"reason": reason, "proven": job.id in proven}
        plans.append(plan)
    return decision("admission", plans=plans, placement=dict(placement or {}))


def fairshare(gpus: Mapping[str, tuple[str, Mapping[str, int]]], instance: Any = None) -> Any:
    """A fairshare round: ``gpus[job] = (GPU type, {host: GPUs})``; with ``instance``, every
    job it does not name is idle (an allocation per job is required, V1)."""
    ids = [job.id for job in instance.jobs] if instance is not None else list(gpus)
    allocations = [
        {"job_id": j, "gpu_type": gpus[j][0], "hosts": dict(gpus[j][1])}
        if j in gpus
        else {"job_id": j}
        for j in ids
    ]
    return decision("fairshare", allocations=allocations)


def timeshare(fractions: Mapping[str, Mapping[str, float]]) -> Any:
    """A timeshare round: ``fractions[job][GPU type]``, the share of the round (0 left out)."""
    shares = [
        {"job": job, "worker_type": w, "fraction": f}
        for job, per_type in fractions.items()
        for w, f in per_type.items()
        if f > 0
    ]
    return decision("timeshare", shares=shares)


def moe_placement(replicas: Sequence[Sequence[Mapping[str, float]]]) -> Any:
    """An expert placement: ``replicas[layer][expert] = {GPU id: share of its tokens}``, in the
    instance's order of layers and experts."""
    layers = [
        {"experts": [{"replicas": [{"gpu": g, "share": s} for g, s in e.items()]} for e in layer]}
        for layer in replicas
    ]
    return decision("moe_placement", layers=layers)

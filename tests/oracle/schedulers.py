"""Toy schedulers a test author might write, and typical bugs in them.

A correct scheduler here is a thin wrapper over one of schedopt's heuristics; a buggy one is the
same scheduler working from a wrong view of the instance (the capacity it forgets, the arrival
or SLO it misreads, the topology it ignores) or editing its decision wrongly. The oracle sees
the true instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import schedopt

Scheduler = Callable[[Any], Any]

#: The heuristics a correct toy scheduler tries, in order (the first answer is returned).
HEURISTICS = {
    "admission": ("heuristic:edf",),
    "fairshare": ("heuristic:gavel-round",),
    "timeshare": ("heuristic:isolated",),
    "moe_placement": ("heuristic:eplb",),
    "cosched": ("heuristic:packing",),
    "reconfig": ("heuristic:megatron", "heuristic:oobleck", "heuristic:keep_shrink"),
}


def correct(problem: str) -> Scheduler:
    """schedopt's own heuristics; None (the claim "no valid decision") if none finds one."""

    def scheduler(instance: Any) -> Any:
        for method in HEURISTICS[problem]:
            solution = schedopt.solve(instance, method, deterministic=True).solution
            if solution is not None:
                return solution
        return None

    return scheduler


def misreading(problem: str, view: Callable[[dict[str, Any]], None]) -> Scheduler:
    """The correct scheduler run on ``view`` of the instance document (edited in place)."""

    def scheduler(instance: Any) -> Any:
        doc = instance.model_dump(mode="json")
        view(doc)
        return correct(problem)(type(instance).model_validate(doc))

    return scheduler


def editing(problem: str, edit: Callable[[Any, dict[str, Any]], None]) -> Scheduler:
    """The correct scheduler whose decision document is then edited by ``edit(instance, doc)``."""

    def scheduler(instance: Any) -> Any:
        solution = correct(problem)(instance)
        if solution is None:
            return None
        doc = solution.model_dump(mode="json")
        edit(instance, doc)
        return schedopt.get_problem(problem).solution_type.model_validate(doc)

    return scheduler


def _each(items: list[dict[str, Any]], **changes: Any) -> None:
    for item in items:
        item.update(changes)


def _first_gpus(instance: Any, doc: dict[str, Any]) -> None:
    gpus = sorted(instance.cluster.gpus())
    doc["placement"] = {job: gpus[: len(ids)] for job, ids in doc["placement"].items()}


def _first_host(instance: Any, doc: dict[str, Any]) -> None:
    first = sorted(instance.cluster.hosts())[0]
    for alloc in doc["allocations"]:
        if alloc["hosts"]:
            alloc["hosts"] = {first: sum(alloc["hosts"].values())}


def _restart_all(instance: Any, doc: dict[str, Any]) -> None:
    """Every job that keeps last round's GPUs is stopped instead (a round planned from
    scratch): more preemptions than allowed (V6), guarantees missed (V5)."""
    previous = {job.id: job.previous for job in instance.jobs}
    for alloc in doc["allocations"]:
        before = previous.get(alloc["job_id"])
        if before is not None and alloc["hosts"] == dict(before.hosts):
            alloc.update(gpu_type=None, hosts={})


def _whole_round_elsewhere(instance: Any, doc: dict[str, Any]) -> None:
    """Every running job also gets the whole round on another type: over the round (V2)."""
    jobs = {job.id: job for job in instance.jobs}
    for share in list(doc["shares"]):
        if share.get("with_job") is None:
            used = {s["worker_type"] for s in doc["shares"] if s["job"] == share["job"]}
            free = [w for w in jobs[share["job"]].throughput if w not in used]
            if free:
                doc["shares"].append({"job": share["job"], "worker_type": free[0], "fraction": 1.0})


def _memory_free(doc: dict[str, Any]) -> None:
    for layer in doc["layers"]:
        _each(layer["experts"], memory_gib=1e-3)


def _half_shares(instance: Any, doc: dict[str, Any]) -> None:
    for layer in doc["layers"]:
        for expert in layer["experts"]:
            for replica in expert["replicas"]:
                replica["share"] /= 2


def _replica_twice(instance: Any, doc: dict[str, Any]) -> None:
    for layer in doc["layers"]:
        for expert in layer["experts"]:
            replica = expert["replicas"][0]
            expert["replicas"] = [{**replica, "share": replica["share"] / 2}] * 2


def _shared_hosts(instance: Any, doc: dict[str, Any]) -> None:
    every = sorted({host for group in doc["groups"] for host in group["hosts"]})
    _each(doc["groups"], hosts=every)


def _one_based_hosts(instance: Any, doc: dict[str, Any]) -> None:
    for group in doc["groups"]:
        pools_and_indices = (host.rsplit("/", 1) for host in group["hosts"])
        group["hosts"] = [f"{pool}/{int(i) + 1}" for pool, i in pools_and_indices]


def _second_replica(instance: Any, doc: dict[str, Any]) -> None:
    """One more data-parallel replica on the first pipeline's GPUs, half its micro-batches."""
    first = doc["pipelines"][0]
    m = first["micro_batches"]
    if m >= 2:
        doc["pipelines"][0] = {**first, "micro_batches": m - m // 2}
        doc["pipelines"].append({**first, "micro_batches": m // 2})


def _optimistic_time(instance: Any, doc: dict[str, Any]) -> None:
    doc["iteration_time_s"] = 0.9 * (doc["iteration_time_s"] or 1.0)


def _four_times(doc: dict[str, Any]) -> None:
    doc["workers"] = {w: 4 * n for w, n in doc["workers"].items()}


#: Bugs that need more than the tiny instances to show (two groups to share a host, a group
#: whose cycle can grow past an SLO).
SIZE = {("cosched", "capacity"): "small", ("cosched", "timing"): "small"}

#: problem → family → (buggy scheduler, the rules the oracle may name for it). "timing" is
#: the share of time (timeshare) or of tokens (moe_placement) where a problem has no clock.
BUGS: dict[str, dict[str, tuple[Scheduler, tuple[str, ...]]]] = {
    "admission": {
        "capacity": (
            misreading("admission", lambda d: d.update(unavailable_gpus=[])),
            ("V4", "V7"),
        ),
        "timing": (misreading("admission", lambda d: _each(d["jobs"], arrival_s=0.0)), ("V3",)),
        "placement": (editing("admission", _first_gpus), ("V7",)),
    },
    "fairshare": {
        "capacity": (misreading("fairshare", lambda d: d.update(unavailable_gpus=[])), ("V3",)),
        "timing": (editing("fairshare", _restart_all), ("V6", "V5")),
        "placement": (editing("fairshare", _first_host), ("V3",)),
    },
    "timeshare": {
        "capacity": (misreading("timeshare", _four_times), ("V3",)),
        "timing": (editing("timeshare", _whole_round_elsewhere), ("V2",)),
        # a gang taken for one GPU: too many GPUs of a type (V3) or a type it cannot fit (V4)
        "placement": (
            misreading("timeshare", lambda d: _each(d["jobs"], scale_factor=1)),
            ("V3", "V4"),
        ),
    },
    "moe_placement": {
        "capacity": (misreading("moe_placement", _memory_free), ("V4",)),
        "timing": (editing("moe_placement", _half_shares), ("V3",)),
        "placement": (editing("moe_placement", _replica_twice), ("V2",)),
    },
    "cosched": {
        "capacity": (editing("cosched", _shared_hosts), ("V2",)),
        "timing": (misreading("cosched", lambda d: _each(d["jobs"], slo_ms=10**7)), ("V8",)),
        "placement": (editing("cosched", _one_based_hosts), ("V2",)),
    },
    "reconfig": {
        "capacity": (editing("reconfig", _second_replica), ("V1",)),
        "timing": (editing("reconfig", _optimistic_time), ("V8",)),
        "placement": (misreading("reconfig", lambda d: d.update(failed_gpus=[])), ("V1",)),
    },
}

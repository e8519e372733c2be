"""ETTR replays of a training job over a real fault trace, for the benchmark and for
policy-level tuning of the reconfiguration heuristics (AutoSched, ICS'24).

The InfiniteHBD trace's servers are mapped onto the cluster's hosts in order of first fault.
At every fault start or end the method re-plans (current plan = the one running; with no fault
left, the healthy Megatron plan comes back). A GPU-class fault fails one GPU (fail-stop) -
except the degradation kinds (P2P bandwidth low, PCI link width low, temperature high), which
make it slow (κ = 0.5); any other class takes the whole host down. Each reconfiguration costs
a fixed 60 s of communicator rebuild and the recovery: copying the rebuilt pipelines' state
from surviving replicas over IB, or when no copy survives, restart plus half a checkpoint
interval of lost work (the instance's ``restart_s`` and ``checkpoint_interval_s``); the
benchmark also counts the decision's own wall time. ETTR = useful training time / wall time,
where a second of training counts as the reference plan's iteration time over the running
plan's, minus those costs. A method that finds no plan either falls back to ``fallback``
(the benchmark: ``auto``) or, with none, trains nothing until the next event.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.registry import PolicySpec
from schedopt.core.result import ObjectiveTerm, Sense

SLOW_KINDS = ("GPU P2P Bandwidth Low", "GPU PCI link width low", "GPU Temperature High")
#: Seconds every reconfiguration spends rebuilding communicators.
REBUILD_S = 60.0
#: The trace file under the public data folder.
TRACE_FILE = "infinitehbd-faults/fault_trace.json"
#: The trace's fault rate per server-hour: 584 faults on 400 servers in 349 days.
FAULTS_PER_SERVER_HOUR = 584 / 400 / (349 * 24)

Event = tuple[float, str, str, str]  # (day, "start"/"end", host, "host"/"gpu"/"slow")


def fault_events(faults: Sequence[Any], hosts: Sequence[str], days: float, offset: float):
    """The trace's faults on ``hosts`` that start in ``[offset, offset + days)``, as events
    with days counted from ``offset``."""
    nodes: list[str] = []
    for f in faults:
        if f.node not in nodes:
            nodes.append(f.node)
    where = dict(zip(nodes, hosts, strict=False))
    out: list[Event] = []
    for f in faults:
        if f.node not in where or not offset <= f.start_day < offset + days:
            continue
        kind = "slow" if f.desc in SLOW_KINDS else "gpu" if f.is_gpu else "host"
        out.append((f.start_day - offset, "start", where[f.node], kind))
        if f.end_day - offset < days:
            out.append((f.end_day - offset, "end", where[f.node], kind))
    return sorted(out)


def fault_state(
    cluster: Any, active: Mapping[tuple[str, str], int]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The failed GPUs and the slow GPUs (κ = 0.5) of the faults open in ``active``
    ((host, kind) -> faults open): a host fault takes every GPU of the host, a GPU fault its
    first GPU, a degradation makes its second GPU slow."""
    failed: list[str] = []
    slow: list[dict[str, Any]] = []
    for (h, k), n in active.items():
        if n <= 0:
            continue
        gpus = list(cluster.gpus_on(h))
        if k == "host":
            failed += gpus
        elif k == "gpu":
            failed.append(gpus[0])
        else:
            slow.append({"gpu": gpus[1], "speed_factor": 0.5})
    failed = sorted(set(failed))
    return failed, [x for x in slow if x["gpu"] not in failed]


def window_instance(
    faults: Sequence[Any],
    *,
    start_day: float,
    days: float,
    hosts: int = 64,
    model: str = "llama2-70b",
    global_batch: int = 512,
) -> Any:
    """A reconfiguration instance from a window of the trace: every fault that starts in
    ``[start_day, start_day + days)`` open at once on ``hosts`` DGX hosts (the trace's servers
    mapped as in the replay), the healthy plan running, the trace's fault rate."""
    from .generate import generate_custom
    from .instance import ReconfigInstance

    base = generate_custom(hosts, 8, model, global_batch, 0, 0, seed=0)
    active: dict[tuple[str, str], int] = {}
    for _, what, host, kind in fault_events(faults, list(base.cluster.hosts()), days, start_day):
        if what == "start":
            active[(host, kind)] = active.get((host, kind), 0) + 1
    failed, slow = fault_state(base.cluster, active)
    doc = base.model_dump(mode="json")
    doc.update(
        name=f"infinitehbd-day{start_day:g}+{days:g}-{8 * hosts}gpu",
        failed_gpus=failed,
        slow_gpus=slow,
        failure_rate_per_hour=FAULTS_PER_SERVER_HOUR * hosts,
    )
    return ReconfigInstance.model_validate(doc)


def replay_ettr(
    method: str,
    base: Any,
    events: Sequence[Event],
    days: float,
    best_s: float,
    *,
    params: dict[str, Any] | None = None,
    fallback: str | None = "auto",
    time_limit_s: float = 10.0,
    count_decisions: bool = True,
) -> dict[str, Any]:
    """Replay ``events`` over ``days`` with ``method`` re-planning ``base`` (a reconfig
    instance whose ``current_plan`` is the healthy plan); ``best_s`` is the iteration time
    useful training is counted at."""
    from schedopt.core.solve import solve

    from .instance import ReconfigInstance
    from .solution import ReconfigSolution
    from .validate import _Costs, evaluate

    rate = FAULTS_PER_SERVER_HOUR * len(list(base.cluster.hosts()))
    healthy = ReconfigSolution(pipelines=base.current_plan or ())
    start = best_s / evaluate(base, healthy)[0]
    costs = _Costs(base)
    active: dict[tuple[str, str], int] = {}
    running, retained, clock, useful, lost, decisions = healthy, start, 0.0, 0.0, 0.0, 0
    for day, what, host, kind in events:
        t = day * 86400
        useful += (t - clock) * retained
        clock = t
        key = (host, kind)
        active[key] = active.get(key, 0) + (1 if what == "start" else -1)
        failed, slow = fault_state(base.cluster, active)
        if not failed and not slow:
            running, retained = healthy, start
            lost += REBUILD_S
            continue
        doc = base.model_dump(mode="json")
        doc.update(
            failed_gpus=failed,
            slow_gpus=slow,
            current_plan=[p.model_dump() for p in running.pipelines],
            failure_rate_per_hour=rate,
        )
        try:
            inst = ReconfigInstance.model_validate(doc)
        except InvalidInstanceError:  # no GPU survives: nothing can train
            retained = 0.0
            continue
        t0 = time.perf_counter()
        r = solve(inst, method, time_limit_s=time_limit_s, params=params)
        if r.solution is None and fallback is not None:
            r = solve(inst, fallback, time_limit_s=time_limit_s)
        decide = time.perf_counter() - t0 if count_decisions else 0.0
        decisions += 1
        if r.solution is None:  # no plan: nothing trains until the next event
            retained = 0.0
            lost += decide
            continue
        running = r.solution
        retained = best_s / r.metrics["iteration_time_s"]
        kept = {p.stages for p in inst.current_plan or ()}
        rebuilt = [p for p in running.pipelines if p.stages not in kept]
        if r.metrics.get("recovery_copy", 0.0) >= 0.5:
            recover = max(
                (16 * costs.P / sum(len(s.gpus) for s in p.stages) / costs.ib for p in rebuilt),
                default=0.0,
            )
        else:
            recover = base.restart_s + base.checkpoint_interval_s / 2
        lost += decide + REBUILD_S + recover
    wall = days * 86400
    useful += (wall - clock) * retained
    return {
        "method": method,
        "events": len(events),
        "decisions": decisions,
        "ettr": (useful - lost) / wall,
        "lost_h": lost / 3600,
        "degraded_h": (wall - useful) / 3600,
    }


TERMS = (
    ObjectiveTerm("ETTR", Sense.MAXIMIZE),
    ObjectiveTerm("hours lost to reconfiguration", Sense.MINIMIZE, "h"),
)


@dataclass(frozen=True)
class Episode:
    """``days`` of the trace's faults from ``offset`` on ``hosts`` DGX hosts training
    ``model`` at ``global_batch``. The reference rate is the healthy Megatron plan's; a method
    without a plan trains nothing until the next event (no fallback), and decision time is
    not counted, so an episode's metrics do not depend on the machine's speed."""

    name: str
    events: tuple[Event, ...]
    days: float
    hosts: int = 64
    model: str = "llama2-70b"
    global_batch: int = 512
    time_limit_s: float = 10.0


def episodes(
    data_dir: str | os.PathLike[str], trace: str, start: int, count: int, size: int
) -> list[Episode]:
    """``count`` consecutive windows of ``size`` days of the InfiniteHBD trace, from day
    ``start``, on 64 hosts."""
    from schedopt.io.traces import load_infinitehbd_faults

    from .generate import generate_custom

    if trace != "infinitehbd":
        raise ValueError(f"unknown trace {trace!r}; known: infinitehbd")
    faults = load_infinitehbd_faults(Path(data_dir) / TRACE_FILE)
    hosts = list(generate_custom(64, 8, "llama2-70b", 512, 0, 0, seed=0).cluster.hosts())
    out = []
    for k in range(count):
        offset = start + k * size
        events = tuple(fault_events(faults, hosts, size, offset))
        out.append(Episode(f"{trace}[day {offset}:{offset + size}]", events, float(size)))
    return out


def evaluate(method: str, episode: Episode, params: dict[str, Any]) -> tuple[float, float]:
    """Replay ``episode`` with ``method`` and ``params``: (ETTR, hours lost)."""
    from .generate import generate_custom
    from .solution import ReconfigSolution
    from .validate import evaluate as evaluate_plan

    base = generate_custom(episode.hosts, 8, episode.model, episode.global_batch, 0, 0, seed=0)
    best_s = evaluate_plan(base, ReconfigSolution(pipelines=base.current_plan or ()))[0]
    row = replay_ettr(
        method,
        base,
        episode.events,
        episode.days,
        best_s,
        params=params,
        fallback=None,
        time_limit_s=episode.time_limit_s,
        count_decisions=False,
    )
    return row["ettr"], row["lost_h"]


POLICY = PolicySpec(
    traces=("infinitehbd",),
    terms=TERMS,
    episodes=episodes,
    evaluate=evaluate,
    methods=("heuristic:megatron", "heuristic:oobleck", "heuristic:keep_shrink"),
    description="ETTR, then hours lost, over windows of the InfiniteHBD fault trace",
)

__all__ = [
    "POLICY",
    "REBUILD_S",
    "SLOW_KINDS",
    "TERMS",
    "Episode",
    "episodes",
    "evaluate",
    "fault_events",
    "fault_state",
    "replay_ettr",
    "window_instance",
]

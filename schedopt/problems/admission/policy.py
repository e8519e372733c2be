"""Policy-level tuning of the admission heuristics on trace replays (AutoSched, ICS'24).

An **episode** is a window of consecutive jobs of a public trace (by submission time, times
shifted so the first arrives at 0), replayed lease round by lease round on a cluster of 8-GPU
hosts by the driver (:mod:`.driver`), with the heuristic being tuned deciding every round. What
a scheduler cares about over the episode is what is scored, in this order:

1. **deadline misses**: SLO jobs that did not meet their deadline (rejected, unschedulable,
   late or dropped), minimised;
2. **best-effort mean JCT** (seconds), minimised.

Traces (read from a copy of the public data; see ``../shared/data/README.md``): the
Chronus/Philly MIX2 trace and ElasticFlow's ITP cluster01 trace with deadlines attached by its
documented slack rule (seed 0).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedopt.core.registry import PolicySpec
from schedopt.core.result import ObjectiveTerm, Sense
from schedopt.io.traces import TraceLoad, load_elasticflow, load_philly_chronus
from schedopt.io.traces.record import TraceJob

#: Trace name → its file under the data folder and its loader.
TRACES: dict[str, tuple[str, Callable[[Path], TraceLoad]]] = {
    "philly-mix2": (
        "philly-chronus/trace_job_Philly_MIX2.csv",
        lambda path: load_philly_chronus(path),
    ),
    "elasticflow": ("elasticflow-itp/cluster01.csv", lambda path: load_elasticflow(path, seed=0)),
}

TERMS = (
    ObjectiveTerm("deadline misses", Sense.MINIMIZE, "jobs"),
    ObjectiveTerm("best-effort mean JCT", Sense.MINIMIZE, "s"),
)


@dataclass(frozen=True)
class Episode:
    """One replay: ``jobs`` (times from the episode's start) on ``hosts`` 8-GPU hosts, in
    rounds of ``slot_s`` seconds planning ``horizon_slots`` ahead. Rounds are solved in
    deterministic mode (a rerun gives the same metrics), a fallback to ``auto`` with
    ``time_limit_s`` of deterministic work. ``fallbacks``: what the driver tries when the tuned
    heuristic finds nothing (heuristics only by default, so that the episode measures the
    heuristic and stays cheap; the previous plan's remainder is always the last resort)."""

    name: str
    jobs: tuple[TraceJob, ...]
    hosts: int = 4
    slot_s: float = 300.0
    horizon_slots: int = 24
    time_limit_s: float = 0.5
    fallbacks: tuple[str, ...] = ("heuristic:edf", "heuristic:slack")


def trace_jobs(data_dir: str | os.PathLike[str], trace: str) -> list[TraceJob]:
    """Every job of ``trace`` in ``data_dir``, by submission time."""
    if trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}; known: {', '.join(TRACES)}")
    relative, load = TRACES[trace]
    jobs = load(Path(data_dir) / relative).jobs
    return sorted(jobs, key=lambda j: (j.submit_s, j.id))


def window(jobs: list[TraceJob], start: int, size: int) -> tuple[TraceJob, ...]:
    """Jobs ``start .. start+size-1``, times shifted so the first arrives at 0."""
    part = jobs[start : start + size]
    if not part:
        raise ValueError(f"the trace has no job at position {start}")
    t0 = part[0].submit_s
    return tuple(dataclasses.replace(j, submit_s=j.submit_s - t0) for j in part)


def episodes(
    data_dir: str | os.PathLike[str], trace: str, start: int, count: int, size: int
) -> list[Episode]:
    """``count`` consecutive windows of ``size`` jobs of ``trace``, from job ``start`` on."""
    jobs = trace_jobs(data_dir, trace)
    return [
        Episode(f"{trace}[{start + k * size}:{start + (k + 1) * size}]", window(jobs, s, size))
        for k, s in enumerate(range(start, start + count * size, size))
    ]


def evaluate(method: str, episode: Episode, params: dict[str, Any]) -> tuple[float, float]:
    """Replay ``episode`` with ``method`` and ``params``: (deadline misses, BE mean JCT)."""
    from schedopt.topology import Cluster

    # The replay driver is loaded for a replay only, not with the problem.
    from .driver import DriverConfig, replay

    config = DriverConfig(
        slot_s=episode.slot_s,
        horizon_slots=episode.horizon_slots,
        method=method,
        time_limit_s=episode.time_limit_s,
        deterministic=True,
        params=dict(params),
        fallbacks=episode.fallbacks,
    )
    report = replay(Cluster.dgx(nodes=episode.hosts, gpus_per_node=8), episode.jobs, config)
    misses = report.slo_jobs - report.slo_met
    return float(misses), float(report.be_mean_jct_s or 0.0)


POLICY = PolicySpec(
    traces=tuple(TRACES),
    terms=TERMS,
    episodes=episodes,
    evaluate=evaluate,
    methods=("heuristic:edf", "heuristic:slack"),
    description="deadline misses, then best-effort mean JCT, over a lease-round replay",
)

__all__ = ["POLICY", "TERMS", "TRACES", "Episode", "episodes", "evaluate", "trace_jobs", "window"]

"""Policy-level tuning of the packing heuristic on round-by-round replays (AutoSched, ICS'24).

An **episode** is a sequence of planning rounds on one fleet (RollMux's 328 H20 + 328 H800
GPUs by default): a pool of jobs is generated (RollPacker's shapes, ``generate_custom``), the
first ``start_jobs`` of them are active, and after every round ``finish`` jobs end and
``arrive`` new ones start (up to ``max_jobs``). Every round is re-planned by the method being
tuned, with the previous round's pools as each continuing phase's current pool (L3 charges for
moving their state). What an RL operator cares about over the episode is scored, in this order:

1. the mean **hourly cost** of the hosts held, minimised;
2. the mean **SLO miss rate** on held-out rollout samples (1 − attainment), minimised;
3. the mean **data moved** between rounds (GB), minimised.

A round the method cannot plan counts as the fleet's full hourly price, a miss rate of 1 and
no data moved: a plan the scheduler could not make is paid for as if every host were held.
There is no public trace of RL post-training jobs; the episodes are generated (trace
``generated``: episode ``k`` uses generator seed ``start + k``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from schedopt.core.registry import PolicySpec
from schedopt.core.result import ObjectiveTerm, Sense

TERMS = (
    ObjectiveTerm("mean hourly cost", Sense.MINIMIZE, "$/h"),
    ObjectiveTerm("mean held-out SLO miss rate", Sense.MINIMIZE),
    ObjectiveTerm("mean data moved", Sense.MINIMIZE, "GB"),
)


@dataclass(frozen=True)
class Episode:
    """``rounds`` planning rounds over a pool of ``pool_jobs`` generated jobs (``seed``) on
    ``h20_hosts`` H20 and ``h800_hosts`` H800 hosts."""

    name: str
    seed: int
    rounds: int = 6
    start_jobs: int = 20
    finish: int = 2
    arrive: int = 3
    max_jobs: int = 30
    pool_jobs: int = 40
    h20_hosts: int = 41
    h800_hosts: int = 41
    cpu_hosts: int = 40
    time_limit_s: float = 5.0


def episodes(
    data_dir: str | os.PathLike[str], trace: str, start: int, count: int, size: int
) -> list[Episode]:
    """``count`` generated episodes of ``size`` rounds, seeds ``start``, ``start + 1``, ...
    (``data_dir`` is not read: the jobs are generated)."""
    if trace != "generated":
        raise ValueError(f"unknown trace {trace!r}; known: generated")
    return [Episode(f"generated-s{s}", s, rounds=size) for s in range(start, start + count)]


def replay_rounds(
    episode: Episode, method: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Replay ``episode``: one row per round (jobs, status, objectives, metrics)."""
    from schedopt.core.solve import solve

    from .generate import generate_custom
    from .instance import CoschedInstance

    pool = generate_custom(
        episode.h20_hosts,
        episode.h800_hosts,
        episode.cpu_hosts,
        episode.pool_jobs,
        episode.seed,
        (0, 1),
        scale=4,
        name=episode.name,
    )
    jobs = list(pool.jobs)
    active, waiting = jobs[: episode.start_jobs], jobs[episode.start_jobs :]
    previous: dict[tuple[str, int], str] = {}
    rows = []
    for rnd in range(episode.rounds):
        doc = pool.model_dump(mode="json")
        docs = []
        for job in active:
            jd = job.model_dump(mode="json")
            for k, phase in enumerate(jd["phases"]):
                phase["current_pool"] = previous.get((job.id, k))
            docs.append(jd)
        doc["jobs"], doc["name"] = docs, f"{episode.name}-round{rnd}"
        inst = CoschedInstance.model_validate(doc)
        r = solve(inst, method, time_limit_s=episode.time_limit_s, params=params)
        rows.append(
            {
                "round": rnd,
                "jobs": len(active),
                "status": r.status.value,
                "solved_by": r.method,
                "objectives": r.objectives,
                "metrics": dict(r.metrics),
                "wall_s": r.wall_s,
                "fleet_price": sum(
                    p.hosts * p.gpus_per_host * p.price_per_gpu_hour for p in inst.pools
                ),
            }
        )
        if r.solution is not None:
            previous = {}
            by_id = {j.id: j for j in active}
            for plan in r.solution.plans:
                job = by_id[plan.job_id]
                for k, pp in enumerate(plan.phases):
                    previous[job.id, k] = job.phases[k].options[pp.option].pool
        active = active[episode.finish :] + waiting[: episode.arrive]
        waiting = waiting[episode.arrive :]
        active = active[: episode.max_jobs]
    return rows


def evaluate(method: str, episode: Episode, params: dict[str, Any]) -> tuple[float, float, float]:
    """Replay ``episode`` with ``method`` and ``params``: (mean $/h, mean held-out SLO miss
    rate, mean GB moved)."""
    rows = replay_rounds(episode, method, params)
    cost = miss = moved = 0.0
    for row in rows:
        if row["objectives"] is None:
            cost += row["fleet_price"]
            miss += 1.0
            continue
        cost += row["objectives"][0]
        miss += 1.0 - row["metrics"].get("slo_attainment_holdout", 0.0)
        moved += row["objectives"][2]
    n = len(rows)
    return cost / n, miss / n, moved / n


POLICY = PolicySpec(
    traces=("generated",),
    terms=TERMS,
    episodes=episodes,
    evaluate=evaluate,
    methods=("heuristic:packing",),
    description="mean hourly cost, then held-out SLO misses, then data moved, over rounds",
)

__all__ = ["POLICY", "TERMS", "Episode", "episodes", "evaluate", "replay_rounds"]

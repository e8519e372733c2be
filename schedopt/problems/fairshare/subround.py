"""A round over some of its jobs and hosts (formulations/fairshare.md, "Decomposition"): a
decomposition part, or a neighbourhood of the join's L2 repair."""

from __future__ import annotations

import dataclasses

from .data import JobData, ModelData


def part_data(data: ModelData, indices: list[int], group: int, groups: dict[str, int]) -> ModelData:
    """The part as a round of its own: its hosts, its jobs (options that fit its hosts), and
    every unit's accounts scaled by its share of demand ``α_vp`` (``shares[v]``)."""
    # the part's hosts in the round's own order, not a set's: the order of a set of names
    # changes with the process (str hashes are salted), and the part's board, rounding and
    # water-fill follow this order (#17: another plan from each process, same seed)
    hosts = [h for h in data.host_type if groups.get(h) == group]
    free = {h: data.free[h] for h in hosts}
    host_type = {h: data.host_type[h] for h in hosts}
    cap: dict[str, int] = {}
    widest: dict[str, int] = {}
    for h in hosts:
        g = host_type[h]
        if g is not None:
            cap[g] = cap.get(g, 0) + free[h]
            widest[g] = max(widest.get(g, 0), free[h])
    # the most GPUs an option of each type may ask for in this part
    fits = {g: cap[g] if data.multi_host else min(cap[g], widest[g]) for g in cap}
    jobs = []
    for n, i in enumerate(indices):
        job = data.jobs[i]
        options = tuple(o for o in job.options if o.n <= fits.get(o.gpu_type, 0))
        prev = None
        kept = None if job.prev_option is None else job.options[job.prev_option]
        if kept in options and set(job.prev_hosts) <= host_type.keys():
            prev = options.index(kept)
        # (JobData built directly: dataclasses.replace cost 0.8 s over 20,000 jobs)
        jobs.append(
            JobData(
                n,
                job.id,
                job.tenant,
                job.unit,
                options,
                job.was_running,
                prev,
                job.prev_hosts,
                job.restart_cost,
                job.restart_scaled,
                job.used_gpu_s,
            )
        )
    return dataclasses.replace(
        data,
        jobs=tuple(jobs),
        type_capacity=cap,
        free=free,
        host_type=host_type,
    )


__all__ = ["part_data"]

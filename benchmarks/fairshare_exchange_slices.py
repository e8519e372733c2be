"""The exchange neighbourhood at 16,384 GPUs by host slices (issue #17), measured and not
shipped: ``decomp`` runs ``l3_exchange`` only where the LP over the whole round fits
(``EXCHANGE_S_PER_JOB``), which at 20,000 jobs it does not (1.8-2.3 s). Here, in its place,
the LP over the jobs of one slice of the hosts at a time (the hosts in ``K`` groups in
topology order; a slice's jobs are those on or previously on its hosts, and every K-th job
that has neither), each slice's neighbourhood solved as in ``l3_exchange``, for ``SLICES``
slices of ``SLICE_S`` seconds each, within the time ``decomp`` leaves the step. One JSON line
as ``fairshare_speed.py``.

    python benchmarks/fairshare_exchange_slices.py TAG K SLICES SLICE_S [GPUS TENANTS JOBS SEED]
"""

from __future__ import annotations

import sys
import time

import fairshare_speed

from schedopt.problems.fairshare import join_levels
from schedopt.problems.fairshare.l2_repair import RepairStats, improve_neighbourhood
from schedopt.problems.fairshare.l3_exchange import neighbourhood


def slices(k: int, count: int, slice_s: float):  # type: ignore[no-untyped-def]
    def exchange(state, seconds, out: RepairStats) -> RepairStats:  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        data = state.data
        hosts = sorted(data.free)
        group = {h: i * k // len(hosts) for i, h in enumerate(hosts)}
        for p in range(count):
            end = time.perf_counter() + slice_s
            if end > started + seconds:  # (decomp's time left for the step)
                break
            jobs = [
                j.index
                for j in data.jobs
                if any(group[h] == p for h in state.hosts[j.index])
                or any(group[h] == p for h in j.prev_hosts)
                or (not state.hosts[j.index] and not j.prev_hosts and j.index % k == p)
            ]
            chosen = neighbourhood(state, end, jobs=jobs)
            if chosen:
                improve_neighbourhood(state, chosen, end, False, out)
        out.seconds += time.perf_counter() - started
        return out

    return exchange


def main() -> None:
    tag, k, count, slice_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    # the whole step replaced: l3_exchange's own cap (EXCHANGE_MAX_S) and its check of the
    # round's size (fits) are not read; the slices stop on the time the join leaves the step
    join_levels.exchange = slices(k, count, slice_s)  # type: ignore[assignment]
    sys.argv = [sys.argv[0], tag, "auto", "10", *sys.argv[5:]]
    fairshare_speed.main()


if __name__ == "__main__":
    main()

"""Where the wall time of cosched's exact rounds goes: the case workers' busy time against the
solving process's, per call of the refinement of Farley's θ (#17).

    PYTHONPATH=<checkout> nice -n 5 python benchmarks/cosched_refine_busy.py [--seconds 60]

Solves issue #17's 4,096 GPUs x 200 jobs (``generate_custom(256, 256, 200, 200, seed=0,
models=(0, 1))``) with ``auto`` in ``--seconds``, as ``schedopt bench cosched-paper-60s``
does, and times every call of ``refine`` (patched here, not in the library): its wall time;
the wall time of its dispatches (``executor.run`` on the case workers); the workers' busy time
(the CP-SAT case models' own elapsed times, measured on the workers); the solving process's
time pulling tasks (the cheap stages of ``handed()``) and reading results (``take``), and in
that the two-pool programme (``open_bound``). ``idle`` = workers x dispatch wall - busy: the
worker time lost. Prints one line per call and the totals, with the load before and after.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator

import schedopt
from schedopt.executor.base import PoolExecutor
from schedopt.problems.cosched import farley, generate_custom, pricing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="auto's time limit")
    args = ap.parse_args()
    calls: list[dict[str, float]] = []
    now: list[dict[str, float]] = []  # the refine call running, if any
    refine, run, open_bound = farley.refine, PoolExecutor.run, pricing.open_bound

    def timed_refine(*a, **kw):
        rec = dict.fromkeys(("wall", "dispatch", "busy", "handed", "take", "prog", "tasks"), 0.0)
        rec["workers"] = 0.0
        now[:] = [rec]
        t = time.perf_counter()
        try:
            return refine(*a, **kw)
        finally:
            rec["wall"] = time.perf_counter() - t
            now.clear()
            calls.append(rec)

    def timed_run(self, tasks, *, deadline=None, **kw):
        if not now:
            yield from run(self, tasks, deadline=deadline, **kw)
            return
        rec = now[0]
        rec["workers"] = self.workers

        def pulled() -> Iterator:
            it = iter(tasks)
            while True:
                t = time.perf_counter()
                task = next(it, None)
                rec["handed"] += time.perf_counter() - t
                if task is None:
                    return
                rec["tasks"] += 1
                yield task

        t0 = time.perf_counter()
        for res in run(self, pulled(), deadline=deadline, **kw):
            rec["busy"] += res.elapsed_s
            t = time.perf_counter()
            yield res
            rec["take"] += time.perf_counter() - t
        rec["dispatch"] += time.perf_counter() - t0

    def timed_open_bound(*a, **kw):
        t = time.perf_counter()
        try:
            return open_bound(*a, **kw)
        finally:
            if now:
                now[0]["prog"] += time.perf_counter() - t

    farley.refine = timed_refine
    PoolExecutor.run = timed_run  # type: ignore[method-assign]
    pricing.open_bound = timed_open_bound
    inst = generate_custom(256, 256, 200, 200, 0, (0, 1))
    load0 = os.getloadavg()[0]
    res = schedopt.solve(inst, "auto", time_limit_s=args.seconds)
    load1 = os.getloadavg()[0]
    cols = ("wall", "dispatch", "busy", "idle", "handed", "take", "prog", "tasks")
    print("call " + " ".join(f"{c:>8}" for c in cols))
    tot = dict.fromkeys(cols, 0.0)
    for k, rec in enumerate(calls):
        rec["idle"] = rec["workers"] * rec["dispatch"] - rec["busy"] if rec["workers"] else 0.0
        for c in cols:
            tot[c] += rec[c]
        print(f"{k:4} " + " ".join(f"{rec[c]:8.2f}" for c in cols))
    print("all  " + " ".join(f"{tot[c]:8.2f}" for c in cols))
    st = res.stats or {}
    print(
        f"bound {res.best_bound}, plan {(res.objectives or [None])[0]}, rounds {st.get('rounds')}, "
        f"load {load0:.2f} -> {load1:.2f}"
    )


if __name__ == "__main__":
    main()

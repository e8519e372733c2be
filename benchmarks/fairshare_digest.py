"""A digest of fair share's answers on a suite (issue #17), for "the same behaviour" checks of a
change: ``auto`` with ``deterministic=True`` on each instance, one JSON line each (objectives,
bound, the L2 and L3 bounds, a SHA-256 of the solution's canonical JSON and one of the stats).

``decomp`` (``auto`` from 5,000 jobs) cuts its later steps (B2L, the repairs, B3L) by wall
clock whatever ``deterministic`` says, so two runs of one commit differ at the papers' scale.
With ``--counted-clock TICK`` every clock of the process reads the number of times it was
read, times TICK seconds, and HiGHS's own wall-clock limit is lifted (the deadline still stops
it, through the callbacks): the steps are then cut at the same point on every run, and two
commits that run the same steps give the same digest. Set ``PYTHONHASHSEED`` for it.

    python benchmarks/fairshare_digest.py TAG [--suite fairshare-paper] [--limit 10]
        [--counted-clock 1e-5]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "results" / "fairshare_digest.jsonl"


def count_the_clocks(tick: float) -> None:
    """Every clock a call counter (module docstring); before schedopt is imported."""
    calls = itertools.count()

    def counted() -> float:
        return next(calls) * tick

    def counted_ns() -> int:
        return int(counted() * 1e9)

    for name in ("perf_counter", "monotonic", "process_time"):
        setattr(time, name, counted)
    for name in ("perf_counter_ns", "monotonic_ns"):
        setattr(time, name, counted_ns)
    time.time = lambda: 1.7e9 + counted()

    import highspy

    import schedopt.core.stopping as stopping

    stopping.thread_cpu_times = lambda: None  # (real CPU times against counted wall time)
    set_option = highspy.Highs.setOptionValue

    def no_wall_limit(self: Any, name: str, value: Any) -> Any:
        return set_option(self, name, 1e9 if name == "time_limit" else value)

    highspy.Highs.setOptionValue = no_wall_limit  # type: ignore[method-assign]


def sha256(doc: Any) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tag")
    parser.add_argument("--suite", default="fairshare-paper")
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--counted-clock", type=float, default=None, metavar="TICK")
    args = parser.parse_args()
    if args.counted_clock is not None:
        if "PYTHONHASHSEED" not in os.environ:
            sys.exit("--counted-clock: set PYTHONHASHSEED (string sets iterate in its order)")
        count_the_clocks(args.counted_clock)

    # (after the clocks, as every import of schedopt)
    from common import print_row

    import schedopt
    from schedopt.bench.suites import all_suites
    from schedopt.core.checksum import instance_checksum

    for recipe in all_suites()[args.suite].recipes:
        inst = recipe.build()
        res = schedopt.solve(inst, "auto", deterministic=True, time_limit_s=args.limit)
        sol = None if res.solution is None else res.solution.model_dump(mode="json")
        row = {
            "tag": args.tag,
            "recipe": recipe.name,
            # (the instance the suite records: its checksum as recorded)
            "instance_as_recorded": instance_checksum(inst) == recipe.checksum,
            "limit_s": args.limit,
            "counted_clock": args.counted_clock,
            "load": round(os.getloadavg()[0], 1),
            "status": res.status.name,
            "method": res.method,
            "objectives": res.objectives,
            "bound": res.best_bound,
            "L2_bound": res.stats.get("L2_bound"),
            "L3_bound": res.stats.get("L3_bound"),
            "solution_sha256": sha256(sol),
            "stats_sha256": sha256(res.stats),
        }
        print_row(row, OUT)


if __name__ == "__main__":
    main()

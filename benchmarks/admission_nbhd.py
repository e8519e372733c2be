"""Admission's repair by pass schedules of neighbourhoods, offline and reproducible (#17;
RESULTS.md, "Admission's repair: windows across the deadlines, widening windows").

Not a ``schedopt bench`` suite: it measures the repair step of ``decomp:lp`` from one start.
The start and the bound are ``benchmarks/admission_step.py``'s (computed once as ``decomp:lp``
does, guide 30 s, cached in ``--cache``); no LP point (the windows alone). Per schedule,
``repair`` runs ``--steps`` CP-SAT steps on CP-SAT's deterministic time from that start, with
the repair's pass kinds replaced by the schedule, cycled (``deadline/slot`` is the repair's own
order without an LP). The kinds ``span`` (windows across the deadlines), ``grow`` (deadline
windows that widen after a proven step) and ``early`` (deadline windows until
``--early-hard`` in a row are not proven, then span windows) were measured at 95b0216, whose
``repair.py`` has them; run this script from a checkout of 95b0216 for them. ``--trace`` adds
each step's gain, CPU seconds and jobs. Values repeat on any load; the CPU
seconds (``time.process_time()``) and the wall do not. Rows go to
benchmarks/results/admission_nbhd.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from admission_step import prepared
from common import append_rows

from schedopt.core.stopping import Deadline
from schedopt.problems.admission import repair as repair_mod
from schedopt.problems.admission.assemble import guaranteed_value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="1024x3200")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--steps", default="35")
    ap.add_argument("--cache", default="/tmp")
    ap.add_argument("--group-jobs", type=int, default=None, help="SLO jobs a window")
    ap.add_argument("--step-s", type=float, default=None, help="deterministic s a step")
    ap.add_argument("--early-hard", type=int, default=None, help="repair.EARLY_HARD")
    ap.add_argument("--trace", action="store_true", help="print each step's gain and CPU s")
    ap.add_argument("schedules", nargs="+", help="pass kinds separated by '/', cycled")
    args = ap.parse_args(argv)
    if args.group_jobs:
        repair_mod.GROUP_JOBS = args.group_jobs
    if args.step_s:
        repair_mod.STEP_S = args.step_s
    if args.early_hard:  # at the commit above
        repair_mod.EARLY_HARD = args.early_hard  # type: ignore[attr-defined]
    trace: list[tuple[float, float]] = []
    improve = repair_mod.improve_group

    def traced(sub, start, *a, **k):
        c = time.process_time()
        found = improve(sub, start, *a, **k)
        gain = 0 if found is None else guaranteed_value(sub, found) - guaranteed_value(sub, start)
        trace.append((gain / 1000, round(time.process_time() - c, 2), len(sub.jobs)))
        return found

    repair_mod.improve_group = traced
    for seed in (int(s) for s in args.seeds.split(",")):
        data, start, bound = prepared(args.shape, seed, Path(args.cache))
        for steps in (int(n) for n in args.steps.split(",")):
            for schedule in args.schedules:
                kinds = schedule.split("/")
                saved = repair_mod._pass_kind
                repair_mod._pass_kind = lambda passes, guided, k=kinds: k[(passes - 1) % len(k)]
                trace.clear()
                load0 = os.getloadavg()[0]
                t, c = time.perf_counter(), time.process_time()
                try:
                    out, stats = repair_mod.repair(
                        data,
                        start,
                        Deadline.after(3600),
                        0,
                        None,
                        max_steps=steps,
                        deterministic=True,
                    )
                finally:
                    repair_mod._pass_kind = saved
                value = guaranteed_value(data, out) / 1000
                row = {
                    "instance": f"{args.shape}-s{seed}",
                    "schedule": schedule,
                    "max_steps": steps,
                    "bound": bound,
                    "start": guaranteed_value(data, start) / 1000,
                    "value": value,
                    "gap": round((bound - value) / bound, 5),
                    "cpu_s": round(time.process_time() - c, 2),
                    "wall_s": round(time.perf_counter() - t, 2),
                    "load_before": load0,
                    "load_after": os.getloadavg()[0],
                    "group_jobs": repair_mod.GROUP_JOBS,
                    "step_s": repair_mod.STEP_S,
                    "stats": stats,
                }
                if args.trace:
                    row["trace"] = list(trace)
                print(json.dumps(row), flush=True)
                append_rows("admission_nbhd", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

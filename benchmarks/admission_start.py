"""``decomp:lp``'s start at 1,024 GPUs × 3,200 jobs by the size of the LP's parts (#17;
RESULTS.md, "Admission at 1,024 × 3,200: LP parts of 400 jobs ...").

Not a ``schedopt bench`` suite: per instance and ``--part-jobs`` value (``guide.LP_PART_JOBS``)
it times the parts' LPs alone and the guide (LPs and B1L), makes the start as ``decomp:lp``
does (``start_plan`` with the tuned greedy plans), then, for each ``--steps`` cap, runs the
repair from that start on CP-SAT's deterministic time (``repair(..., max_steps=N,
deterministic=True)``): the values repeat on any load, the times do not. Rows go to
benchmarks/results/admission_start.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import time

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows

import schedopt.problems.admission.guide as guide_mod
from schedopt.core.stopping import Deadline
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import guaranteed_value
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.lpdecomp import greedy_plans, start_plan
from schedopt.problems.admission.repair import repair


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--part-jobs", default="200,400")
    ap.add_argument("--steps", default="", help="deterministic repair step caps, e.g. 12,18")
    args = ap.parse_args(argv)
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = generate_custom(hosts=128, jobs=3200, slots=12, seed=seed)
        far = Deadline.after(3600)
        data = build_data(inst, check_size=False, deadline=far)
        greedy = greedy_plans(data, far)
        for n in (int(x) for x in args.part_jobs.split(",")):
            guide_mod.LP_PART_JOBS = n
            load0 = os.getloadavg()[0]
            t = time.perf_counter()
            guide_mod._by_parts(data, 60.0, far)
            lp_s = time.perf_counter() - t
            t = time.perf_counter()
            g = guide_mod.guide(data, 60.0, far)
            guide_s = time.perf_counter() - t
            start = start_plan(data, g.lp, None, far, greedy)
            assert start is not None and g.bound is not None
            base = {
                "instance": f"1024x3200-s{seed}",
                "part_jobs": n,
                "lp_s": round(lp_s, 2),
                "guide_s": round(guide_s, 2),
                "bound": round(g.bound, 2),
                "bound_label": g.label,
                "greedy": [guaranteed_value(data, p) / 1000 for p in greedy],
                "start": guaranteed_value(data, start) / 1000,
                "load_before": load0,
            }
            rows = [{**base, "load_after": os.getloadavg()[0]}]
            for cap in (int(x) for x in args.steps.split(",") if x):
                t = time.perf_counter()
                out, stats = repair(data, start, far, 0, g.lp, max_steps=cap, deterministic=True)
                value = guaranteed_value(data, out) / 1000
                rows.append(
                    {
                        **base,
                        "steps": cap,
                        "value": value,
                        "gap": (g.bound - value) / g.bound,
                        "repair_s": round(time.perf_counter() - t, 2),
                        "load_after": os.getloadavg()[0],
                        "stats": stats,
                    }
                )
            for row in rows:
                print(json.dumps(row), flush=True)
            append_rows("admission_start", rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reproduction of #17's auto row: auto on 256 GPUs, optionally with a sleep in decomp's data."""

import json
import os
import sys
import time

import schedopt
from schedopt.problems.reconfig import decomp, generate_custom

limit = float(sys.argv[1])
sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
inst = generate_custom(32, 8, "llama2-70b", 512, 16, 16, seed=0)
if sleep:
    built = decomp.build_data

    def slow(*a, **k):
        time.sleep(sleep)
        return built(*a, **k)

    decomp.build_data = slow
t = time.perf_counter()
r = schedopt.solve(inst, "auto", time_limit_s=limit)
wall = time.perf_counter() - t
keep = {
    k: v
    for k, v in r.stats.items()
    if k in ("no_template_answer", "cut_short", "proven_over", "heuristic", "widened")
}
print(
    json.dumps(
        {
            "tree": os.environ.get("PYTHONPATH"),
            "limit": limit,
            "sleep": sleep,
            "method": r.method,
            "L1": r.objectives[0] if r.objectives else None,
            "status": r.status.value,
            "wall": round(wall, 2),
            "bound": r.best_bound,
            "stats": keep,
            "load": os.getloadavg()[0],
            "explanation": (r.explanation or "")[:160],
        }
    )
)

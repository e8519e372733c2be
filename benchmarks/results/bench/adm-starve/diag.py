# ruff: noqa
"""One admission-paper row's `auto` at 10 s in TREE, in-process, every stat printed, with the
process's CPU: python diag.py TREE RECIPE [FACTOR] (FACTOR: tests/slower.py's emulation)."""

import json
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
import schedopt
from schedopt.bench.suites import all_suites

recipe = sys.argv[2]
factor = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
inst = next(r for r in all_suites()["admission-paper"].recipes if r.name == recipe).build()
import contextlib

ctx = contextlib.nullcontext()
if factor != 1.0:
    from tests.slower import slower_machine

    ctx = slower_machine(factor)
with ctx:
    c0, t = time.process_time(), time.perf_counter()
    r = schedopt.solve(inst, "auto", time_limit_s=10.0)
    wall, cpu = time.perf_counter() - t, time.process_time() - c0
print(
    json.dumps(
        {
            "tree": os.path.basename(sys.argv[1]),
            "recipe": recipe,
            "factor": factor,
            "wall": round(wall, 2),
            "cpu": round(cpu, 2),
            "load": open("/proc/loadavg").read().split()[0],
            "obj": r.objectives[0] if r.objectives else None,
            "bound": r.best_bound,
            "gap": None if r.gap is None else round(100 * r.gap, 2),
            "stats": {
                k: v
                for k, v in r.stats.items()
                if isinstance(v, int | float | str) and k not in ("decomposition",)
            },
        }
    )
)

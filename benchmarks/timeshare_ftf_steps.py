"""Finish-time fairness: LPs and seconds per round at 32, 256 and 1,024 jobs with elapsed time
(issue #19; benchmarks/RESULTS.md). Run: PYTHONPATH=$PWD python benchmarks/timeshare_ftf_steps.py"""

import time

import numpy as np

import schedopt
from schedopt.problems.timeshare import TimeshareInstance

rng = np.random.default_rng(3)
for n in (32, 256, 1024):
    jobs = [
        {
            "id": f"j{i}",
            "throughput": {
                "v100": float(rng.uniform(2, 10)),
                "p100": float(rng.uniform(1, 5)),
                "k80": float(rng.uniform(0.3, 2)),
            },
            "scale_factor": int(rng.choice([1, 1, 2, 4])),
            "remaining_steps": float(rng.uniform(1e3, 1e6)),
            "time_since_start_s": float(rng.uniform(0, 2e4)),
            "isolated_time_s": float(rng.uniform(0, 1e4)),
        }
        for i in range(n)
    ]
    inst = TimeshareInstance.model_validate(
        {
            "policy": "finish_time_fairness",
            "workers": {"v100": 36, "p100": 36, "k80": 36},
            "jobs": jobs,
        }
    )
    t = time.perf_counter()
    r = schedopt.solve(inst, method="milp:highs", time_limit_s=120)
    dt = time.perf_counter() - t
    print(n, r.status.value, r.stats["dinkelbach_steps"], f"{dt:.2f}s")

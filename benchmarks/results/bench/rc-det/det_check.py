"""decomp:physical with deterministic=True at the papers' scale (#17): one run, printed as a
JSON line (the plan's digest, L1, the bound, the physical gap, the stats, the wall time).
Usage: det_check.py HOSTS BATCH [LIMIT_S] (256 GPUs: 32 512; 1,024 GPUs: 128 1024)."""

import hashlib
import json
import sys
import time
from pathlib import Path

import schedopt
from schedopt.problems.reconfig import generate_custom

hosts, batch = int(sys.argv[1]), int(sys.argv[2])
limit = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
inst = generate_custom(hosts, 8, "llama2-70b", batch, 16, 16, seed=0)
began = time.perf_counter()
r = schedopt.solve(inst, "decomp:physical", time_limit_s=limit, deterministic=True)
wall = time.perf_counter() - began
print(
    json.dumps(
        {
            "gpus": inst.cluster.num_gpus,
            "limit_s": limit,
            "status": r.status.value,
            "l1_s": r.objectives[0],
            "objectives": r.objectives,
            "bound": r.best_bound,
            "physical_gap": r.stats.get("physical_gap"),
            "plan_sha256": hashlib.sha256(r.solution.model_dump_json().encode()).hexdigest(),
            "stats": r.stats,
            "wall_s": round(wall, 2),
            "load": Path("/proc/loadavg").read_text().split()[:3],
        },
        sort_keys=True,
    )
)

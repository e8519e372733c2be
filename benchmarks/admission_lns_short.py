"""CPU seconds of admission's ``heuristic:lns`` under a short limit, and whether it imported
OR-Tools' CP-SAT (with the pandas that ``cp_model`` imports) for it.

Each run is a fresh process (under ``nice -n 5``): the instance is loaded first (the admission
package imported, outside the figure), then ``schedopt.solve(inst, "heuristic:lns",
time_limit_s=LIMIT)`` is timed by ``time.process_time``. Trees (checkouts) alternate, one run
each, ``--runs`` times; one JSON line a run on stdout (and ``--out``).

    python benchmarks/admission_lns_short.py --tree old=/work/wt/x-old --tree new=$PWD \\
        --limits 0.3,3 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from common import print_row

CHILD = """\
import json, sys, time
import schedopt
inst = schedopt.load(sys.argv[1])
cpu = time.process_time()
wall = time.perf_counter()
result = schedopt.solve(inst, "heuristic:lns", time_limit_s=float(sys.argv[2]), seed=0)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
row = {"status": result.status.value, "steps": result.stats.get("lns_steps")}
row.update(objective=result.objective, solve_cpu_s=round(cpu, 3), solve_wall_s=round(wall, 3))
row.update(cp_model="ortools.sat.python.cp_model" in sys.modules, pandas="pandas" in sys.modules)
print(json.dumps(row))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout")
    ap.add_argument("--file", default="instances/admission/example.json")
    ap.add_argument("--limits", default="0.3", help="comma-separated time limits in s")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", help="append one JSON row a run here")
    args = ap.parse_args()
    file = str(Path(args.file).resolve())
    trees = dict(t.split("=", 1) for t in args.tree)
    for run in range(args.runs):
        for limit in args.limits.split(","):
            for name, tree in trees.items():
                done = subprocess.run(
                    ["nice", "-n", "5", sys.executable, "-c", CHILD, file, limit],
                    env={**os.environ, "PYTHONPATH": tree},
                    capture_output=True,
                    text=True,
                    cwd="/tmp",
                    check=True,
                )
                row = {"tree": name, "run": run, "limit_s": float(limit), "load": os.getloadavg()}
                row.update(json.loads(done.stdout))
                print_row(row, args.out)


if __name__ == "__main__":
    main()

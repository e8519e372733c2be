"""Deterministic runs at a short limit, two trees alternating (#17): for each (problem, size,
method), a fresh process per tree solves the generated instance (seed 0) twice with
``deterministic=True``; one JSON row per run with its wall time, its CPU time (this process
and its children: CBC runs as one), the 1-minute load and a digest of the answer (status,
objectives, bound, solution), so that the two runs of a tree, and the trees, can be compared.

    nice -n 5 python benchmarks/det_budget_wall.py --tree old=/path/to/main --tree new=. \
        --cases moe_placement:small:milp:highs,cosched:small:milp:cbc --limit 1 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: What a child process runs: one case, twice, a JSON row per run.
_CHILD = r"""
import hashlib, json, os, resource, sys, time
import schedopt
problem, size, method, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
inst = schedopt.get_problem(problem).generate(size, 0)
for run in (1, 2):
    load = os.getloadavg()[0]
    c0 = time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = schedopt.solve(inst, method, time_limit_s=limit, deterministic=True)
    wall = time.perf_counter() - t0
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    s = r.solution
    point = None if s is None else s.model_dump_json()
    answer = (r.status.value, r.objectives, r.best_bound, point)
    print(json.dumps({
        "run": run, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load1": round(load, 2),
        "status": r.status.value, "objectives": r.objectives, "bound": r.best_bound,
        "answer": hashlib.sha256(repr(answer).encode()).hexdigest()[:12],
        "said": r.stats.get("deterministic"),
    }), flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH, in turn")
    ap.add_argument("--cases", required=True, help="problem:size:method, comma-separated")
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--out", required=True, help="JSON lines appended here")
    a = ap.parse_args()
    trees = [t.split("=", 1) for t in a.tree]
    with open(a.out, "a") as out:
        for case in a.cases.split(","):
            problem, size, method = case.split(":", 2)
            for name, path in trees:  # alternating: old, new for each case
                env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
                args = [sys.executable, "-c", _CHILD, problem, size, method, str(a.limit)]
                # run from the tree itself: ``python -c`` puts the working directory first on
                # sys.path, ahead of PYTHONPATH
                done = subprocess.run(
                    args, env=env, cwd=path, capture_output=True, text=True, timeout=900
                )
                for line in done.stdout.splitlines():
                    if not line.startswith("{"):
                        continue
                    row = {"tree": name, "problem": problem, "size": size, "method": method}
                    row.update(json.loads(line), limit_s=a.limit)
                    print(json.dumps(row), flush=True)
                    out.write(json.dumps(row) + "\n")
                if done.returncode:
                    print(f"{name} {case}: exit {done.returncode}: {done.stderr[-500:]}")


if __name__ == "__main__":
    main()

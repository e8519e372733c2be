"""Wall time of ``deterministic=True`` runs at the papers' scale (#17): one row per (suite
recipe, method), with the limit, the wall time, status, first objective and bound, appended
as JSON lines to ``--out``. A deterministic run trades the wall-clock promise for a fixed
amount of work derived from the limit; this shows how far from the limit that work lands.

    PYTHONPATH=$PWD nice -n 5 python benchmarks/det_wall.py fairshare-paper \
        --recipe 4096gpu-5000j --methods decomp --limit 10 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import os
import time

from common import print_row

import schedopt
from schedopt.bench.suites import all_suites


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--recipe", default=None, help="default: the suite's first recipe")
    ap.add_argument("--methods", default="auto", help="comma-separated")
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per method (same answer?)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    suite = all_suites()[a.suite]
    recipe = next(r for r in suite.recipes if a.recipe in (None, r.name))
    inst = recipe.build()
    for method in a.methods.split(","):
        for run in range(a.repeat):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            r = schedopt.solve(inst, method, time_limit_s=a.limit, deterministic=True)
            wall = time.perf_counter() - t0
            row = {
                "suite": a.suite,
                "recipe": recipe.name,
                "method": method,
                "run": run,
                "limit_s": a.limit,
                "wall_s": round(wall, 2),
                "load1": round(load, 2),
                "status": r.status.value,
                "answered_by": r.method,
                "objectives": r.objectives,
                "bound": r.best_bound,
            }
            print_row(row, a.out)


if __name__ == "__main__":
    main()

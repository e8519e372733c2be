"""Reconfiguration at the papers' scale (#17): the ``reconfig-paper`` suite
(schedopt/bench/suites/reconfig.py), every method in a process of its own, one after another.

    python benchmarks/reconfig_scale.py                    # 10 s, milp:highs, decomp:rate, auto
    python benchmarks/reconfig_scale.py --time-limit 60 --methods milp:highs

Per instance and method: status, L1 (s), the template bound and gap, the physical bound and
gap (formulations/reconfig.md, P1-P6: the proven bound over every valid plan), wall time, and
the machine's load. Rows are appended to benchmarks/results/reconfig_scale.jsonl.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere: use this checkout's schedopt
    sys.path.insert(0, str(ROOT))

from common import append_rows, print_table, solve_recipe  # noqa: E402

from schedopt.bench.suites import all_suites  # noqa: E402


def run_one(case: tuple[str, str, str, float]) -> dict[str, Any]:
    suite_name, recipe_name, method, limit = case
    result, wall, load = solve_recipe(suite_name, recipe_name, method, limit)
    return {
        "instance": recipe_name,
        "method": result.method,
        "status": result.status.value,
        "l1_s": result.objective,
        "bound_s": result.best_bound,
        "gap": result.gap,
        "l1_proven": result.stats.get("first_level_proven"),
        "physical_bound_s": result.metrics.get("physical_bound_s"),
        "physical_gap": result.metrics.get("physical_gap"),
        "gpus_held": None if result.objectives is None else result.objectives[2],
        "wall_s": wall,
        "limit_s": limit,
        "load": load,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--suite", default="reconfig-paper")
    ap.add_argument("--methods", default=None, help="comma-separated; default: the suite's")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    suite = all_suites()[args.suite]
    methods = args.methods.split(",") if args.methods else list(suite.methods)
    limit = args.time_limit or suite.time_limit_s
    rows = []
    for recipe in suite.recipes:
        for method in methods:
            with ProcessPoolExecutor(max_workers=1) as pool:  # a fresh process per row
                rows.append(pool.submit(run_one, (suite.name, recipe.name, method, limit)).result())
    columns = [
        "instance",
        "method",
        "status",
        "l1_s",
        "bound_s",
        "gap",
        "physical_bound_s",
        "physical_gap",
        "wall_s",
        "load",
    ]
    print_table(f"reconfig at scale ({suite.name}, {limit:g} s)", rows, columns)
    if not args.no_save:
        append_rows("reconfig_scale", rows, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue #17: decomposition and ``auto`` against the monolithic model at the papers' scale.

Runs every recipe of a suite (``schedopt/bench/suites``) with every method, each row in a
fresh process (single-threaded solvers, the machine's load recorded beside it), and appends
JSON lines to benchmarks/results/decomp_scale.jsonl. A method may carry its own limit:
``milp:highs@60`` is the MILP with 60 s (the monolithic model's time to its proof).

    python benchmarks/decomp_scale.py --suite admission-paper
    python benchmarks/decomp_scale.py --suite fairshare-paper --methods decomp,auto,milp:highs@60

The summary prints, per recipe, each method's level values, the bound on L1 and the gap, the
per-level bounds a decomposition reports (L2_bound, L3_bound), the wall time, and against the
monolithic row (the suite's last method): the ratio of L1 values and the speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import append_rows, print_table, solve_recipe


def one_row(suite_name: str, recipe_name: str, method: str, limit: float) -> dict:
    result, wall, load_before = solve_recipe(suite_name, recipe_name, method, limit)
    return {
        "suite": suite_name,
        "instance": recipe_name,
        "method": method,
        "label": result.method,
        "time_limit_s": limit,
        "status": result.status.value,
        "objectives": list(result.objectives or []),
        "bound": result.best_bound,
        "gap": result.gap,
        "L2_bound": result.stats.get("L2_bound"),
        "L3_bound": result.stats.get("L3_bound"),
        "wall_s": round(wall, 3),
        "load_1min": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "stats": {k: v for k, v in result.stats.items() if isinstance(v, (int, float, str))},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="admission-paper")
    ap.add_argument("--methods", default=None, help="comma-separated, name or name@seconds")
    ap.add_argument("--instances", default=None, help="comma-separated recipe names")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--row", nargs=4, metavar=("SUITE", "RECIPE", "METHOD", "LIMIT"))
    args = ap.parse_args(argv)
    if args.row:
        s, r, m, lim = args.row
        print(json.dumps(one_row(s, r, m, float(lim))))
        return 0
    from schedopt.bench.suites import all_suites

    suite = all_suites()[args.suite]
    limit = args.time_limit or suite.time_limit_s
    methods = args.methods.split(",") if args.methods else list(suite.methods)
    wanted = set(args.instances.split(",")) if args.instances else None
    rows = []
    for recipe in suite.recipes:
        if wanted is not None and recipe.name not in wanted:
            continue
        for spec in methods:
            name, _, own = spec.partition("@")
            cmd = [sys.executable, __file__, "--row", suite.name, recipe.name, name]
            cmd.append(str(float(own) if own else limit))
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            if done.returncode or not lines:
                row = {"instance": recipe.name, "method": spec, "error": done.stderr[-500:]}
            else:
                row = json.loads(lines[-1])
                row["method"] = spec
            rows.append(row)
            print(json.dumps(row), flush=True)
    _relative(rows, methods[-1])
    append_rows("decomp_scale", rows, argv)
    print_table(
        f"{suite.name} ({limit:g} s unless method@limit)",
        [_flat(r) for r in rows],
        [
            "instance",
            "method",
            "status",
            "L1",
            "bound",
            "gap",
            "L2",
            "L2_bound",
            "L3",
            "wall_s",
            "load_1min",
            "L1_ratio",
            "speedup",
        ],
    )
    return 0


def _relative(rows: list[dict], mono: str) -> None:
    """L1 ratio and speed-up of every row against the monolithic row of its instance."""
    base = {r["instance"]: r for r in rows if r.get("method") == mono and r.get("objectives")}
    for r in rows:
        b = base.get(r["instance"])
        if b is None or not r.get("objectives"):
            continue
        if b["objectives"][0]:
            r["L1_ratio"] = r["objectives"][0] / b["objectives"][0]
        r["speedup"] = b["wall_s"] / r["wall_s"] if r["wall_s"] else None


def _flat(r: dict) -> dict:
    obj = r.get("objectives") or [None, None, None]
    gap = r.get("gap")
    return {
        **r,
        "L1": obj[0],
        "L2": obj[1] if len(obj) > 1 else None,
        "L3": obj[2] if len(obj) > 2 else None,
        "gap": None if gap is None else f"{100 * gap:.2f}%",
    }


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue #17, MoE placement: ``auto`` and ``decomp:layer`` beside the whole model on the same
instances, one fresh process per row, one row at a time.

    python benchmarks/moe_decompose.py                                # moe_placement-paper
    python benchmarks/moe_decompose.py --suite moe_placement-scale    # 16 to 256 GPUs
    python benchmarks/moe_decompose.py --whole-limit 60      # and milp:highs at 60 s

Per row: status, L1 (Σ over layers of the most loaded GPU, µs), the bound every method
reports for the whole instance and the gap against it, build/solve/wall seconds, and the
machine's load average before and after the row. Rows are appended as JSON lines to
benchmarks/results/moe_decompose.jsonl.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table

from schedopt.bench.suite import Recipe
from schedopt.bench.suites import all_suites


@dataclass(frozen=True)
class Case:
    recipe: Recipe
    method: str
    time_limit_s: float


def run(case: Case) -> dict:
    import schedopt
    from schedopt.core.errors import ModelTooLargeError

    inst = case.recipe.build()
    row = {
        "instance": case.recipe.name,
        "gpus": inst.cluster.num_gpus,
        "layers": len(inst.layers),
        "experts": len(inst.layers[0].experts),
        "method": case.method,
        "time_limit_s": case.time_limit_s,
        "load_before": round(os.getloadavg()[0], 2),
    }
    try:
        r = schedopt.solve(inst, case.method, time_limit_s=case.time_limit_s, seed=0)
    except ModelTooLargeError as err:
        return {**row, "status": "refused: too large", "note": str(err)[:80]}
    return {
        **row,
        "ran": r.method,
        "status": r.status.value,
        "layer_time_us": r.objective,
        "bound_us": r.best_bound,
        "gap": r.gap,
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": r.wall_s,
        "start": r.stats.get("start"),
        "load_after": round(os.getloadavg()[0], 2),
    }


def one_process(case: Case) -> dict:
    """``run`` in a fresh process (nothing cached from an earlier row)."""
    with ProcessPoolExecutor(max_workers=1) as pool:
        return pool.submit(run, case).result()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="moe_placement-paper")
    p.add_argument("--methods", default=None, help="comma-separated (default: the suite's)")
    p.add_argument("--time-limit", type=float, default=None, help="default: the suite's")
    p.add_argument(
        "--whole-limit", type=float, default=None, help="also run milp:highs at this limit"
    )
    args = p.parse_args(argv)
    suite = all_suites()[args.suite]
    methods = args.methods.split(",") if args.methods else list(suite.methods)
    limit = args.time_limit or suite.time_limit_s
    cases = [Case(r, m, limit) for r in suite.recipes for m in methods]
    if args.whole_limit:
        cases += [Case(r, "milp:highs", args.whole_limit) for r in suite.recipes]
    rows = []
    for case in cases:
        row = one_process(case)
        rows.append(row)
        print(
            {k: row.get(k) for k in ("instance", "method", "status", "gap", "wall_s")}, flush=True
        )
    columns = [
        "instance",
        "method",
        "ran",
        "time_limit_s",
        "status",
        "layer_time_us",
        "bound_us",
        "gap",
        "build_s",
        "solve_s",
        "wall_s",
        "load_before",
        "load_after",
    ]
    print_table(f"MoE placement, suite {suite.name}", rows, columns)
    append_rows("moe_decompose", rows, argv)


if __name__ == "__main__":
    main()

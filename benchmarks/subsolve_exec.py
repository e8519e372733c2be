"""Sub-solves in this process against 2 worker processes, in one run (#17 items 1 and 6).

    python benchmarks/subsolve_exec.py --time-limit 10 --repeats 2

Issue #17's paper-sized MoE and reconfig instances (OLMoE 64 experts x 32 layers x 64 GPUs,
DeepSeek-V3 on 256 GPUs; Llama-2 70B on 256 and 1,024 GPUs with 16 fail-stop + 16 fail-slow),
each solved by its decomposition (``decomp:layer``; ``decomp:physical``, what ``auto`` runs
there) with ``params={}`` (inline, the default) and ``params={"executor": "process",
"workers": 2}``, alternating (inline first on even repeats, the pool first on odd ones) so
that both see the same load. ``schedopt bench`` passes no method params, hence this script.
Each row: wall time, L1, bound, gap, where the sub-solves ran, how many came back (``parts``:
MoE's layer parts, reconfig's W6 designs), MoE's phases' seconds, and the 1-minute load before
and after. Rows are appended to
benchmarks/results/subsolve_exec.jsonl (unkeyed: the comparison means something only within
one run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere: use this checkout's schedopt
    sys.path.insert(0, str(ROOT))

from common import append_rows, print_table  # noqa: E402

import schedopt  # noqa: E402

POOL = {"executor": "process", "workers": 2}


def instances() -> list[tuple[str, str, Any]]:
    from schedopt.problems import moe_placement, reconfig

    return [
        ("moe olmoe-64gpu", "decomp:layer", moe_placement.generate("large", 0)),
        (
            "moe deepseek-v3-256gpu",
            "decomp:layer",
            moe_placement.generate_custom(shape="deepseek-v3", hosts=32),
        ),
        (
            "reconfig 256gpu-16+16",
            "decomp:physical",
            reconfig.generate_custom(32, 8, "llama2-70b", 512, 16, 16, seed=0),
        ),
        (
            "reconfig 1024gpu-16+16",
            "decomp:physical",
            reconfig.generate_custom(128, 8, "llama2-70b", 1024, 16, 16, seed=0),
        ),
    ]


def row(name: str, method: str, inst: Any, params: dict[str, Any], limit: float) -> dict:
    load0 = os.getloadavg()[0]
    started = time.perf_counter()
    r = schedopt.solve(inst, method, time_limit_s=limit, params=dict(params))
    wall = time.perf_counter() - started
    s = r.stats
    return {
        "instance": name,
        "method": method,
        "executor": f"{s.get('executor', '?')} x{s.get('workers', '?')}",
        "limit_s": limit,
        "wall_s": round(wall, 3),
        "status": r.status.name,
        "L1": None if r.objectives is None else r.objectives[0],
        "bound": r.best_bound,
        "gap": r.gap,
        # the sub-solves that came back: MoE's layer parts, reconfig's W6 designs
        "parts": s.get("parts_solved", s.get("designs_solved")),
        "failed": s.get("parts_failed", s.get("designs_failed")),
        "widened": s.get("widened"),
        "phase_s": s.get("phase_s"),
        "load_before": load0,
        "load_after": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    # a first small solve of each problem imports the solvers before any row is timed
    cases = instances()
    for _, method, inst in cases:
        schedopt.solve(inst, method, time_limit_s=0.5)
    rows = []
    for rep in range(args.repeats):
        for name, method, inst in cases:
            order = [{}, POOL] if rep % 2 == 0 else [POOL, {}]
            for params in order:
                got = row(name, method, inst, params, args.time_limit)
                print(got, flush=True)
                rows.append({**got, "repeat": rep})
    append_rows("subsolve_exec", rows, argv)
    print_table(
        f"decompositions' sub-solves inline vs 2 processes, {args.time_limit:g} s",
        rows,
        ["instance", "executor", "repeat", "wall_s", "L1", "bound", "gap", "parts", "load_before"],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

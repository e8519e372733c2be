"""The time-limit promise at every size: wall − limit for every method of every problem.

    python benchmarks/time_limit.py                      # generator sizes, 10 s limit
    python benchmarks/time_limit.py --big                # plus the largest shapes (see BIG)
    python benchmarks/time_limit.py --big --busy 1       # the same beside one CPU-heavy process
    python benchmarks/time_limit.py --problems admission --limits 1,10 --methods auto

``schedopt.solve`` promises to return within ``time_limit_s + TIME_LIMIT_OVERHEAD_S``; this
script measures ``wall − limit`` for each (problem, shape, method, limit), with the status and
where the time went (model build, solve). ``--busy N`` runs N processes that only burn CPU
during the measurement, so a quiet and a busy run can be compared. The big shapes are the ones
issue reports named: 100,000 admission jobs on 8,192 GPUs (with the time to load its file),
1,024 GPUs × 3,200 contested jobs, fair share on 16,384 GPUs × 20,000 jobs, and MoE placement at
the DeepSeek-V3 shape. Rows go to benchmarks/results/time_limit.jsonl (--out), keyed by problem,
shape, method, limit and --busy, with the machine and versions (schedopt.bench.record): a rerun
of the same command measures only the rows it does not find.

Not a ``schedopt bench`` suite: what it measures is the harness around a solve, not the solve.
Its figure is ``wall − limit`` measured outside ``schedopt.solve``, beside N CPU-burning
processes it starts and stops itself (--busy), with the seconds to load the largest instances
from their files; and it runs every method a problem has, including those a suite leaves out.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, key, print_table, row_log

import schedopt
from schedopt import TIME_LIMIT_OVERHEAD_S
from schedopt.core.registry import get_problem


def _big_shapes() -> dict[str, dict[str, Callable[[], Any]]]:
    from schedopt.problems import admission, fairshare, moe_placement

    return {
        "admission": {
            "contested-1024gpu-3200j": lambda: admission.generate_custom(
                hosts=128, jobs=3200, slots=12, seed=0
            ),
            "8192gpu-100000j": lambda: admission.generate_custom(
                hosts=1024, jobs=100_000, slots=12, seed=0
            ),
        },
        "fairshare": {
            "16384gpu-20000j": lambda: fairshare.generate_custom(
                gpus=16_384, tenants=64, jobs=20_000, seed=0
            ),
        },
        "moe_placement": {
            "deepseek-v3-256gpu": lambda: moe_placement.generate_custom(
                shape="deepseek-v3", hosts=32
            ),
        },
    }


def _burn(stop: Any) -> None:
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x = (x * 31 + i) % 1_000_003


def _shapes(problem: str, big: bool) -> dict[str, Callable[[], Any]]:
    spec = get_problem(problem)
    shapes: dict[str, Callable[[], Any]] = {
        size: (lambda size=size: spec.generate(size, 0)) for size in spec.sizes
    }
    if big:
        shapes.update(_big_shapes().get(problem, {}))
    return shapes


def _load_seconds(instance: Any) -> float:
    """Seconds to load ``instance`` from its JSON file (written to a temporary file, removed)."""
    with tempfile.TemporaryDirectory(prefix="schedopt-bench-") as tmp:
        path = Path(tmp) / "instance.json"
        schedopt.dump(instance, path)
        started = time.perf_counter()
        schedopt.load(path)
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--problems", default="admission,fairshare,moe_placement")
    ap.add_argument("--methods", default="", help="comma-separated (default: every method)")
    ap.add_argument("--limits", default="10", help="comma-separated seconds (10)")
    ap.add_argument("--big", action="store_true", help="add the largest shapes")
    ap.add_argument("--busy", type=int, default=0, help="CPU-burning processes beside (0)")
    ap.add_argument("--skip", default="tiny,small", help="generator sizes left out (tiny,small)")
    add_out_argument(ap, "time_limit")
    args = ap.parse_args(argv)
    log = row_log("time_limit", argv, args.out)
    limits = [float(x) for x in args.limits.split(",")]
    stop = mp.Event()
    burners = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.busy)]
    for p in burners:
        p.start()
    rows: list[dict[str, Any]] = []
    try:
        for problem in args.problems.split(","):
            spec = get_problem(problem)
            methods = args.methods.split(",") if args.methods else ["auto", *spec.methods]
            for shape, make in _shapes(problem, args.big).items():
                if shape in args.skip.split(","):
                    continue
                cases = [
                    (key(problem, shape, method, f"{limit:g}s", f"busy{args.busy}"), method, limit)
                    for limit in limits
                    for method in methods
                ]
                if all(log.get(k) is not None for k, _, _ in cases):
                    rows += [log.row(k, dict) for k, _, _ in cases]
                    continue
                t0 = time.perf_counter()
                instance = make()
                print(f"{problem} {shape}: generated in {time.perf_counter() - t0:.1f} s")
                load_s = _load_seconds(instance) if shape not in spec.sizes else None
                for k, method, limit in cases:
                    measure = partial(_measure, problem, shape, instance, method, limit, load_s)
                    rows.append(
                        log.row(k, lambda measure=measure: {**measure(), "busy": args.busy})
                    )
                    r = rows[-1]
                    print(
                        f"  {method:<24} limit {limit:>5} wall {r['wall_s']:7.2f} "
                        f"over {r['over_s']:+6.2f} {r['status']}",
                        flush=True,
                    )
    finally:
        stop.set()
        for p in burners:
            p.join()
    print_table(
        f"wall − limit (promise: ≤ {TIME_LIMIT_OVERHEAD_S} s; busy processes: {args.busy})",
        rows,
        [
            "problem",
            "shape",
            "method",
            "limit_s",
            "status",
            "wall_s",
            "over_s",
            "build_s",
            "solve_s",
            "load_s",
        ],
    )
    worst = max((r["over_s"] for r in rows), default=0.0)
    print(f"worst wall − limit: {worst:+.2f} s over {len(rows)} solves (cpus: {os.cpu_count()})")
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return 0


def _measure(
    problem: str, shape: str, instance: Any, method: str, limit: float, load_s: float | None
) -> dict[str, Any]:
    started = time.perf_counter()
    row: dict[str, Any] = {"problem": problem, "shape": shape, "method": method, "limit_s": limit}
    try:
        r = schedopt.solve(instance, method, time_limit_s=limit)
        row.update(status=r.status.value, build_s=r.build_s, solve_s=r.solve_s)
    except schedopt.SchedoptError as err:  # e.g. a model refused for its size
        row.update(status=type(err).__name__)
    wall = time.perf_counter() - started
    row.update(wall_s=wall, over_s=wall - limit, load_s=load_s)
    return row


if __name__ == "__main__":
    sys.exit(main())

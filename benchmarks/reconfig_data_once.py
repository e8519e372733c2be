"""CPU that reconfig's ``auto`` spends building its data, and in all, on one instance (#17:
each heuristic, decomp:physical and its hand-over built the same data; once per solve since).

    nice -n 5 python benchmarks/reconfig_data_once.py LABEL [TIME_LIMIT_S]

Solves ``generate_custom(32, 8, 'llama2-70b', 512, 16, 16, seed=0)`` (reconfig-paper's 256-GPU
row) with ``auto`` and appends one JSON line to benchmarks/results/reconfig_data_once.jsonl:
the builds of the data and of the stage data (count, CPU seconds), the solve's CPU and wall
seconds, the answer and the load. Runs against any checkout (it counts the builders wherever
a module holds them)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from common import print_row

import schedopt
from schedopt.problems.reconfig import (
    data,
    decomp,
    exact,
    generate_custom,
    heuristics,
    price_bound,
    stage_bound,
)

OUT = Path(__file__).parent / "results" / "reconfig_data_once.jsonl"


def main() -> None:
    label = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    inst = generate_custom(32, 8, "llama2-70b", 512, 16, 16, seed=0)
    builds: list[float] = []
    stage_builds: list[float] = []

    def timed(built, into):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            cpu = time.thread_time()
            try:
                return built(*args, **kwargs)
            finally:
                into.append(time.thread_time() - cpu)

        return run

    built = data.build_data
    for module in (data, heuristics, decomp, exact):
        if getattr(module, "build_data", None) is built:
            module.build_data = timed(built, builds)  # type: ignore[attr-defined]
    # the stage data (Q1): build_stage_data since they are built once per solve, else each
    # stage_data call (price_bound holds it by name; targets imports it when it runs)
    if hasattr(stage_bound, "build_stage_data"):
        stage_bound.build_stage_data = timed(stage_bound.build_stage_data, stage_builds)
    else:
        counted = timed(stage_bound.stage_data, stage_builds)
        stage_bound.stage_data = price_bound.stage_data = counted  # type: ignore[attr-defined]
    load = os.getloadavg()[0]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = schedopt.solve(inst, "auto", time_limit_s=limit)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    row = {
        "label": label,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "time_limit_s": limit,
        "method": result.method,
        "status": result.status.value,
        "l1_s": None if result.objectives is None else result.objectives[0],
        "gap": result.gap,
        "builds": len(builds),
        "build_cpu_s": round(sum(builds), 3),
        "stage_builds": len(stage_builds),
        "stage_build_cpu_s": round(sum(stage_builds), 3),
        "solve_cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "load_before": load,
        "load_after": os.getloadavg()[0],
    }
    print_row(row, OUT)


if __name__ == "__main__":
    main()

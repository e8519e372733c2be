"""A deterministic run against the same run on a machine emulated slower (#17): one JSON row
per (problem, method), with the quiet run's wall time, its status, objectives and bound, and
whether the emulated run (tests/slower.py: the wall clock and the solvers' own limits, CBC's
``-sec`` too, run ``--factor`` times faster) gave the same answer.

    PYTHONPATH=$PWD nice -n 5 python benchmarks/det_slower.py \
        --cases admission:small,reconfig:small --methods milp:cbc --limit 1 --factor 4
"""

from __future__ import annotations

import argparse
import json
import os
import time

import schedopt
from tests.slower import slower_machine


def _answer(r) -> tuple:
    s = r.solution
    return (r.status, r.objectives, r.best_bound, None if s is None else s.model_dump_json())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", default="admission:small", help="problem:size, comma-separated")
    ap.add_argument("--methods", default="milp:cbc", help="comma-separated")
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--factor", type=float, default=4.0, help="how much slower, emulated")
    a = ap.parse_args()
    for case in a.cases.split(","):
        problem, size = case.split(":")
        inst = schedopt.get_problem(problem).generate(size, 0)
        for method in a.methods.split(","):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            quiet = schedopt.solve(inst, method, time_limit_s=a.limit, deterministic=True)
            wall = time.perf_counter() - t0
            with slower_machine(a.factor):
                busy = schedopt.solve(inst, method, time_limit_s=a.limit, deterministic=True)
            row = {
                "problem": problem,
                "size": size,
                "method": method,
                "limit_s": a.limit,
                "factor": a.factor,
                "wall_s": round(wall, 2),
                "load1": round(load, 2),
                "status": quiet.status.value,
                "objectives": quiet.objectives,
                "bound": quiet.best_bound,
                "same_slower": _answer(quiet) == _answer(busy),
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

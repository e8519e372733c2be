"""Which (problem, method) pairs give the same answer with ``deterministic=True`` on a
machine emulated SLOWER times slower (tests/slower.py) as on this one (#17).

Prints one row per pair: same answer or not, and the two wall times. Run from the worktree:
``PYTHONPATH=$PWD python benchmarks/det_audit.py --problems fairshare --size small``.
"""

from __future__ import annotations

import argparse
import time

import schedopt
from tests.slower import slower_machine


def answer(result) -> tuple:
    s = result.solution
    return (
        result.status,
        result.objectives,
        None if s is None else s.model_dump_json(),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--problems", nargs="*", default=list(schedopt.problem_names()))
    ap.add_argument("--methods", nargs="*", default=None, help="default: every method and auto")
    ap.add_argument("--size", default="small")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--slower", type=float, default=20.0)
    a = ap.parse_args()
    for problem in a.problems:
        spec = schedopt.get_problem(problem)
        inst = spec.generate(a.size, a.seed)
        for method in a.methods or [*spec.methods, "auto"]:
            if method != "auto" and method not in spec.methods:
                continue
            t0 = time.perf_counter()
            quiet = schedopt.solve(inst, method, time_limit_s=a.limit, deterministic=True)
            t1 = time.perf_counter()
            with slower_machine(a.slower):
                busy = schedopt.solve(inst, method, time_limit_s=a.limit, deterministic=True)
            t2 = time.perf_counter()
            same = answer(quiet) == answer(busy)
            print(
                f"{problem:14s} {method:24s} {'same' if same else 'DIFFERS':8s} "
                f"{quiet.status.value:12s} {t1 - t0:6.2f}s {t2 - t1:6.2f}s "
                f"{quiet.objectives} {busy.objectives if not same else ''}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Deadline-admission benchmark: every method on generated instances of 64 to 1,024 GPUs.

    python benchmarks/admission.py                 # the full suite (about 10 minutes)
    python benchmarks/admission.py --quick         # one seed of the two smaller shapes
    python benchmarks/admission.py --contended     # ~3 jobs per GPU: admission is contested
    python benchmarks/admission.py --methods auto,heuristic:edf --time-limit 5

For each instance and method it reports the guaranteed deadline value (L1) and best-effort
progress (L2), the proven bound on L1 and the gap, how many SLO jobs were admitted, and model
build, solve and wall seconds. Rows are appended as JSON lines to
benchmarks/results/admission.jsonl; a summary goes into benchmarks/RESULTS.md by hand, with
the command that produced it.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table, run_cases

import schedopt
from schedopt.problems.admission import generate_custom

#: (hosts of 8 GPUs, jobs, slots): 64, 256 and 1,024 GPUs.
SHAPES = ((8, 50, 12), (32, 250, 12), (128, 1000, 12))
#: The same GPUs with about four times the jobs: SLO demand near capacity, so admission is
#: contested and the exact models' advantage over the greedy heuristics shows.
CONTENDED = ((8, 200, 12), (32, 800, 12), (128, 3200, 12))
METHODS = ("heuristic:edf", "heuristic:slack", "cpsat", "milp:highs", "milp:cbc", "auto")


@dataclass(frozen=True)
class Case:
    hosts: int
    jobs: int
    slots: int
    seed: int
    method: str
    time_limit_s: float


def run(case: Case) -> dict:
    inst = generate_custom(hosts=case.hosts, jobs=case.jobs, slots=case.slots, seed=case.seed)
    r = schedopt.solve(inst, case.method, time_limit_s=case.time_limit_s, seed=0)
    return {
        "instance": f"{case.hosts * 8}gpu-{case.jobs}j-s{case.seed}",
        "gpus": case.hosts * 8,
        "jobs": case.jobs,
        "slots": case.slots,
        "seed": case.seed,
        "method": r.method,
        "status": r.status.value,
        "value": None if r.objectives is None else r.objectives[0],
        "be_progress": None if r.objectives is None else r.objectives[1],
        "changes": None if r.objectives is None else r.objectives[2],
        "bound": r.best_bound,
        "gap": r.gap,
        "admitted": r.metrics.get("slo_admitted"),
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": r.wall_s,
        "time_limit_s": case.time_limit_s,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="one seed, the two smaller shapes")
    ap.add_argument(
        "--contended", action="store_true", help="about 3 jobs per GPU instead of 1 per GPU"
    )
    ap.add_argument("--seeds", type=int, default=2, help="seeds per shape (2)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve (10)")
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="parallel solves (1; timings are only comparable at 1)",
    )
    args = ap.parse_args(argv)
    shapes = CONTENDED if args.contended else SHAPES
    shapes = shapes[:2] if args.quick else shapes
    seeds = range(1 if args.quick else args.seeds)
    cases = [
        Case(h, j, s, seed, m, args.time_limit)
        for h, j, s in shapes
        for seed in seeds
        for m in args.methods.split(",")
    ]
    rows = []
    for row in run_cases(run, cases, args.workers):
        rows.append(row)
        print(
            f"  {row['instance']:<18} {row['method']:<28} {row['status']:<9} "
            f"value {row['value']}  gap {row['gap']}  wall {row['wall_s']:.2f} s",
            flush=True,
        )
    print_table(
        "deadline admission",
        rows,
        [
            "instance",
            "method",
            "status",
            "value",
            "bound",
            "gap",
            "be_progress",
            "admitted",
            "build_s",
            "solve_s",
            "wall_s",
        ],
    )
    path = append_rows("admission", rows, argv)
    print(f"appended {len(rows)} rows to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fair-share benchmark: every method on generated rounds of 64 to 4,096 GPUs (H100/A100/V100).

    python benchmarks/fairshare.py                  # the full suite (about 15 minutes)
    python benchmarks/fairshare.py --quick          # one seed, 64 to 1,024 GPUs (about 3 minutes)
    python benchmarks/fairshare.py --methods auto,heuristic:astraea --time-limit 5
    python benchmarks/fairshare.py --quick --gavel ../shared/data/gavel/simulation_throughputs.json

For each instance and method it reports the minimum tenant LTGF after the round (L1), the proven
bound on it and the gap, the Jain index and max/min ratio of the tenants' shares, the normalised
effective throughput (L2), restart + fragmentation cost (L3), preemptions, the Gavel LP's
minimum share when the method reports it (gavel-round), and model build, solve and wall
seconds. Rows are appended as JSON lines to benchmarks/results/fairshare.jsonl; a summary goes into
benchmarks/RESULTS.md by hand, with the command that produced it.

``--gavel PATH`` replaces the generated throughputs by Gavel's measured ones (OSDI'20 artifact,
``simulation_throughputs.json``, read through ``schedopt.io.traces.gavel``): the cluster becomes
K80/P100/V100 pools (1:2:1 by hosts) and every job a random Gavel job type at its own scale
factor, with nothing running before the round.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table, run_cases

import schedopt
from schedopt.bench.traces import gavel_throughputs
from schedopt.problems.fairshare import FairshareInstance, generate_custom

#: (GPUs, tenants, jobs): the issue's range, 64 to 4,096 GPUs, 10 to 100 tenants, 100 to 5,000 jobs.
SHAPES = ((64, 10, 100), (256, 20, 300), (1024, 50, 1000), (4096, 100, 5000))
METHODS = (
    "heuristic:astraea",
    "heuristic:gavel-round",
    "cpsat",
    "milp:highs",
    "milp:cbc",
    "auto",
)


@dataclass(frozen=True)
class Case:
    gpus: int
    tenants: int
    jobs: int
    seed: int
    method: str
    time_limit_s: float
    gavel: str | None = None


def gavel_instance(case: Case) -> FairshareInstance:
    """The generated round with Gavel's measured throughputs on a K80/P100/V100 cluster (the
    recipe builder of the suite fairshare-medium's Gavel row)."""
    assert case.gavel is not None
    return gavel_throughputs(
        Path(case.gavel), gpus=case.gpus, tenants=case.tenants, jobs=case.jobs, seed=case.seed
    )


def run(case: Case) -> dict:
    if case.gavel:
        inst = gavel_instance(case)
    else:
        inst = generate_custom(gpus=case.gpus, tenants=case.tenants, jobs=case.jobs, seed=case.seed)
    r = schedopt.solve(inst, case.method, time_limit_s=case.time_limit_s, seed=0)
    obj = r.objectives
    return {
        "instance": f"{case.gpus}gpu-{case.tenants}t-{case.jobs}j-s{case.seed}"
        + ("-gavel" if case.gavel else ""),
        "gpus": case.gpus,
        "tenants": case.tenants,
        "jobs": case.jobs,
        "seed": case.seed,
        "method": r.method,
        "status": r.status.value,
        "min_share": None if obj is None else obj[0],
        "bound": r.best_bound,
        "gap": r.gap,
        "jain": r.metrics.get("jain_index"),
        "max_min": r.metrics.get("max_min_share_ratio"),
        "throughput": None if obj is None else obj[1],
        "cost_s": None if obj is None else obj[2],
        "preemptions": r.metrics.get("preemptions"),
        "gavel_lp": r.metrics.get("gavel_lp_min_share"),  # heuristic:gavel-round only
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": r.wall_s,
        "time_limit_s": case.time_limit_s,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="one seed, the three smaller shapes")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per shape (2)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve (10)")
    ap.add_argument(
        "--workers", type=int, default=1, help="parallel solves (1; timings comparable only at 1)"
    )
    ap.add_argument("--gavel", default=None, help="Gavel simulation_throughputs.json to use")
    args = ap.parse_args(argv)
    shapes = SHAPES[:3] if args.quick else SHAPES
    seeds = range(1 if args.quick else args.seeds)
    cases = [
        Case(g, t, j, seed, m, args.time_limit, args.gavel)
        for g, t, j in shapes
        for seed in seeds
        for m in args.methods.split(",")
    ]
    rows = []
    for row in run_cases(run, cases, args.workers):
        rows.append(row)
        print(
            f"  {row['instance']:<24} {row['method']:<34} {row['status']:<9} "
            f"min share {row['min_share']}  gap {row['gap']}  wall {row['wall_s']:.2f} s",
            flush=True,
        )
    print_table(
        "fair share",
        rows,
        [
            "instance",
            "method",
            "status",
            "min_share",
            "bound",
            "gap",
            "jain",
            "max_min",
            "throughput",
            "preemptions",
            "gavel_lp",
            "build_s",
            "solve_s",
            "wall_s",
        ],
    )
    path = append_rows("fairshare", rows, argv)
    print(f"appended {len(rows)} rows to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

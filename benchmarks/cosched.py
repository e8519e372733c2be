"""Co-scheduling benchmark: RollMux's two baselines, the packing heuristic and ``auto`` from 64
to 4,096 GPUs, and a round-by-round replay in which jobs arrive and finish.

    python benchmarks/cosched.py                 # all shapes, one seed (about 3 minutes)
    python benchmarks/cosched.py --quick         # 64 and 656 GPUs
    python benchmarks/cosched.py --replay-only   # only the replay (about 1 minute)
    python benchmarks/cosched.py --decomp        # issue #17: colgen beside packing and auto

Part 1, per instance and method: the hourly cost of the hosts held (L1), cost efficiency
against both baselines (the baseline's $/h over this plan's for the same jobs at 100% SLO
attainment; the baselines are sized on as many hosts as they need), SLO attainment of the plan
replayed with held-out rollout samples (16 per option, at most 800 job-sample pairs: 4 samples
at 200 jobs; a simulation metric), the gap to the best
bound, and model build / solve / wall seconds. Instances come from
``schedopt.problems.cosched.generate_custom`` (RollPacker's job shapes with GPU counts divided
by 4, RollMux's prices; 656 GPUs = RollMux's 328 H20 + 328 H800 testbed).

Part 2, the scenario model: on 64 and 656 GPUs, packing and auto planning at p90 against the
same jobs with the chance constraint (each timetable holds in 7 of 8 sampled scenarios), and
their held-out SLO attainment.

Part 3, the replay: on 656 GPUs, 8 rounds; each round two jobs finish and three arrive (up to
40); every round is re-planned by ``auto`` with the previous round's pools as each continuing
phase's current pool (L3 penalises moving their state). Per round: jobs, cost, SLO attainment
on held-out samples, GB moved. Rows are appended to benchmarks/results/cosched.jsonl.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import append_rows, print_table, run_cases

import schedopt
from schedopt.problems.cosched import CoschedInstance, generate_custom
from schedopt.problems.cosched.policy import Episode, replay_rounds

#: (name, H20 hosts, H800 hosts, CPU hosts, jobs, model sizes, time limit s)
SHAPES = (
    ("64gpu-8j", 4, 4, 8, 8, (0,), 10.0),
    ("656gpu-40j", 41, 41, 40, 40, (0, 1), 10.0),
    ("4096gpu-200j", 256, 256, 200, 200, (0, 1), 60.0),
)
METHODS = ("heuristic:disaggregated", "heuristic:colocated", "heuristic:packing", "auto")


#: The scenario model's (ε, S) in part 3 (C13: each timetable holds in 7 of 8 scenarios).
CHANCE = (0.125, 8)


@dataclass(frozen=True)
class Case:
    shape: str
    method: str
    seed: int
    time_limit_s: float
    chance: tuple[float, int] | None = None


def _instance(shape: str, seed: int, chance: tuple[float, int] | None = None) -> CoschedInstance:
    name, h20, h800, cpu, jobs, models, _ = next(s for s in SHAPES if s[0] == shape)
    return generate_custom(
        h20, h800, cpu, jobs, seed, models, scale=4, name=f"{name}-s{seed}", chance=chance
    )


def run(case: Case) -> dict:
    inst = _instance(case.shape, case.seed, case.chance)
    started = time.perf_counter()
    r = schedopt.solve(inst, case.method, time_limit_s=case.time_limit_s)
    wall = time.perf_counter() - started
    m = r.metrics
    return {
        "instance": f"{case.shape}-s{case.seed}",
        "method": case.method,
        "plan": "p90" if case.chance is None else f"chance eps={case.chance[0]} S={case.chance[1]}",
        "solved_by": r.method,
        "status": r.status.value,
        "cost_per_hour": None if r.objectives is None else r.objectives[0],
        "bound": r.best_bound,
        "gap": r.gap,
        "vs_disagg": m.get("cost_efficiency_vs_disaggregated"),
        "vs_coloc": m.get("cost_efficiency_vs_colocated"),
        "slo_holdout": m.get("slo_attainment_holdout"),
        "groups": m.get("groups"),
        "build_s": r.build_s,
        "solve_s": r.solve_s,
        "wall_s": wall,
        "time_limit_s": case.time_limit_s,
        "load_1min": os.getloadavg()[0],
        "explanation": r.explanation,
    }


def replay_rows(time_limit_s: float, seed: int) -> list[dict]:
    episode = Episode(
        f"replay-s{seed}",
        seed,
        rounds=8,
        start_jobs=30,
        max_jobs=40,
        pool_jobs=64,
        time_limit_s=time_limit_s,
    )
    rows = []
    for r in replay_rounds(episode, "auto"):
        objectives, metrics = r["objectives"], r["metrics"]
        rows.append(
            {
                "instance": episode.name,
                "round": r["round"],
                "jobs": r["jobs"],
                "status": r["status"],
                "solved_by": r["solved_by"],
                "cost_per_hour": None if objectives is None else objectives[0],
                "moved_gb": None if objectives is None else objectives[2],
                "vs_disagg": metrics.get("cost_efficiency_vs_disaggregated"),
                "slo_holdout": metrics.get("slo_attainment_holdout"),
                "wall_s": r["wall_s"],
            }
        )
    return rows


def decomp(seeds: int, argv: list[str] | None) -> int:
    """Issue #17's rows, one after another, with the load beside every row."""
    cases = [
        Case(s[0], m, seed, s[6])
        for s in SHAPES[1:]
        for seed in range(seeds)
        for m in ("heuristic:packing", "colgen", "auto")
    ]
    rows = list(run_cases(run, cases, 1))
    print_table(
        "cosched #17: groups as columns (colgen) beside packing and auto",
        rows,
        [
            *("instance", "method", "solved_by", "status", "cost_per_hour", "bound", "gap"),
            *("vs_disagg", "slo_holdout", "wall_s", "time_limit_s", "load_1min"),
        ],
    )
    path = append_rows("cosched", rows, argv)
    print(f"rows appended to {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="64 and 656 GPUs only")
    ap.add_argument("--seeds", type=int, default=1, help="seeds per shape (1)")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    ap.add_argument("--workers", type=int, default=1, help="parallel solves (1)")
    ap.add_argument("--replay-only", action="store_true", help="only the round-by-round replay")
    ap.add_argument("--replay-limit", type=float, default=5.0, help="seconds per round (5)")
    ap.add_argument(
        "--decomp",
        action="store_true",
        help="issue #17: packing (today's answer), colgen and auto on 656 and 4,096 GPUs",
    )
    args = ap.parse_args(argv)
    if args.decomp:
        return decomp(args.seeds, argv)
    shapes = SHAPES[:2] if args.quick else SHAPES
    rows: list[dict] = []
    if not args.replay_only:
        cases = [
            Case(s[0], m, seed, s[6])
            for s in shapes
            for seed in range(args.seeds)
            for m in args.methods.split(",")
        ]
        rows = list(run_cases(run, cases, args.workers))
        print_table(
            "cosched: cost, efficiency vs RollMux's baselines, held-out SLO attainment",
            rows,
            [
                "instance",
                "method",
                "status",
                "cost_per_hour",
                "gap",
                "vs_disagg",
                "vs_coloc",
                "slo_holdout",
                "groups",
                "build_s",
                "solve_s",
                "wall_s",
            ],
        )
        scenario_cases = [
            Case(s[0], m, seed, s[6], chance)
            for s in shapes[:2]
            for seed in range(args.seeds)
            for m in ("heuristic:packing", "auto")
            for chance in (None, CHANCE)
        ]
        scenario = list(run_cases(run, scenario_cases, args.workers))
        print_table(
            "cosched: planning at p90 against the scenario model (C13), held-out attainment",
            scenario,
            [
                "instance",
                "method",
                "plan",
                "status",
                "cost_per_hour",
                "slo_holdout",
                "groups",
                "wall_s",
            ],
        )
        rows += scenario
    replay = replay_rows(args.replay_limit, 0)
    print_table(
        "cosched replay: jobs arrive and finish, re-planned with moves penalised",
        replay,
        [
            "instance",
            "round",
            "jobs",
            "status",
            "cost_per_hour",
            "moved_gb",
            "vs_disagg",
            "slo_holdout",
            "wall_s",
        ],
    )
    path = append_rows("cosched", [*rows, *replay], argv)
    print(f"rows appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

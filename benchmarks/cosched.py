"""Co-scheduling benchmark: RollMux's two baselines, the packing heuristic and ``auto`` from 64
to 4,096 GPUs, the scenario model, issue #17's groups as columns, and a round-by-round replay
in which jobs arrive and finish.

    python benchmarks/cosched.py                 # parts 1-3 (about 5 minutes on 2 cores)
    python benchmarks/cosched.py --quick         # 64 and 656 GPUs, then the replay
    python benchmarks/cosched.py --replay-only   # only the replay (about 1 minute)
    python benchmarks/cosched.py --decomp        # issue #17: colgen beside packing and auto

Parts 1, 2 and the --decomp table are ``schedopt bench`` suites (schedopt/bench/suites/
cosched.py), run one process per row with rows in benchmarks/results/bench/<suites>.jsonl (a
rerun resumes); a row's ``metrics`` hold what the tables show besides the cost (L1), bound
and gap: cost efficiency against both baselines (``cost_efficiency_vs_disaggregated``,
``..._vs_colocated``: the baseline's $/h over this plan's for the same jobs at 100% SLO
attainment, the baselines sized on as many hosts as they need), SLO attainment of the plan
replayed on held-out rollout samples (``slo_attainment_holdout``; 16 per option, at most 800
job-sample pairs) and the groups formed. Instances: ``generate_custom`` (RollPacker's job
shapes with GPU counts divided by 4, RollMux's prices; 656 GPUs = RollMux's 328 H20 + 328 H800
testbed).

- Part 1: ``schedopt bench cosched-scaling cosched-scaling-60s`` (64 and 656 GPUs at 10 s;
  4,096 GPUs at 60 s).
- Part 2, the scenario model: ``schedopt bench cosched-chance``: on 64 and 656 GPUs, packing
  and ``auto`` planning at p90 against the same jobs with the chance constraint (each
  timetable holds in 7 of 8 sampled scenarios).
- --decomp: ``schedopt bench cosched-paper cosched-paper-60s`` (packing, colgen, auto).

Part 3, the replay, is measured here, not by a suite: it is a sequence of rounds, each
instance made from the previous round's answer (on 656 GPUs, 8 rounds; each round two jobs
finish and three arrive, up to 40; every round is re-planned by ``auto`` with the previous
round's pools as each continuing phase's current pool, L3 penalising moving their state).
Per round: jobs, cost, SLO attainment on held-out samples, GB moved. Its rows go to
benchmarks/results/cosched.jsonl (keyed: a rerun of the same replay reads them back).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import add_out_argument, bench, key, print_table, row_log

from schedopt.problems.cosched.policy import Episode, replay_rounds


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


def replay(time_limit_s: float, seed: int, argv: list[str] | None, out: Path | None) -> None:
    log = row_log("cosched", argv, out)
    rows = log.rows(
        key("replay", f"s{seed}", f"{time_limit_s:g}s"), lambda: replay_rows(time_limit_s, seed)
    )
    print_table(
        "cosched replay: jobs arrive and finish, re-planned with moves penalised",
        rows,
        [
            *("instance", "round", "jobs", "status", "cost_per_hour", "moved_gb"),
            *("vs_disagg", "slo_holdout", "wall_s"),
        ],
    )
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="64 and 656 GPUs only")
    ap.add_argument("--methods", default=None, help="comma-separated methods (the suites')")
    ap.add_argument("--replay-only", action="store_true", help="only the round-by-round replay")
    ap.add_argument("--replay-limit", type=float, default=5.0, help="seconds per round (5)")
    ap.add_argument("--replay-seed", type=int, default=0, help="the replay's seed (0)")
    ap.add_argument(
        "--decomp",
        action="store_true",
        help="issue #17: packing (today's answer), colgen and auto on 656 and 4,096 GPUs",
    )
    add_out_argument(ap, "cosched")
    args = ap.parse_args(argv)
    extra = ["--methods", args.methods] if args.methods else []
    if args.decomp:
        return bench(["cosched-paper", "cosched-paper-60s"], extra)
    code = 0
    if not args.replay_only:
        scaling = ["cosched-scaling"] if args.quick else ["cosched-scaling", "cosched-scaling-60s"]
        code = max(bench(scaling, extra), bench("cosched-chance", extra))
    replay(args.replay_limit, args.replay_seed, argv, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())

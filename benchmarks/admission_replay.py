"""Replay a real job trace round by round and report deadline misses and best-effort JCT.

    python benchmarks/admission_replay.py --trace philly-mix2 --jobs 150
    python benchmarks/admission_replay.py --trace elasticflow --methods heuristic:edf,auto

The trace is read from ../shared/data (see its README): the Chronus/Philly MIX2 trace (strict,
soft-tiered and best-effort jobs) or the ElasticFlow ITP cluster01 trace (strict deadlines
attached as λ·duration, λ ~ U(0.75, 2.25), seed 0). The jobs with the earliest submission times
are kept, their times shifted so the first arrives at 0, and replayed on a cluster of --hosts
8-GPU hosts with the lease-round driver (schedopt.problems.admission.driver). Each round solves
one admission instance with --time-limit seconds. The script prints one row per method and
appends JSON lines to benchmarks/results/admission_replay.jsonl.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from common import append_rows, print_table

from schedopt.io.traces import load_elasticflow, load_philly_chronus
from schedopt.problems.admission.driver import DriverConfig, replay
from schedopt.topology import Cluster

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRACES = {
    "philly-mix2": lambda: load_philly_chronus(
        DATA / "philly-chronus" / "trace_job_Philly_MIX2.csv"
    ),
    "elasticflow": lambda: load_elasticflow(DATA / "elasticflow-itp" / "cluster01.csv", seed=0),
}


def window(trace: str, n: int):
    jobs = sorted(TRACES[trace]().jobs, key=lambda j: (j.submit_s, j.id))[:n]
    t0 = jobs[0].submit_s
    return [dataclasses.replace(j, submit_s=j.submit_s - t0) for j in jobs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trace", choices=sorted(TRACES), default="philly-mix2")
    ap.add_argument("--jobs", type=int, default=150, help="earliest jobs to replay (150)")
    ap.add_argument("--hosts", type=int, default=4, help="8-GPU hosts (4)")
    ap.add_argument("--slot", type=float, default=300.0, help="slot length in seconds (300)")
    ap.add_argument("--horizon", type=int, default=24, help="slots per decision (24)")
    ap.add_argument("--methods", default="heuristic:edf,auto")
    ap.add_argument("--time-limit", type=float, default=2.0, help="seconds per round (2)")
    ap.add_argument("--max-rounds", type=int, default=400)
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"no trace data at {DATA}; nothing to replay", file=sys.stderr)
        return 1
    jobs = window(args.trace, args.jobs)
    cluster = Cluster.dgx(nodes=args.hosts, gpus_per_node=8)
    rows = []
    for method in args.methods.split(","):
        cfg = DriverConfig(
            slot_s=args.slot,
            horizon_slots=args.horizon,
            method=method,
            time_limit_s=args.time_limit,
        )
        started = time.perf_counter()

        def progress(r, method=method):
            if r.round % 20 == 0:
                print(
                    f"  {method}: round {r.round} t={r.time_s:.0f}s running {r.running} "
                    f"admitted {r.admitted} rejected {r.rejected} [{r.status}]",
                    flush=True,
                )

        rep = replay(cluster, jobs, cfg, max_rounds=args.max_rounds, progress=progress)
        fallbacks = sum(1 for r in rep.rounds if "->" in r.status)
        rows.append(
            {
                "trace": args.trace,
                "jobs": len(jobs),
                "gpus": cluster.num_gpus,
                "method": method,
                "rounds": len(rep.rounds),
                "slo_jobs": rep.slo_jobs,
                "admitted": rep.slo_admitted,
                "met": rep.slo_met,
                "missed": rep.slo_missed,
                "rejected": rep.rejected,
                "miss_rate": rep.deadline_miss_rate,
                "be_jobs": rep.be_jobs,
                "be_finished": rep.be_finished,
                "be_mean_jct_s": rep.be_mean_jct_s,
                "unfinished": rep.unfinished,
                "fallback_rounds": fallbacks,
                "solve_s": sum(r.solve_s for r in rep.rounds),
                "wall_s": time.perf_counter() - started,
            }
        )
    print_table(
        f"replay {args.trace}, {len(jobs)} jobs on {cluster.num_gpus} GPUs",
        rows,
        [
            "method",
            "rounds",
            "slo_jobs",
            "admitted",
            "met",
            "missed",
            "rejected",
            "miss_rate",
            "be_finished",
            "be_mean_jct_s",
            "unfinished",
            "fallback_rounds",
            "solve_s",
            "wall_s",
        ],
    )
    print(f"appended to {append_rows('admission_replay', rows, argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

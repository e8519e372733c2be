"""Replay a real job trace round by round and report deadline outcomes and best-effort JCT.

    python benchmarks/admission_replay.py --trace philly-mix2 --jobs 150
    python benchmarks/admission_replay.py --trace philly-mix2 --start 5000 --jobs 121 \
        --methods heuristic:edf,cpsat,auto --time-limit 1
    python benchmarks/admission_replay.py --trace elasticflow --methods heuristic:edf,auto

The trace is read from ../shared/data (see its README): the Chronus/Philly MIX2 trace (strict,
soft-tiered and best-effort jobs) or the ElasticFlow ITP cluster01 trace (strict deadlines
attached as λ·duration, λ ~ U(0.75, 2.25), seed 0). The jobs sorted by submission time are
taken from position --start on (--jobs of them), their times shifted so the first arrives at 0,
and replayed on a cluster of --hosts 8-GPU hosts with the lease-round driver
(schedopt.problems.admission.driver). Each round solves one admission instance with
--time-limit seconds (--deterministic: CP-SAT's deterministic time and fixed heuristic work
instead, so a rerun gives the same report).

Each admitted SLO job is counted once: met, late (kept but not done by its deadline) or dropped
(guarantee given up, with the reason), recounted by schedopt.problems.admission.replay_check from
the trace's own numbers and the executed allocations, independently of the driver's bookkeeping.
The script prints one row per method; its rows go to benchmarks/results/admission_replay.jsonl
(--out), keyed by trace, window, cluster, slot, horizon, method, limit and mode, with the
machine and versions (schedopt.bench.record): a rerun of the same command reads the rows it
finds instead of replaying again.

Not a ``schedopt bench`` suite: a replay is a sequence of rounds, each round's instance made
from the decisions of the rounds before it (the jobs admitted, running and done), so there is
no fixed instance to give a recipe and a checksum; its figures (met / late / dropped deadlines,
best-effort JCT) are the replay's, not one solve's. The first round of such a window is a suite
(``admission-trace``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from common import add_out_argument, key, print_table, row_log

from schedopt.io.traces import load_elasticflow, load_philly_chronus
from schedopt.problems.admission.driver import DriverConfig, replay
from schedopt.problems.admission.replay_check import check_replay
from schedopt.topology import Cluster

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRACES = {
    "philly-mix2": lambda data: load_philly_chronus(
        data / "philly-chronus" / "trace_job_Philly_MIX2.csv"
    ),
    "elasticflow": lambda data: load_elasticflow(
        data / "elasticflow-itp" / "cluster01.csv", seed=0
    ),
}


def window(trace: str, start: int, n: int, data: Path = DATA):
    jobs = sorted(TRACES[trace](data).jobs, key=lambda j: (j.submit_s, j.id))[start : start + n]
    t0 = jobs[0].submit_s
    return [dataclasses.replace(j, submit_s=j.submit_s - t0) for j in jobs]


def measure(args: argparse.Namespace, jobs: list, cluster: Cluster, method: str) -> dict:
    """Replay the window with ``method``: one row."""
    cfg = DriverConfig(
        slot_s=args.slot,
        horizon_slots=args.horizon,
        method=method,
        time_limit_s=args.time_limit,
        deterministic=args.deterministic,
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
    check = check_replay(jobs, rep, slot_s=cfg.slot_s, exponent=cfg.scaling_exponent)
    fallbacks = sum(1 for r in rep.rounds if "->" in r.status)
    for job_id, why in sorted(check.dropped_why.items()):
        print(f"  {method}: guarantee of {job_id} dropped: {why}")
    return {
        "trace": args.trace,
        "jobs": len(jobs),
        "gpus": cluster.num_gpus,
        "method": method,
        "rounds": len(rep.rounds),
        "slo_jobs": rep.slo_jobs,
        "admitted": check.admitted,
        "met": check.met,
        "late": check.late,
        "dropped": check.dropped,
        "pending": check.pending,
        "late_ids": list(check.late_ids),
        "dropped_why": check.dropped_why,
        "driver_met_late_dropped": [rep.slo_met, rep.slo_late, rep.slo_dropped],
        "rejected": rep.rejected,
        "miss_rate": rep.deadline_miss_rate,
        "be_jobs": rep.be_jobs,
        "be_finished": rep.be_finished,
        "be_mean_jct_s": rep.be_mean_jct_s,
        "unfinished": rep.unfinished,
        "fallback_rounds": fallbacks,
        "previous_plan_rounds": sum(1 for r in rep.rounds if "previous plan" in r.status),
        "start": args.start,
        "time_limit_s": args.time_limit,
        "deterministic": args.deterministic,
        "solve_s": sum(r.solve_s for r in rep.rounds),
        "wall_s": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trace", choices=sorted(TRACES), default="philly-mix2")
    ap.add_argument("--start", type=int, default=0, help="first job, by submit time (0)")
    ap.add_argument("--jobs", type=int, default=150, help="jobs to replay (150)")
    ap.add_argument("--hosts", type=int, default=4, help="8-GPU hosts (4)")
    ap.add_argument("--slot", type=float, default=300.0, help="slot length in seconds (300)")
    ap.add_argument("--horizon", type=int, default=24, help="slots per decision (24)")
    ap.add_argument("--methods", default="heuristic:edf,auto")
    ap.add_argument("--time-limit", type=float, default=2.0, help="seconds per round (2)")
    ap.add_argument("--max-rounds", type=int, default=400)
    ap.add_argument("--deterministic", action="store_true", help="reproducible solves")
    ap.add_argument("--data", type=Path, default=DATA, help=f"trace folder ({DATA})")
    add_out_argument(ap, "admission_replay")
    args = ap.parse_args(argv)
    if not args.data.exists():
        print(f"no trace data at {args.data}; nothing to replay", file=sys.stderr)
        return 1
    jobs = window(args.trace, args.start, args.jobs, args.data)
    cluster = Cluster.dgx(nodes=args.hosts, gpus_per_node=8)
    log = row_log("admission_replay", argv, args.out)
    rows = []
    for method in args.methods.split(","):
        k = key(
            args.trace,
            args.start,
            len(jobs),
            cluster.num_gpus,
            args.slot,
            args.horizon,
            method,
            args.time_limit,
            args.max_rounds,
            args.deterministic,
        )
        rows.append(log.row(k, lambda method=method: measure(args, jobs, cluster, method)))
    print_table(
        f"replay {args.trace}, jobs {args.start}..{args.start + len(jobs) - 1} "
        f"on {cluster.num_gpus} GPUs, {args.time_limit:g} s per round",
        rows,
        [
            "method",
            "rounds",
            "slo_jobs",
            "admitted",
            "met",
            "late",
            "dropped",
            "pending",
            "rejected",
            "miss_rate",
            "be_finished",
            "be_mean_jct_s",
            "unfinished",
            "fallback_rounds",
            "previous_plan_rounds",
            "solve_s",
            "wall_s",
        ],
    )
    print(f"rows in {log.path} ({log.measured} measured, {log.resumed} read back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""schedopt against Gavel's own policies (cvxpy + ECOS) on the same inputs, in one run.

Each request is made the way Gavel's policy-runtime benchmark makes it
(``gavel_inputs.make_request``: Gavel's measured throughputs, its job generator and seeds;
N/4 GPUs of each type, at least ``--min-gpus``; ``--elapsed S``: each job's time since start
drawn from [0, S], so that finish-time fairness weighs past waiting); then, alternating run
by run on the same machine, schedopt's drop-in (``schedopt.integrations.gavel``, a fresh
policy object per run: a cold solve, dict conversion and validation included) and Gavel's
own class (``gavel_reference.py``, a child process per run) each allocate it ``--repeat``
times. Reported: the median
``get_allocation`` seconds of each, their ratio, and each one's objective in Gavel's own terms
(max-min: the minimum normalised throughput; finish-time fairness: the largest ratio; makespan:
seconds), with the relative difference. For packing, ``schedopt_table_s`` is also given:
``schedopt.solve`` on the round the adapter built (a co-location table by job type), what a
caller pays who hands schedopt the table instead of Gavel's dict of every pair.

    git -C MIRROR archive HEAD scheduler ':(exclude)scheduler/traces' | tar -x -C /tmp/gavel
    python benchmarks/timeshare_vs_gavel.py --gavel-python /work/venvs/gavel-ref/bin/python \
        --gavel-dir /tmp/gavel --repeat 3

(see gavel_reference.py for the venv). Without ``--gavel-python`` only schedopt runs.
Prints a table and appends JSON lines to ``benchmarks/results/timeshare_vs_gavel.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import append_rows, print_table
from gavel_inputs import DEFAULT_THROUGHPUTS, WORKER_TYPES, load_throughputs, make_request

import schedopt
from schedopt.integrations import gavel as adapter
from schedopt.integrations.gavel_base import TimesharePolicy

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = (
    "max_min_fairness_perf:256,1024,2048",
    "finish_time_fairness_perf:2,4,8,32,256,1024,2048",
    "min_total_duration_perf:1024,2048",
    "max_min_fairness_packed:64,256",
)


def dicts(req: dict) -> tuple[dict, dict, dict, dict, dict, dict]:
    """Gavel's arguments: int keys for jobs, (a, b) tuples for pairs."""
    jobs = req["jobs"]
    tput = {int(j["id"]): dict(j["throughput"]) for j in jobs}
    for p in req.get("pairs", []):
        a, b = (int(x) for x in p["jobs"])
        tput[(a, b)] = {w: list(r) for w, r in p["throughput"].items()}
    sf = {int(j["id"]): int(j["scale_factor"]) for j in jobs}
    pw = {int(j["id"]): float(j["priority_weight"]) for j in jobs}
    steps = {int(j["id"]): float(j["num_steps_remaining"]) for j in jobs}
    since = {int(j["id"]): float(j["time_since_start"]) for j in jobs}
    return tput, sf, pw, steps, since, dict(req["worker_types"])


def ours(req: dict) -> tuple[float, float | None, str, float | None]:
    """One cold allocation: (seconds, objective in Gavel's terms, status, and for packing the
    seconds of ``schedopt.solve`` on the round as the adapter built it: a co-location table
    by job type, without Gavel's dict of every pair)."""
    tput, sf, pw, steps, since, spec = dicts(req)
    policy = req["policy"]
    started = time.perf_counter()
    if policy in ("max_min_fairness_perf", "max_min_fairness_packed"):
        engine: TimesharePolicy = adapter.MaxMinFairnessPerf()
        engine.get_allocation(tput, sf, pw, spec)  # type: ignore[attr-defined]
    elif policy == "max_min_fairness":
        engine = adapter.MaxMinFairness()
        engine.get_allocation(tput, sf, pw, spec)  # type: ignore[attr-defined]
    elif policy == "finish_time_fairness_perf":
        engine = adapter.FinishTimeFairness()
        engine.get_allocation(tput, sf, pw, since, steps, spec)  # type: ignore[attr-defined]
    else:
        engine = adapter.MinTotalDuration()
        engine.get_allocation(tput, sf, steps, spec)  # type: ignore[attr-defined]
    wall = time.perf_counter() - started
    result = engine.last_result
    if policy.startswith("finish_time"):
        value = result.metrics.get("max_finish_time_ratio")
    elif policy.startswith("min_total"):
        value = result.metrics.get("makespan_s")
    else:
        value = result.objectives[0]
    table_s = None
    if policy == "max_min_fairness_packed" and engine.last_instance is not None:
        started = time.perf_counter()
        schedopt.solve(engine.last_instance, "milp:highs")
        table_s = time.perf_counter() - started
    return wall, value, result.status.value, table_s


def theirs(req: dict, args) -> list[dict]:
    """One run of Gavel's own class on ``req``, in a child process."""
    cmd = [
        args.gavel_python,
        str(HERE / "gavel_reference.py"),
        "--gavel-dir",
        args.gavel_dir,
        "--repeat",
        "1",
        "--allocation",
        "none",
        "--timeout",
        str(args.timeout),
        "-",
    ]
    run = subprocess.run(
        cmd, input=json.dumps(req) + "\n", capture_output=True, text=True, check=False
    )
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), help="POLICY:N,N,...")
    ap.add_argument("--seed", type=int, default=2, help="Gavel's trial + 2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gavel-python", default=None, help="the reference venv's python")
    ap.add_argument("--gavel-dir", default="/tmp/gavel")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--throughputs", default=DEFAULT_THROUGHPUTS)
    ap.add_argument("--min-gpus", type=int, default=1, help="GPUs of each type at least")
    ap.add_argument("--elapsed", type=float, default=0.0, help="max time since start, s")
    args = ap.parse_args(argv)
    oracle = load_throughputs(args.throughputs)
    rows = []
    warm = make_request(oracle, "max_min_fairness_perf", 8, args.seed)
    ours(warm)  # imports and first-call set-up, once per process (not a policy's cost)
    for case in args.cases:
        policy, sizes = case.split(":")
        for n in (int(s) for s in sizes.split(",")):
            cluster = {w: max(args.min_gpus, n // 4) for w in WORKER_TYPES}
            req = make_request(
                oracle, policy, n, args.seed, cluster, max_time_since_start=args.elapsed
            )
            runs, ref_runs = [], []
            for _ in range(args.repeat):  # the two systems alternate, run by run
                runs.append(ours(req))
                if args.gavel_python:
                    ref_runs += theirs(req, args)
            row = {
                "policy": policy,
                "jobs": n,
                "pairs": len(req.get("pairs", [])),
                "elapsed_s": args.elapsed,
                "schedopt_s": statistics.median(r[0] for r in runs),
                "schedopt_objective": runs[0][1],
                "schedopt_status": runs[0][2],
                "load": os.getloadavg()[0],
            }
            if runs[0][3] is not None:
                row["schedopt_table_s"] = statistics.median(r[3] for r in runs)
            if args.gavel_python:
                ref = [r for r in ref_runs if r.get("status") == "ok"]
                if ref:
                    row["gavel_s"] = statistics.median(r["get_allocation_s"] for r in ref)
                    row["gavel_objective"] = ref[0]["objective"]
                    row["gavel_cvxpy_status"] = ref[0]["cvxpy_status"]
                    row["ratio"] = row["schedopt_s"] / row["gavel_s"]
                    a, b = row["schedopt_objective"], row["gavel_objective"]
                    if a is not None and b is not None:
                        row["objective_rel_diff"] = (a - b) / abs(b)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print_table(
        "schedopt vs Gavel (cvxpy + ECOS), median get_allocation seconds",
        rows,
        [
            "policy",
            "jobs",
            "pairs",
            "schedopt_s",
            "schedopt_table_s",
            "gavel_s",
            "ratio",
            "schedopt_objective",
            "gavel_objective",
            "objective_rel_diff",
            "gavel_cvxpy_status",
            "load",
        ],
    )
    append_rows("timeshare_vs_gavel", rows, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Policy-level tuning on a trace replay, and re-tuning as the workload drifts (AutoSched).

    python benchmarks/policy_tuning.py --trace philly-mix2 --start 5000 --windows 5 --size 100

Consecutive windows of --size jobs of the trace (../shared/data) are replayed lease round by
lease round on --hosts 8-GPU hosts, the heuristic deciding every round (schedopt.problems.
admission.policy). The heuristic is tuned on window 0 (one-time tuning) and, sliding, on each
window k-1 warm-started from window k-2's best point (schedopt.tuning.policy.sliding_retune).
Every window k >= 1 is then replayed with the defaults, the one-time parameters and the
sliding ones, none of which was tuned on it. Metrics: SLO deadline misses (lower is better),
then best-effort mean JCT.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from common import append_rows, print_table

from schedopt.core.registry import get_problem
from schedopt.problems.admission.policy import episodes
from schedopt.tuning.policy import sliding_retune

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trace", default="philly-mix2")
    ap.add_argument("--start", type=int, default=5000)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--size", type=int, default=100, help="jobs per window (100)")
    ap.add_argument("--hosts", type=int, default=2, help="8-GPU hosts (2)")
    ap.add_argument("--methods", default="heuristic:edf,heuristic:slack")
    ap.add_argument("--n-calls", type=int, default=12, help="points per tuning (12)")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no trace data at {args.data}; nothing to replay", file=sys.stderr)
        return 1
    spec = get_problem("admission")
    windows = [
        dataclasses.replace(e, hosts=args.hosts)
        for e in episodes(args.data, args.trace, args.start, args.windows, args.size)
    ]
    rows = []
    for method in args.methods.split(","):
        started = time.perf_counter()
        for w in sliding_retune(spec, method, windows, n_calls=args.n_calls):
            assert w.defaults and w.one_time and w.sliding
            rows.append(
                {
                    "method": method,
                    "window": w.window,
                    "misses_default": w.defaults[0],
                    "misses_one_time": w.one_time[0],
                    "misses_sliding": w.sliding[0],
                    "jct_default_s": w.defaults[1],
                    "jct_one_time_s": w.one_time[1],
                    "jct_sliding_s": w.sliding[1],
                    "hosts": args.hosts,
                    "n_calls": args.n_calls,
                }
            )
        print(f"{method}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print_table(
        f"{args.trace}: windows of {args.size} jobs on {8 * args.hosts} GPUs, held-out windows",
        rows,
        [
            "method",
            "window",
            "misses_default",
            "misses_one_time",
            "misses_sliding",
            "jct_default_s",
            "jct_one_time_s",
            "jct_sliding_s",
        ],
    )
    append_rows("policy_tuning", rows, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

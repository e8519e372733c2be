"""Policy-level tuning on a trace replay, and re-tuning as the workload drifts (AutoSched).

A thin caller of ``schedopt tune admission --replay TRACE --sliding`` (docs/tuning.md):

    python benchmarks/policy_tuning.py --trace philly-mix2 --start 5000 --windows 5 --size 100

runs

    schedopt tune admission --replay philly-mix2 --data ../shared/data --start 5000 \\
        --instances 1 --held-out 4 --episode-size 100 --episode-set hosts=2 --n-calls 12 \\
        --sliding --method heuristic:edf --method heuristic:slack

Consecutive windows of --size jobs of the trace are replayed lease round by lease round on
--hosts 8-GPU hosts, the heuristic deciding every round (schedopt.problems.admission.policy).
The heuristic is tuned on window 0 (one-time tuning) and, sliding, on each window k-1
warm-started from window k-2's best point (schedopt.tuning.policy.sliding_retune). Every window
k >= 1 is then replayed with the defaults, the one-time parameters and the sliding ones, none
of which was tuned on it. Metrics: SLO deadline misses (L1, lower is better), then best-effort
mean JCT (L2). The rows of the script this replaces are in benchmarks/results/policy_tuning.jsonl.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import tune

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def command(argv: list[str] | None = None) -> list[str]:
    """The ``schedopt tune`` arguments this script's arguments stand for."""
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
    out = ["admission", "--replay", args.trace, "--data", str(args.data)]
    out += ["--start", str(args.start), "--instances", "1", "--held-out", str(args.windows - 1)]
    out += ["--episode-size", str(args.size), "--episode-set", f"hosts={args.hosts}"]
    out += ["--n-calls", str(args.n_calls), "--sliding"]
    for method in args.methods.split(","):
        out += ["--method", method]
    return out


def main(argv: list[str] | None = None) -> int:
    return tune(command(argv))


if __name__ == "__main__":
    sys.exit(main())

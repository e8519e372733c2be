"""Tune the admission heuristics by Bayesian optimisation and check them on held-out instances.

A thin caller of ``schedopt tune`` (docs/tuning.md):

    python benchmarks/tune_admission.py              # tune on 6 instances, check on 10 others
    python benchmarks/tune_admission.py --save       # also update the shipped parameters

runs

    schedopt tune admission --suite admission-tune --held-out-suite admission-tune-held-out \\
        --method heuristic:edf --method heuristic:slack --n-calls 40 \\
        [--save schedopt/tuning/params/admission.json]

The suites are contested 64-GPU instances (200 jobs): seeds 100-105 to train on, seeds 0-9 held
out (schedopt/bench/suites/admission.py). --save is the maintainers' way to update the
parameters shipped with schedopt: it writes the source tree's
schedopt/tuning/params/admission.json (run it from a checkout), and only for a heuristic that
beats the defaults on the held-out suite. Users record their own with
``schedopt tune --save [PATH]``. Every other argument goes to ``schedopt tune`` (--executor,
--jobs, --checkpoint, --time-limit, ...). The rows of the script this replaces are in
benchmarks/results/tune_admission.jsonl.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script (python benchmarks/NAME.py), this folder is on sys.path already.
from common import tune

SHIPPED = Path(__file__).resolve().parents[1] / "schedopt" / "tuning" / "params" / "admission.json"


def command(argv: list[str] | None = None) -> list[str]:
    """The ``schedopt tune`` arguments this script's arguments stand for."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = ["admission", "--suite", "admission-tune", "--held-out-suite", "admission-tune-held-out"]
    out += ["--method", "heuristic:edf", "--method", "heuristic:slack"]
    if "--n-calls" not in args:
        out += ["--n-calls", "40"]
    if "--save" in args:
        args.remove("--save")
        out += ["--save", str(SHIPPED)]
    return [*out, *args]


def main(argv: list[str] | None = None) -> int:
    return tune(command(argv))


if __name__ == "__main__":
    sys.exit(main())

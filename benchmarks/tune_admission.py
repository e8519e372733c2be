"""Tune the admission heuristics by Bayesian optimisation and check them on held-out instances.

    python benchmarks/tune_admission.py              # tune on 6 instances, test on 10 others
    python benchmarks/tune_admission.py --save       # also update the shipped parameters

--save is the maintainers' way to update the parameters shipped with schedopt: it writes the
source tree's schedopt/tuning/params/admission.json (run it from a checkout, not an installed
copy). Users record their own with `schedopt tune --save [PATH]`.

Training instances are contended 64-GPU instances (200 jobs) with seeds 100–105; the held-out
ones use seeds 0–9, which the other benchmarks use too. Parameters are saved (--save) only for a
heuristic whose held-out mean guaranteed value improves on the defaults.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from common import append_rows, print_table

import schedopt
from schedopt.problems.admission import generate_custom
from schedopt.tuning import save_tuned, tune
from schedopt.tuning.store import shipped_path

HEURISTICS = ("heuristic:edf", "heuristic:slack")


def instances(seeds):
    return [generate_custom(hosts=8, jobs=200, slots=12, seed=s) for s in seeds]


def mean_value(method: str, insts, params) -> float:
    return statistics.fmean(schedopt.solve(i, method, params=params).objective for i in insts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n-calls", type=int, default=40, help="evaluations per heuristic (40)")
    ap.add_argument("--save", action="store_true", help="record improved parameters")
    args = ap.parse_args(argv)
    train, held_out = instances(range(100, 106)), instances(range(10))
    rows = []
    for method in HEURISTICS:
        result = tune(method, train, n_calls=args.n_calls, seed=0)
        default = mean_value(method, held_out, {})
        tuned = mean_value(method, held_out, result.params)
        row = {
            "method": method,
            "train_default": -result.default_score,
            "train_tuned": -result.score,
            "heldout_default_value": default,
            "heldout_tuned_value": tuned,
            "heldout_gain_pct": 100 * (tuned / default - 1),
            "params": result.params,
            "tune_s": result.seconds,
        }
        rows.append(row)
        if args.save and tuned > default:
            names = [f"200j-64gpu-s{s}" for s in range(100, 106)]
            save_tuned("admission", method, result.entry(names), shipped_path("admission"))
    print_table(
        "heuristic tuning (held-out: 10 contended 64-GPU instances)",
        rows,
        [
            "method",
            "train_default",
            "train_tuned",
            "heldout_default_value",
            "heldout_tuned_value",
            "heldout_gain_pct",
            "tune_s",
        ],
    )
    for row in rows:
        print(f"  {row['method']}: {row['params']}")
    print(f"appended to {append_rows('tune_admission', rows, argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
